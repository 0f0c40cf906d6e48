// CodeMirror 6 with JavaScript mode, history, search, bracket matching and autocompletion; the light or dark
// (one-dark) theme follows the UI's colour scheme through a Compartment, without recreating the editor.
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { javascript } from "@codemirror/lang-javascript";
import { bracketMatching, defaultHighlightStyle, foldGutter, HighlightStyle, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { Compartment, EditorState, Prec } from "@codemirror/state";
import { oneDark } from "@codemirror/theme-one-dark";
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { useComputedColorScheme } from "@mantine/core";
import { useEffect, useRef } from "react";
import type { CodeEditorProps } from "./code-editor";

// one-dark's comment grey (#7d8799) and coral (#e06c75) are under 4.5:1 on its background; lighter tones pass.
// Also used by the diff view (components/diff-view), so both look alike.
export const darkTheme = [
  oneDark,
  Prec.high(
    syntaxHighlighting(
      HighlightStyle.define([
        { tag: tags.comment, color: "#a3acbd", fontStyle: "italic" },
        // one-dark's keyword violet (#c678dd) is 4.43:1 on the focused editor's active-line background.
        { tag: tags.keyword, color: "#d38fe8" },
        { tag: [tags.name, tags.deleted, tags.character, tags.propertyName, tags.macroName], color: "#f08c94" },
      ]),
    ),
  ),
];

export default function CodeMirrorEditor({ value, onChange, labelledBy, minHeight = 320, readOnly = false }: CodeEditorProps & { labelledBy: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const theme = useRef(new Compartment());
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const scheme = useComputedColorScheme("light");

  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          foldGutter(),
          history(),
          drawSelection(),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          autocompletion(),
          highlightActiveLine(),
          highlightSelectionMatches(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          // Tab indents; Escape then Tab leaves the editor (CodeMirror's keyboard escape hatch).
          keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, ...completionKeymap, indentWithTab]),
          javascript(),
          // No horizontal scrolling region (a long line would need one, unreachable by keyboard: axe
          // scrollable-region-focusable); lines wrap instead.
          EditorView.lineWrapping,
          EditorState.readOnly.of(readOnly),
          EditorView.contentAttributes.of({ "aria-labelledby": labelledBy, "aria-multiline": "true", role: "textbox" }),
          EditorView.theme({ "&": { minHeight: `${minHeight}px`, fontSize: "13px" }, ".cm-scroller": { fontFamily: "var(--mantine-font-family-monospace)" } }),
          theme.current.of(scheme === "dark" ? darkTheme : []),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) onChangeRef.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => v.destroy();
    // The editor is created once; value changes from outside are synced below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    view.current?.dispatch({ effects: theme.current.reconfigure(scheme === "dark" ? darkTheme : []) });
  }, [scheme]);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return <div ref={host} data-testid="code-editor" />;
}
