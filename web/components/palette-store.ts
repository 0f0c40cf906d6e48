// Whether the search palette is open, and the text it opens with: a tiny store shared by the header box, the
// keyboard shortcuts and the list pages' "Search everywhere for …" (none of them own the palette).
import { useSyncExternalStore } from "react";

export interface PaletteState {
  opened: boolean;
  /** The text the palette starts with (changes on each open). */
  query: string;
  /** Counts opens, so the palette resets its text on each one. */
  seq: number;
}

let state: PaletteState = { opened: false, query: "", seq: 0 };
const listeners = new Set<() => void>();
const set = (next: PaletteState) => {
  state = next;
  for (const l of listeners) l();
};

export const openPalette = (query = "") => set({ opened: true, query, seq: state.seq + 1 });
export const closePalette = () => set({ ...state, opened: false });

export function usePalette(): PaletteState {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => state,
  );
}
