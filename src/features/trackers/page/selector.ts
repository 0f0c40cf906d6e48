// A page tracker's wait-for selector, checked when the tracker is saved (issue 30: a selector that no run can use is
// a 400 naming it, not a failure on every run). The run checks it again in the page itself (navigation.ts,
// querySelector in Chromium), so this check must never refuse what Chromium accepts; it refuses what it can prove
// Chromium refuses, and leaves the rest to the run.
//
// Two libraries do the work: css-tree's tokenizer (CSS Syntax Level 3, the tokenizer Chromium implements) and
// css-selector-parser (the Selectors Level 4 grammar). Between them sit the tokenizer-level rules querySelector
// applies before the grammar: comments are dropped; blocks and a string still open at the end are closed (so
// `div[a` and `:not(.a` are valid, as in Chromium); a `)` or `]` that closes nothing (or the wrong block) is an error;
// the arguments of `:is()` and `:where()` are forgiving (Chromium drops their invalid parts, so anything goes).
// After the grammar: a namespace prefix other than `*` or none is an error (querySelector has no @namespace), and so
// is an attribute flag other than `i`.
//
// Measured against Chromium 156 on the corpus of selector.test.ts: nothing Chromium accepts is refused. Still
// accepted although Chromium refuses: unknown pseudo-class and pseudo-element names (`p:hoverr`), argument types of
// pseudo-classes (`:lang("en")`), pseudo-elements where they cannot be (`p::before:hover`), and a comment between two
// names (`div/**/p`); the run then fails with "Invalid selector: …".
import { createParser, type AstRule, type AstSelector } from "css-selector-parser";
import { tokenize, tokenTypes as T } from "css-tree/tokenizer";

// Any name of pseudo-class or pseudo-element is accepted ("progressive"): the run judges those. Not strict: `--x` is
// a valid name.
const parse = createParser({ syntax: "progressive", strict: false });

/** Functions whose argument is a forgiving selector list (Selectors Level 4): invalid parts are dropped, not errors. */
const FORGIVING = new Set(["is(", "where("]);
const CLOSER: Record<number, string> = { [T.Function]: ")", [T.LeftParenthesis]: ")", [T.LeftSquareBracket]: "]", [T.LeftCurlyBracket]: "}" };
const CLOSES: Record<number, string> = { [T.RightParenthesis]: ")", [T.RightSquareBracket]: "]", [T.RightCurlyBracket]: "}" };

/** Why `selector` is not a selector querySelector accepts, or null when it may be (see the file's header). */
export function selectorProblem(selector: string): string | null {
  const tokens: { type: number; text: string }[] = [];
  tokenize(selector, (type, start, end) => tokens.push({ type, text: selector.slice(start, end) }));
  let text = "";
  const open: string[] = [];
  let lastString: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const { type, text: t } = tokens[i]!;
    lastString = type === T.String ? t : undefined;
    if (type === T.Comment) continue;
    if (type === T.BadString) return "a string must end on the line it starts";
    if (type === T.BadUrl) return "malformed url()";
    if (type === T.Delim && t === "\\") {
      // A backslash at the very end escapes the end of input (U+FFFD, as Chromium reads it); before a newline it is an error.
      if (i !== tokens.length - 1) return "a backslash cannot escape a line break";
      text += "\\fffd ";
      continue;
    }
    if (type in CLOSES) {
      if (open.pop() !== CLOSES[type]) return `${t} closes nothing`;
    } else if (type === T.Function && FORGIVING.has(t.toLowerCase()) && tokens[i - 1]?.type === T.Colon) {
      // `:is(…)` / `:where(…)`: skip to the matching `)` (or the end); any argument is fine.
      let depth = 1;
      while (depth > 0 && ++i < tokens.length) {
        const inner = tokens[i]!.type;
        if (inner in CLOSER) depth++;
        else if (inner in CLOSES) depth--;
      }
      text += `${t}*)`;
      continue;
    } else if (type in CLOSER) open.push(CLOSER[type]!);
    text += t;
  }
  // A string open at the end is closed, then every block still open (CSS closes them at the end of input).
  if (lastString !== undefined && !closedString(lastString)) text += lastString[0];
  text += open.reverse().join("");

  let ast: AstSelector;
  try {
    ast = parse(text);
  } catch (err) {
    return (err as Error).message
      .replace(/^css-selector-parser parse error: /, "")
      .replace(/\s*Pos: \d+\.?$/, "")
      .replace(/\.$/, "");
  }
  return astProblem(ast);
}

/** True when a string token ends with its own (unescaped) quote. */
function closedString(s: string): boolean {
  for (let i = 1; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === s[0]) return true;
  }
  return false;
}

/**
 * What the grammar lets through but querySelector refuses: a namespace prefix other than `*|` or `|` (it declares
 * no namespace), and an attribute flag other than `i` (Chromium 156 refuses `s`).
 */
function astProblem(node: AstSelector): string | null {
  for (const rule of node.rules) {
    for (let r: AstRule | undefined = rule; r; r = r.nestedRule) {
      for (const item of r.items) {
        if ((item.type === "TagName" || item.type === "WildcardTag" || item.type === "Attribute") && item.namespace?.type === "NamespaceName")
          return `undeclared namespace prefix ${item.namespace.name}|`;
        if (item.type === "Attribute" && item.caseSensitivityModifier !== undefined && item.caseSensitivityModifier.toLowerCase() !== "i")
          return `attribute flag ${item.caseSensitivityModifier} is not supported (only i)`;
        if ((item.type === "PseudoClass" || item.type === "PseudoElement") && item.argument?.type === "Selector") {
          const inner = astProblem(item.argument);
          if (inner) return inner;
        }
      }
    }
  }
  return null;
}
