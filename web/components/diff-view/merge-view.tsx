// The lazily loaded half of diff-view.tsx: CodeMirror's MergeView (side by side) or unifiedMergeView (inline),
// read-only, following the UI's colour scheme. Recreated when the texts or the mode change (cheap: both are
// read-only documents of at most a few MiB).
import { javascript } from "@codemirror/lang-javascript";
import { defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { MergeView, unifiedMergeView } from "@codemirror/merge";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView, lineNumbers } from "@codemirror/view";
import { useComputedColorScheme } from "@mantine/core";
import { useEffect, useRef } from "react";
import { darkTheme, lightTheme } from "../code-editor/code-mirror";
import type { DiffViewProps } from "./props";

const COLLAPSE = { margin: 3, minSize: 6 };

// The merge package's change colours are 8%-alpha tints, hard to see; these are clearer and keep every token colour
// at AA contrast in both schemes (chosen per scheme: the editor is rebuilt when the scheme changes). In dark, the
// changed words are underlined on the line's tint: a brighter tint behind them dropped the text to 3.7:1.
const changeColours = (dark: boolean) =>
  EditorView.theme({
    "&.cm-merge-a .cm-changedLine, .cm-deletedChunk": { backgroundColor: dark ? "#3f2326" : "#fdecec" },
    "&.cm-merge-b .cm-changedLine, .cm-inlineChangedLine": { backgroundColor: dark ? "#1f3a2a" : "#e6f6ea" },
    "&.cm-merge-a .cm-changedText, .cm-deletedChunk .cm-deletedText": dark
      ? { background: "linear-gradient(#f08c94, #f08c94) bottom / 100% 2px no-repeat", backgroundColor: "#3f2326" }
      : { background: "#fbdada" },
    "&.cm-merge-b .cm-changedText, .cm-inlineChangedLine .cm-changedText": dark
      ? { background: "linear-gradient(#7fd49a, #7fd49a) bottom / 100% 2px no-repeat", backgroundColor: "#1f3a2a" }
      : { background: "#cdeed5" },
    ".cm-collapsedLines": { color: dark ? "#ddd" : "#333" },
  });

export default function MergeViewImpl({ original, modified, mode, language = "text", originalLabel, modifiedLabel, maxHeight = 560 }: DiffViewProps) {
  const host = useRef<HTMLDivElement>(null);
  const scheme = useComputedColorScheme("light");

  useEffect(() => {
    const parent = host.current!;
    const base = (label: string): Extension[] => [
      lineNumbers(),
      EditorState.readOnly.of(true),
      EditorView.lineWrapping,
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      ...(language === "text" ? [] : [javascript()]),
      EditorView.contentAttributes.of({ "aria-label": label, "aria-readonly": "true", "aria-multiline": "true", role: "textbox" }),
      EditorView.theme({ "&": { fontSize: "13px" }, ".cm-scroller": { fontFamily: "var(--mantine-font-family-monospace)" } }),
      changeColours(scheme === "dark"),
      scheme === "dark" ? darkTheme : lightTheme,
    ];
    if (mode === "split") {
      const view = new MergeView({
        a: { doc: original, extensions: base(`Older: ${originalLabel}`) },
        b: { doc: modified, extensions: base(`Newer: ${modifiedLabel}`) },
        parent,
        gutter: true,
        collapseUnchanged: COLLAPSE,
      });
      return () => view.destroy();
    }
    const view = new EditorView({
      parent,
      state: EditorState.create({
        doc: modified,
        extensions: [
          ...base(`Changes from ${originalLabel} to ${modifiedLabel}`),
          unifiedMergeView({ original, mergeControls: false, gutter: true, collapseUnchanged: COLLAPSE }),
        ],
      }),
    });
    return () => view.destroy();
  }, [original, modified, mode, language, originalLabel, modifiedLabel, scheme]);

  return (
    <div
      ref={host}
      // Scrolls when taller than maxHeight; focusable so that keyboard users can scroll it too.
      tabIndex={0}
      role="region"
      aria-label={mode === "split" ? "Side-by-side diff" : "Inline diff"}
      style={{ maxHeight, overflow: "auto", border: "1px solid var(--mantine-color-default-border)", borderRadius: 4 }}
    />
  );
}
