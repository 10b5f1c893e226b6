/**
 * Capped exponential backoff for retrying a failed reconcile pass. A failure never drops the
 * change (Flink's YarnResourceManagerDriver advances its "last pushed" set even when the push
 * failed and so loses the delta); the pass is simply run again later, from fresh reads.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** 0..1: each delay is scaled by a random factor in [1 - jitter, 1] so many sidecars do not retry in step. */
  jitter?: number;
  /** Injected for deterministic tests. */
  random?: () => number;
}

export class Backoff {
  private failures = 0;

  constructor(private readonly opts: BackoffOptions) {
    if (opts.initialMs <= 0 || opts.maxMs < opts.initialMs) throw new Error(`bad backoff: initial ${opts.initialMs} ms, max ${opts.maxMs} ms`);
  }

  /** The delay before the next attempt, and counts one more failure. */
  next(): number {
    // 2^failures overflows to Infinity long after the cap is reached; min() handles that.
    const base = Math.min(this.opts.maxMs, this.opts.initialMs * 2 ** this.failures);
    this.failures++;
    const jitter = this.opts.jitter ?? 0;
    if (jitter <= 0) return base;
    const r = (this.opts.random ?? Math.random)();
    return Math.max(1, Math.round(base * (1 - jitter * r)));
  }

  /** Consecutive failures so far (0 after a success). */
  get attempts(): number {
    return this.failures;
  }

  reset(): void {
    this.failures = 0;
  }
}
