// The code editor, loaded on demand: CodeMirror (~150 KiB gz) is a separate chunk fetched only when a page shows
// an editor, so the first load stays small. A plain textarea stands in while it loads. `language` picks the mode
// (JavaScript by default; JSON, HTML and XML load as their own small chunks when first used; "text" = none);
// `lint` marks a script's syntax errors as you type (the parser, acorn, is in the lazy chunk too).
import { Box, Input, Textarea } from "@mantine/core";
import { lazy, Suspense, useId } from "react";
import type { CodeEditorProps, CodeLanguage } from "./props";

export type { CodeEditorProps, CodeLanguage };

const CodeMirrorEditor = lazy(() => import("./code-mirror"));

export function CodeEditor(props: CodeEditorProps) {
  const id = useId();
  const fallback = (
    <Textarea
      aria-label={props.label}
      value={props.value}
      onChange={(e) => props.onChange(e.currentTarget.value)}
      autosize
      minRows={12}
      styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
    />
  );
  return (
    <Input.Wrapper
      label={props.label}
      description={props.description}
      error={props.error}
      id={`${id}-wrapper`}
      labelProps={{ id: `${id}-label`, htmlFor: undefined, component: "div" } as never}
    >
      <Box mt={4} style={{ border: "1px solid var(--mantine-color-default-border)", borderRadius: 4, overflow: "hidden" }}>
        <Suspense fallback={fallback}>
          <CodeMirrorEditor {...props} labelledBy={`${id}-label`} />
        </Suspense>
      </Box>
    </Input.Wrapper>
  );
}
