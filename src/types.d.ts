declare module "*.sql" {
  const text: string;
  export default text;
}

/** css-tree's CSS Syntax Level 3 tokenizer (the package ships no types); only what features/trackers/page/selector.ts uses. */
declare module "css-tree/tokenizer" {
  export function tokenize(source: string, onToken: (type: number, start: number, end: number) => void): void;
  export const tokenTypes: Record<
    | "EOF"
    | "Ident"
    | "Function"
    | "AtKeyword"
    | "Hash"
    | "String"
    | "BadString"
    | "Url"
    | "BadUrl"
    | "Delim"
    | "Number"
    | "Percentage"
    | "Dimension"
    | "WhiteSpace"
    | "CDO"
    | "CDC"
    | "Colon"
    | "Semicolon"
    | "Comma"
    | "LeftSquareBracket"
    | "RightSquareBracket"
    | "LeftParenthesis"
    | "RightParenthesis"
    | "LeftCurlyBracket"
    | "RightCurlyBracket"
    | "Comment",
    number
  >;
}
