// Query-string parameters of the current page as state, so a view is linkable and survives a reload: a dialog
// opened from a page (?fetch=1, ?export=<id>), a tab, a selected row, the compared revisions. Setting some keeps the
// others; an absent, null or empty value is left out of the URL. The setter reads the URL when it is called (not
// the one of the last render) and is stable, so effects may depend on it.
import { useCallback } from "react";
import { useLocation, useSearch } from "wouter";

type Patch = Record<string, string | null | undefined>;

/** Every parameter, and a setter for some of them; it replaces the history entry unless `replace: false`. */
export function useSearchParams(): [URLSearchParams, (patch: Patch, opts?: { replace?: boolean }) => void] {
  const search = useSearch();
  const [location, navigate] = useLocation();
  const set = useCallback(
    (patch: Patch, opts: { replace?: boolean } = {}) => {
      const next = new URLSearchParams(window.location.search);
      for (const [k, v] of Object.entries(patch)) {
        if (v === undefined || v === null || v === "") next.delete(k);
        else next.set(k, v);
      }
      const text = next.toString();
      navigate(location + (text ? `?${text}` : ""), { replace: opts.replace ?? true });
    },
    [location, navigate],
  );
  return [new URLSearchParams(search), set];
}

/**
 * One parameter. By default it keeps a dialog's state: opening pushes a history entry (Back closes it), closing
 * replaces it. `history: "replace"` always replaces (a tab or a selected row: Back leaves the page, not the last
 * row clicked).
 */
export function useSearchParam(name: string, { history }: { history?: "replace" } = {}): [string | null, (value: string | null) => void] {
  const [params, setParams] = useSearchParams();
  const set = useCallback(
    (value: string | null) => setParams({ [name]: value }, { replace: history === "replace" || value === null }),
    [setParams, name, history],
  );
  return [params.get(name), set];
}
