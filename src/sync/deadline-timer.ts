/**
 * One clock timer for many deadlines (in the style of Nomad's drainer deadline heap): item
 * expiries and evacuation deadlines are registered by key; exactly one timer is armed, for the
 * earliest; when it fires, every key due by then is reported in one call, so items ending at the
 * same instant cause one reconcile pass, not one each.
 *
 * Deadlines are never fired early: a pass run before an item's endTimestamp would still count the
 * item (expiry is inclusive at now >= end), so firing early would just waste a pass and miss the
 * instant. A timer that fires early anyway (setTimeout's 2^31 ms clamp) re-arms for the rest.
 */
import { Clock } from '../core/clock';

interface Entry {
  key: string;
  at: number;
}

export class DeadlineTimer {
  private readonly at = new Map<string, number>();
  /** Binary min-heap of (key, at); stale entries (key moved or removed) are skipped lazily. */
  private heap: Entry[] = [];
  private armedFor: number | undefined;
  private cancel: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (keys: string[]) => void,
  ) {}

  /** Sets (or moves) the deadline of `key`. Infinite or NaN deadlines are removals. */
  set(key: string, at: number): void {
    if (!Number.isFinite(at)) {
      this.remove(key);
      return;
    }
    if (this.at.get(key) === at) return;
    this.at.set(key, at);
    this.push({ key, at });
    this.arm();
  }

  remove(key: string): void {
    if (!this.at.delete(key)) return;
    // The heap entry goes stale and is dropped when it reaches the top.
    this.arm();
  }

  /** Replaces the whole set (a reconcile pass recomputes every deadline from its snapshot). */
  replaceAll(deadlines: Map<string, number>): void {
    for (const key of [...this.at.keys()]) if (!deadlines.has(key)) this.at.delete(key);
    for (const [key, at] of deadlines) {
      if (!Number.isFinite(at)) {
        this.at.delete(key);
        continue;
      }
      if (this.at.get(key) !== at) {
        this.at.set(key, at);
        this.push({ key, at });
      }
    }
    // Compact when stale entries dominate, so the heap stays bounded by live deadlines.
    if (this.heap.length > 2 * this.at.size + 64) this.rebuild();
    this.arm();
  }

  /** The earliest live deadline, if any. */
  next(): number | undefined {
    this.dropStale();
    return this.heap[0]?.at;
  }

  size(): number {
    return this.at.size;
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = undefined;
    this.armedFor = undefined;
  }

  private fire(): void {
    this.cancel = undefined;
    this.armedFor = undefined;
    if (this.stopped) return;
    const now = this.clock.now();
    const due: string[] = [];
    for (;;) {
      this.dropStale();
      const top = this.heap[0];
      if (!top || top.at > now) break;
      this.pop();
      this.at.delete(top.key);
      due.push(top.key);
    }
    this.arm();
    if (due.length) this.onDue(due);
  }

  private arm(): void {
    if (this.stopped) return;
    const next = this.next();
    if (next === this.armedFor) return;
    this.cancel?.();
    this.cancel = undefined;
    this.armedFor = next;
    if (next === undefined) return;
    this.cancel = this.clock.setTimer(Math.max(0, next - this.clock.now()), () => this.fire());
  }

  private dropStale(): void {
    while (this.heap.length && this.at.get(this.heap[0].key) !== this.heap[0].at) this.pop();
  }

  private rebuild(): void {
    this.heap = [];
    for (const [key, at] of this.at) this.push({ key, at });
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p].at <= h[i].at) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop();
    if (!h.length || !last) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l].at < h[m].at) m = l;
      if (r < h.length && h[r].at < h[m].at) m = r;
      if (m === i) break;
      [h[m], h[i]] = [h[i], h[m]];
      i = m;
    }
  }
}
