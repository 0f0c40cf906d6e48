// The diff view's props: the view (diff-view.tsx) and its lazily loaded merge view (merge-view.tsx) both take them.

export type DiffMode = "split" | "unified";

export interface DiffViewProps {
  original: string;
  modified: string;
  mode: DiffMode;
  /** "json" (and "javascript") get highlighting; "text" none. */
  language?: "json" | "javascript" | "text";
  /** What each side is, e.g. "Revision of 3 Jan 2026, 10:17"; also the editors' accessible names. */
  originalLabel: string;
  modifiedLabel: string;
  /** Height limit in px before the view scrolls. */
  maxHeight?: number;
}
