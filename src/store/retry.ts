/**
 * The one retry helper of the stores. A store call is a few rounds of read → decide →
 * compare-and-set; a round can fail three ways, and each has one answer:
 *  - `contention`: another writer won the round (a version moved, the item appeared or went):
 *    read again at once — someone made progress, so waiting buys nothing;
 *  - `transient`: the backend did not answer (connection loss, a leader failover): wait with a
 *    capped exponential backoff, then read again;
 *  - `fatal`: anything else (a corrupt item, no permission): fail now.
 * All rounds share one Deadline, so a store call never outlives its operation timeout.
 * Waits go through the injected Clock's timers.
 */
import { Clock } from '../core/clock';

export class Deadline {
  private readonly at: number;
  constructor(readonly totalMs: number) {
    // Real elapsed time, not the injected Clock: this bounds I/O, it is not business time.
    this.at = performance.now() + totalMs;
  }
  left(): number {
    return Math.max(0, this.at - performance.now());
  }
  passed(): boolean {
    return this.left() <= 0;
  }
}

export type Failure = 'contention' | 'transient' | 'fatal';

/** The next wait of a capped exponential backoff: initial, 2×, 4×, … up to max. */
export function backoffAfter(previousMs: number, initialMs: number, maxMs: number): number {
  return Math.min(Math.max(initialMs, previousMs * 2), maxMs);
}

export interface RetryOptions {
  deadline: Deadline;
  classify(e: unknown): Failure;
  /** Whose timers the backoff waits on. */
  clock: Pick<Clock, 'setTimer'>;
  /** First and largest backoff wait after a transient failure (ms). */
  initialMs?: number;
  maxMs?: number;
  /** A bound on rounds besides the deadline (each lost round means another writer won one). */
  maxRounds?: number;
  /** Told of each transient failure before the wait (e.g. "my write may have been applied"). */
  onTransient?(e: unknown): void;
  /** What to throw when the deadline or the rounds run out; default: the last failure. */
  exhausted?(last: unknown): unknown;
}

export const DEFAULT_MAX_ROUNDS = 10_000;

const wait = (clock: Pick<Clock, 'setTimer'>, ms: number): Promise<void> => new Promise((resolve) => clock.setTimer(ms, resolve));

/** Runs `round` until it returns, a failure is fatal, or the deadline / rounds run out. */
export async function retry<T>(opts: RetryOptions, round: (n: number) => Promise<T>): Promise<T> {
  const initialMs = opts.initialMs ?? 20;
  const maxMs = opts.maxMs ?? 500;
  const maxRounds = opts.maxRounds ?? DEFAULT_MAX_ROUNDS;
  let delay = 0;
  let last: unknown = new Error('no round ran');
  for (let n = 0; n < maxRounds; n++) {
    try {
      return await round(n);
    } catch (e) {
      const kind = opts.classify(e);
      if (kind === 'fatal') throw e;
      last = e;
      if (kind === 'transient') opts.onTransient?.(e);
      if (opts.deadline.passed()) break;
      if (kind === 'transient') {
        delay = backoffAfter(delay, initialMs, maxMs);
        await wait(opts.clock, Math.min(delay, opts.deadline.left()));
        if (opts.deadline.passed()) break;
      }
    }
  }
  throw opts.exhausted ? opts.exhausted(last) : last;
}
