// CodeMirror 6 with a language mode (JavaScript built in; JSON, HTML, XML fetched on first use), history,
// search, bracket matching, autocompletion and, for scripts, syntax errors as you type (@codemirror/lint); the light or dark (one-dark) theme and the language follow their
// props through Compartments, without recreating the editor.
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { javascript } from "@codemirror/lang-javascript";
import { bracketMatching, defaultHighlightStyle, foldGutter, HighlightStyle, indentOnInput, syntaxHighlighting } from "@codemirror/language";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { Compartment, EditorState, Prec, type Extension } from "@codemirror/state";
import { oneDark } from "@codemirror/theme-one-dark";
import { linter, lintGutter, type Diagnostic } from "@codemirror/lint";
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { Text, useComputedColorScheme } from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import type { CodeEditorProps, CodeLanguage } from "./props";
import { describeProblem, scriptProblem, type ScriptRuntime } from "./script-syntax";

/** Syntax errors as you type (issue 30): the script checked as it will run, marked in the text and the gutter;
 *  `report` gets the problem (or null) for the line under the editor. */
function scriptLint(runtime: ScriptRuntime | undefined, report: (text: string | null) => void): Extension {
  if (!runtime) return [];
  return [
    lintGutter(),
    linter(
      (view): Diagnostic[] => {
        const doc = view.state.doc.toString();
        const p = scriptProblem(doc, runtime);
        report(p ? describeProblem(p) : null);
        if (!p) return [];
        const from = Math.min(p.offset, doc.length);
        // one character wide (none past the end of the text)
        const to = Math.min(doc.length, from + 1);
        return [{ from, to, severity: "error", message: `${describeProblem(p)}. It can be saved, but it fails every run until fixed.` }];
      },
      { delay: 300 },
    ),
  ];
}

/** The mode of a language; the ones besides JavaScript are separate chunks, loaded when first asked for. */
async function languageSupport(language: CodeLanguage): Promise<Extension> {
  switch (language) {
    case "javascript":
      return javascript();
    case "json":
      return (await import("@codemirror/lang-json")).json();
    case "html":
      return (await import("@codemirror/lang-html")).html();
    case "xml":
      return (await import("@codemirror/lang-xml")).xml();
    default:
      return [];
  }
}

// one-dark's comment and gutter grey (#7d8799) and coral (#e06c75) are under 4.5:1 on its background; lighter
// tones pass. Also used by the diff view (components/diff-view), so both look alike.
export const darkTheme = [
  oneDark,
  Prec.highest(EditorView.theme({ ".cm-gutters": { color: "#a3acbd" } }, { dark: true })),
  Prec.high(
    syntaxHighlighting(
      HighlightStyle.define([
        { tag: tags.comment, color: "#a3acbd", fontStyle: "italic" },
        // one-dark's keyword violet (#c678dd) is 4.43:1 on the focused editor's active-line background.
        { tag: tags.keyword, color: "#d38fe8" },
        { tag: [tags.name, tags.deleted, tags.character, tags.propertyName, tags.macroName], color: "#f08c94" },
        // one-dark's stone (#7d8799) for meta and links is 4.1:1.
        { tag: [tags.meta, tags.link], color: "#a3acbd" },
      ]),
    ),
  ),
];

// The default (light) style's escape/regexp orange (#e40) is 3.84:1 on white (a JSON string with \n in it), its
// invalid red (#f00) 4.0:1 and its type green (#085) under 4.5:1 on the active line and diff tints: darker tones.
// Also used by the diff view.
export const lightTheme = [
  Prec.high(
    syntaxHighlighting(
      HighlightStyle.define([
        { tag: [tags.regexp, tags.escape, tags.special(tags.string)], color: "#b03000" },
        { tag: tags.invalid, color: "#c00000" },
        { tag: [tags.typeName, tags.namespace], color: "#006b43" },
      ]),
    ),
  ),
];

export default function CodeMirrorEditor({
  value,
  onChange,
  labelledBy,
  minHeight = 320,
  readOnly = false,
  language = "javascript",
  lint,
}: CodeEditorProps & { labelledBy: string }) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const theme = useRef(new Compartment());
  const lang = useRef(new Compartment());
  const lintConf = useRef(new Compartment());
  const [problem, setProblem] = useState<string | null>(null);
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
          lang.current.of(language === "javascript" ? javascript() : []),
          lintConf.current.of(scriptLint(lint, setProblem)),
          // No horizontal scrolling region (a long line would need one, unreachable by keyboard: axe
          // scrollable-region-focusable); lines wrap instead.
          EditorView.lineWrapping,
          EditorState.readOnly.of(readOnly),
          EditorView.contentAttributes.of({ "aria-labelledby": labelledBy, "aria-multiline": "true", role: "textbox" }),
          EditorView.theme({
            "&": { minHeight: `${minHeight}px`, fontSize: "13px" },
            ".cm-scroller": { fontFamily: "var(--mantine-font-family-monospace)" },
          }),
          theme.current.of(scheme === "dark" ? darkTheme : lightTheme),
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
    view.current?.dispatch({ effects: theme.current.reconfigure(scheme === "dark" ? darkTheme : lightTheme) });
  }, [scheme]);

  useEffect(() => {
    if (!lint) setProblem(null);
    view.current?.dispatch({ effects: lintConf.current.reconfigure(scriptLint(lint, setProblem)) });
  }, [lint]);

  useEffect(() => {
    let current = true;
    void languageSupport(language).then((ext) => {
      if (current) view.current?.dispatch({ effects: lang.current.reconfigure(ext) });
    });
    return () => {
      current = false;
    };
  }, [language]);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  return (
    <>
      <div ref={host} data-testid="code-editor" />
      {lint && (
        // the problem in words too (the gutter mark and tooltip need a mouse); announced politely as it changes
        <Text
          size="xs"
          px="xs"
          py={4}
          c={problem ? "var(--mantine-color-error)" : "dimmed"}
          role="status"
          data-testid="syntax-status"
          style={{ borderTop: "1px solid var(--mantine-color-default-border)" }}
        >
          {problem ?? "No syntax errors."}
        </Text>
      )}
    </>
  );
}
