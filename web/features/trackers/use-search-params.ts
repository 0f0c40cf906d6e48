// One query-string parameter as page state (tabs, the compared revisions, the diff mode), so every view of a tracker
// is linkable and survives a reload. Setting one keeps the others; the default value is left out of the URL.
import { useLocation, useSearch } from "wouter";

export function useSearchParams(): [URLSearchParams, (patch: Record<string, string | undefined>, opts?: { replace?: boolean }) => void] {
  const search = useSearch();
  const [location, navigate] = useLocation();
  const params = new URLSearchParams(search);
  const set = (patch: Record<string, string | undefined>, opts: { replace?: boolean } = {}) => {
    const next = new URLSearchParams(search);
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined || v === "") next.delete(k);
      else next.set(k, v);
    }
    const text = next.toString();
    navigate(location + (text ? `?${text}` : ""), { replace: opts.replace ?? true });
  };
  return [params, set];
}
