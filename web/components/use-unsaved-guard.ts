// "Leaving a form with unsaved changes asks first": a form calls useUnsavedGuard(dirty). While any registered form
// is dirty, an in-app navigation to another page (links, navigate()) opens a confirmation first, and closing or
// reloading the tab triggers the browser's own prompt (beforeunload). Changes of the query string on the same
// page (paging, a dialog's ?edit=…) are not held back: dialogs confirm their own closing (confirmDiscard).
import { modals } from "@mantine/modals";
import { useCallback, useEffect, useRef } from "react";
import { navigate as browserNavigate, useBrowserLocation } from "wouter/use-browser-location";

const dirtyForms = new Set<object>();

export function confirmDiscard(onDiscard: () => void) {
  modals.openConfirmModal({
    title: "Discard unsaved changes?",
    children: "Your changes have not been saved. Leave without saving them?",
    labels: { confirm: "Discard changes", cancel: "Keep editing" },
    confirmProps: { color: "red" },
    closeButtonProps: { "aria-label": "Close" },
    onConfirm: onDiscard,
  });
}

export function useUnsavedGuard(dirty: boolean) {
  const token = useRef({}).current;
  useEffect(() => {
    if (!dirty) return;
    dirtyForms.add(token);
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => {
      dirtyForms.delete(token);
      window.removeEventListener("beforeunload", onBeforeUnload);
    };
  }, [dirty, token]);
}

type Navigate = typeof browserNavigate;

/** The router's location hook: the browser's, with navigations to another page held back while a form is dirty. */
export function useGuardedLocation(): [string, Navigate] {
  const [location] = useBrowserLocation();
  const navigate = useCallback<Navigate>((to, options) => {
    const target = new URL(String(to), window.location.href);
    if (dirtyForms.size === 0 || target.pathname === window.location.pathname) return browserNavigate(to, options);
    confirmDiscard(() => {
      dirtyForms.clear();
      browserNavigate(to, options);
    });
  }, []);
  return [location, navigate];
}

/** Navigates after the form's changes were saved or deliberately dropped (no confirmation). */
export function navigateSaved(to: string, options?: { replace?: boolean }) {
  dirtyForms.clear();
  browserNavigate(to, options);
}
