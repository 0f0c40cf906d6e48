// Where keyboard focus goes when the page changes under it (issue 30, keyboard users):
// - after a route change, to the new page's heading (`main h1`, focusable with tabindex=-1), unless the new page
//   already put focus inside itself (a field it focuses on purpose);
// - after a dialog closes, back to what had focus before it opened (the button that opened it, or, when that is
//   gone, e.g. a menu item, the last element still on the page: the menu's button), when nothing else took it.
// Without these, focus fell to <body> and a keyboard user started again from the top of the page.
import { useEffect, useRef } from "react";

/** The page's main region: the skip link's target and the fallback of route changes. */
export const MAIN_ID = "main";

function focusHeading(main: HTMLElement): boolean {
  const heading = main.querySelector<HTMLElement>("h1");
  if (!heading) return false;
  if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
  heading.dataset.routeFocus = "";
  heading.focus({ preventScroll: true });
  return true;
}

/** Moves focus to the main region's heading (the skip link's action, too). */
export function focusMain() {
  const main = document.getElementById(MAIN_ID);
  if (main && !focusHeading(main)) main.focus({ preventScroll: true });
}

/** After `pathname` changes (not on the first render): focus the new page's heading once it is rendered. */
export function useFocusOnRouteChange(pathname: string) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const started = performance.now();
    let frame = 0;
    const attempt = () => {
      const main = document.getElementById(MAIN_ID);
      if (!main) return;
      const active = document.activeElement;
      // The new page focused something of its own: leave it there.
      if (active && active !== document.body && main.contains(active) && !active.hasAttribute("data-route-focus")) return;
      if (focusHeading(main)) return;
      // Still loading (a lazy page, its data): wait for the heading, at most 5 s, then the region itself.
      if (performance.now() - started < 5000) frame = requestAnimationFrame(attempt);
      else main.focus({ preventScroll: true });
    };
    frame = requestAnimationFrame(attempt);
    return () => cancelAnimationFrame(frame);
  }, [pathname]);
}

const DIALOG = "[role=dialog], [role=alertdialog]";
const isDialogNode = (n: Node) => n instanceof Element && (n.matches(DIALOG) || n.querySelector(DIALOG) !== null);

/** Returns focus to where it was before a dialog when the dialog's closing left it on <body>. Mount once. */
export function useDialogFocusReturn() {
  useEffect(() => {
    // Recently focused elements outside dialogs, newest last.
    const recent: HTMLElement[] = [];
    const onFocusIn = (e: FocusEvent) => {
      const t = e.target;
      if (!(t instanceof HTMLElement) || t.closest(DIALOG) || t.hasAttribute("data-route-focus")) return;
      const i = recent.indexOf(t);
      if (i >= 0) recent.splice(i, 1);
      recent.push(t);
      if (recent.length > 20) recent.shift();
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const restore = () => {
      const active = document.activeElement;
      if (active && active !== document.body && active.isConnected) return;
      if (document.querySelector(DIALOG)) return; // another dialog is open (it holds focus itself)
      for (let i = recent.length - 1; i >= 0; i--) {
        const el = recent[i]!;
        if (el.isConnected && el.getClientRects().length > 0) {
          el.focus({ preventScroll: true });
          if (document.activeElement === el) return;
        }
      }
    };
    const observer = new MutationObserver((records) => {
      if (!records.some((r) => [...r.removedNodes].some(isDialogNode))) return;
      // After the dialog's own focus return (Mantine's comes 10 ms after closing) had its chance.
      clearTimeout(timer);
      timer = setTimeout(restore, 60);
    });
    document.addEventListener("focusin", onFocusIn, true);
    observer.observe(document.body, { childList: true, subtree: true });
    return () => {
      document.removeEventListener("focusin", onFocusIn, true);
      observer.disconnect();
      clearTimeout(timer);
    };
  }, []);
}
