// One query parameter of the current page as state (e.g. ?fetch=1, ?export=<id>): dialogs opened from a page keep
// their state in the URL, so they survive a reload and can be linked to. Other parameters (list state) are kept.
import { useLocation, useSearch } from "wouter";

export function useSearchParam(name: string): [string | null, (value: string | null) => void] {
  const search = useSearch();
  const [location, navigate] = useLocation();
  const value = new URLSearchParams(search).get(name);
  const set = (next: string | null) => {
    const p = new URLSearchParams(search);
    if (next === null) p.delete(name);
    else p.set(name, next);
    const text = p.toString();
    // Opening pushes a history entry (Back closes it); closing replaces it.
    navigate(location + (text ? `?${text}` : ""), { replace: next === null });
  };
  return [value, set];
}
