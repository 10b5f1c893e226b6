/**
 * A decision over many items in steps: the pure code hands control back (a bare `yield`) after
 * every STEP_ITEMS items of a loop, and whoever runs it chooses what happens there. `finish` runs
 * to the end at once (the pure result, as tests and small callers want it); `inTurns` lets the
 * event loop turn at each hand-back, so a pass over 10,000 evacuations (hundreds of milliseconds of
 * CPU on a loaded machine) no longer holds /healthz and the API's answers behind it. The steps read
 * their inputs as values: a pass changes none of them while its decision is being made.
 */

/** Items one loop of a decision covers between two hand-backs. */
export const STEP_ITEMS = 500;

/** A computation that hands control back now and then and returns T. */
export type Steps<T> = Generator<void, T, void>;

/** Runs the steps to the end, without giving anything up. */
export function finish<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** A later event-loop turn, after the loop has polled for I/O. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs the steps with a turn of the event loop at each hand-back. */
export async function inTurns<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await nextTurn();
  }
}

/** Whether the `n`-th item of a loop (1-based) ends a step. */
export function stepEnds(n: number): boolean {
  return n % STEP_ITEMS === 0;
}
