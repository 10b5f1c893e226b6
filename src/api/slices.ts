/**
 * Work over many items in slices, the event loop free between them: a batch of 10,000 items is
 * 10,000 validations, stamps, audit lines and answers, and done in one go it held the loop for
 * most of a second (a 1 s liveness probe failed). A slice ends after `maxItems` items or
 * `sliceMs` of work, whichever comes first, and the next one starts on a later turn, after the
 * loop has polled for I/O (setImmediate), so /healthz and the other requests are answered between.
 * A small batch is one slice: no turn is given up for it.
 */

export interface SliceOptions {
  /** Most items per slice (bounds a slice whatever the clock says; makes the slicing testable). */
  maxItems?: number;
  /** Most work per slice, ms. */
  sliceMs?: number;
}

export const SLICE_ITEMS = 250;
export const SLICE_MS = 5;

/** A later event-loop turn, after I/O. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `fn` over `xs` in order, in slices; the results in order. */
export async function mapInSlices<T, R>(xs: readonly T[], fn: (x: T, i: number) => R, o: SliceOptions = {}): Promise<R[]> {
  const maxItems = o.maxItems ?? SLICE_ITEMS;
  const sliceMs = o.sliceMs ?? SLICE_MS;
  const out: R[] = new Array<R>(xs.length);
  let start = performance.now();
  let inSlice = 0;
  for (let i = 0; i < xs.length; i++) {
    if (inSlice >= maxItems || (inSlice > 0 && performance.now() - start >= sliceMs)) {
      await nextTurn();
      start = performance.now();
      inSlice = 0;
    }
    out[i] = fn(xs[i], i);
    inSlice++;
  }
  return out;
}

/** `xs` in consecutive chunks of at most `size`. */
export function chunks<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}
