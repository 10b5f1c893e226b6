/**
 * The observed layer's one cache type (the informer's job in a Kubernetes controller): a value read
 * from YARN or the store, when it was read, and a way to forget it. Every watcher keeps its view
 * in one of these, so "is this cached list stale?" is answered here and nowhere else.
 *
 * *When* to read is a per-cache policy, not code in the pass: the RM is shared by every job on the
 * cluster, so each read is chosen deliberately (a node list is megabytes at 10,000 nodes; the
 * proxy is local and cheap).
 */

/**
 * - `every-pass`: read whenever asked (cheap, local sources);
 * - `max-age`: read when unknown, older than `ms`, or demanded by the pass;
 * - `on-demand`: read only when the pass demands it (or it is unknown and demanded);
 * - `when-invalid`: read only when unknown (someone invalidated it or it was never read).
 */
export type ReadPolicy = { kind: 'every-pass' } | { kind: 'max-age'; ms: number } | { kind: 'on-demand' } | { kind: 'when-invalid' };

export class Cached<T> {
  private entry: { value: T; readAt: number } | undefined;

  constructor(
    /** For log lines and errors: what is cached ("the cluster's nodes"). */
    readonly what: string,
    readonly policy: ReadPolicy,
  ) {}

  get value(): T | undefined {
    return this.entry?.value;
  }

  /** Epoch ms of the read (or write-through) that produced the value. */
  get readAt(): number | undefined {
    return this.entry?.readAt;
  }

  get known(): boolean {
    return this.entry !== undefined;
  }

  set(value: T, now: number): void {
    this.entry = { value, readAt: now };
  }

  /** Forget the value: the next pass reads it again whatever the policy. */
  invalidate(): void {
    this.entry = undefined;
  }

  /**
   * Whether a pass at `now` should read the source. `demanded` is the pass saying it needs a
   * fresh value now (an evacuation needs this pass's containers).
   */
  due(now: number, demanded = false): boolean {
    const e = this.entry;
    switch (this.policy.kind) {
      case 'every-pass':
        return true;
      case 'when-invalid':
        return e === undefined;
      case 'on-demand':
        return demanded;
      case 'max-age':
        return demanded || e === undefined || now - e.readAt >= this.policy.ms;
    }
  }

  /** Whether a poll tick should ask for a pass to refresh this cache (never for `every-pass`/`on-demand`). */
  stale(now: number): boolean {
    return this.policy.kind === 'max-age' && this.due(now);
  }
}

/** What a watcher's read reports to the pass: the pass names the stage when it fails. */
export type ReadOutcome = { ok: true } | { ok: false; error: string };

export const READ_OK: Readonly<ReadOutcome> = { ok: true };

export const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
