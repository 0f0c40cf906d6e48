// An insertable script example (plain data, so the example lists stay free of React and can be checked by tests:
// components/code-editor/examples-compile.test.ts). The script field (script-field.tsx) lists them.
export interface ScriptExample {
  label: string;
  /** One line on what it does, under the label in the menu. */
  hint?: string;
  source: string;
}
