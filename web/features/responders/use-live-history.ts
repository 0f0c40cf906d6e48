// A responder's request history, live: the newest records first, then a poll about once a second (while the tab is
// visible and not paused) for the records newer than the newest one shown (`_history?after=<id>&limit=…`). The cost
// per open page is bounded: one request in flight at a time, an empty answer when nothing arrived, at most
// POLL_LIMIT records per answer. Under a flood (more than POLL_LIMIT new records between two polls) the list
// restarts from the newest ones. The list holds at most min(requestsToTrack, MAX_SHOWN) records, as the server
// keeps only the newest requestsToTrack; "load older" pages back through what the server still has. A failed poll
// is retried with backoff (2, 4, 8 s, at most 10 s) and the error is shown. Coming back to a hidden tab reloads.
import { useCallback, useEffect, useRef, useState } from "react";
import { respondersApi, type TrackedRecord } from "./responders-api";

export const FIRST_PAGE = 50;
export const POLL_LIMIT = 200;
export const OLDER_PAGE = 100;
export const MAX_SHOWN = 500;
const INTERVAL_MS = 1000;

export interface LiveHistory {
  records: TrackedRecord[];
  loaded: boolean;
  /** The last poll's error (cleared by the next success). */
  error: unknown;
  /** The server may have older records than the oldest shown. */
  hasOlder: boolean;
  loadingOlder: boolean;
  paused: boolean;
  setPaused: (p: boolean) => void;
  loadOlder: () => void;
  /** Forget what is shown and load again (after clearing the history). */
  reset: () => void;
  /** Ask now instead of at the next tick (after "Try it"). */
  pollNow: () => void;
}

export function useLiveHistory(responderId: string, requestsToTrack: number): LiveHistory {
  const cap = Math.max(0, Math.min(requestsToTrack, MAX_SHOWN));
  const [records, setRecords] = useState<TrackedRecord[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [hasOlder, setHasOlder] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [paused, setPaused] = useState(false);
  const recordsRef = useRef<TrackedRecord[]>([]);
  const pausedRef = useRef(false);
  pausedRef.current = paused;
  const wake = useRef<() => void>(() => {});
  const generation = useRef(0);

  const publish = useCallback(
    (next: TrackedRecord[]) => {
      const kept = next.length > cap ? next.slice(0, cap) : next;
      recordsRef.current = kept;
      setRecords(kept);
    },
    [cap],
  );

  useEffect(() => {
    if (cap === 0) {
      publish([]);
      setLoaded(true);
      return;
    }
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // One poll at a time: a wake-up during a poll asks for another one right after it.
    let polling = false;
    let again = false;
    let failures = 0;
    const ctrl = new AbortController();
    const schedule = (ms: number) => {
      clearTimeout(timer);
      if (polling) again = again || ms === 0;
      else timer = setTimeout(tick, ms);
    };
    async function tick() {
      if (stopped) return;
      if (document.hidden || pausedRef.current) return schedule(INTERVAL_MS);
      polling = true;
      again = false;
      const next = await poll();
      polling = false;
      if (!stopped) schedule(again ? 0 : next);
    }
    /** One request; the delay before the next. */
    async function poll(): Promise<number> {
      const gen = generation.current;
      const newest = recordsRef.current[0]?.id;
      try {
        const got = await respondersApi.history(responderId, newest ? { after: newest, limit: POLL_LIMIT } : { limit: FIRST_PAGE }, ctrl.signal);
        if (stopped || gen !== generation.current) return 0;
        if (!newest) {
          publish(got);
          setHasOlder(got.length === FIRST_PAGE);
        } else if (got.length >= POLL_LIMIT) {
          publish(got);
          setHasOlder(true);
        } else if (got.length > 0) {
          const fresh = got.filter((r) => r.id > newest);
          const next = [...fresh, ...recordsRef.current];
          if (next.length > cap) setHasOlder(false);
          publish(next);
        }
        setLoaded(true);
        setError(null);
        failures = 0;
        return INTERVAL_MS;
      } catch (err) {
        if (stopped) return 0;
        failures++;
        setError(err);
        setLoaded(true);
        return Math.min(10_000, 1000 * 2 ** failures);
      }
    }
    wake.current = () => schedule(0);
    const onVisible = () => {
      if (document.hidden) return;
      generation.current++;
      recordsRef.current = [];
      schedule(0);
    };
    document.addEventListener("visibilitychange", onVisible);
    schedule(0);
    return () => {
      stopped = true;
      clearTimeout(timer);
      ctrl.abort();
      document.removeEventListener("visibilitychange", onVisible);
      wake.current = () => {};
    };
  }, [responderId, cap, publish]);

  const loadOlder = useCallback(async () => {
    const oldest = recordsRef.current[recordsRef.current.length - 1]?.id;
    if (!oldest) return;
    setLoadingOlder(true);
    try {
      const room = cap - recordsRef.current.length;
      const got = room > 0 ? await respondersApi.history(responderId, { before: oldest, limit: Math.min(OLDER_PAGE, room) }) : [];
      publish([...recordsRef.current, ...got]);
      setHasOlder(got.length === Math.min(OLDER_PAGE, room) && recordsRef.current.length < cap);
    } catch (err) {
      setError(err);
    } finally {
      setLoadingOlder(false);
    }
  }, [responderId, cap, publish]);

  const reset = useCallback(() => {
    generation.current++;
    publish([]);
    setHasOlder(false);
    wake.current();
  }, [publish]);

  const pollNow = useCallback(() => wake.current(), []);
  return { records, loaded, error, hasOlder, loadingOlder, paused, setPaused, loadOlder: () => void loadOlder(), reset, pollNow };
}
