// The code editor's props: the editor (code-editor.tsx) and its lazily loaded CodeMirror part (code-mirror.tsx) both
// take them.
import type { ScriptRuntime } from "./script-syntax";

export type CodeLanguage = "javascript" | "json" | "html" | "xml" | "text";

export interface CodeEditorProps {
  value: string;
  onChange: (value: string) => void;
  /** Accessible name of the editing area. */
  label: string;
  description?: React.ReactNode;
  error?: React.ReactNode;
  minHeight?: number;
  readOnly?: boolean;
  language?: CodeLanguage;
  /** A script: marks syntax errors as you type, checked as it will run (script-syntax.ts; a lint gutter). */
  lint?: ScriptRuntime;
}
