// Time slicing for main-thread work that must stay there (writes inside a transaction, streaming a large response
// from the database): `await slice.tick()` between units of work gives the event loop back (a macrotask: timers, I/O
// and other requests run) once `budgetMs` have passed since it last did. Awaiting a resolved promise (a bun:sqlite
// call through the Db interface) is only a microtask: without this, a loop over thousands of rows holds the loop
// for its whole length.
export const SLICE_MS = 4;

/** Resolves on a later turn of the event loop. */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class TimeSlice {
  private since = performance.now();

  constructor(private readonly budgetMs = SLICE_MS) {}

  /** Yields when this slice has used its budget. */
  async tick(): Promise<void> {
    if (performance.now() - this.since < this.budgetMs) return;
    await yieldToLoop();
    this.since = performance.now();
  }
}
