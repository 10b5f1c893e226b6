/**
 * The console's picture over time: blocked nodes, evacuations, deferred items and blocks not yet on
 * YARN, sampled every `intervalMs` into a ring of `capacity` samples (360 at 1 min = the last 6 h:
 * 14 KB of typed arrays, whatever the blocklist's size). It lives in memory only: after a restart the
 * chart starts empty (Prometheus and the dashboard keep the long history).
 */
import { Clock, every } from '../core/clock';

export interface HistorySample {
  blocked: number;
  evacuating: number;
  deferred: number;
  unapplied: number;
}

export interface HistoryPoint extends HistorySample {
  /** Epoch ms of the sample. */
  t: number;
}

const FIELDS = ['blocked', 'evacuating', 'deferred', 'unapplied'] as const;

/** A fixed-size ring of samples, oldest overwritten first. */
export class HistoryRing {
  private readonly times: Float64Array;
  private readonly values: Float64Array;
  private next = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`history capacity must be a positive integer, got ${capacity}`);
    this.times = new Float64Array(capacity);
    this.values = new Float64Array(capacity * FIELDS.length);
  }

  add(t: number, s: HistorySample): void {
    this.times[this.next] = t;
    FIELDS.forEach((f, i) => (this.values[this.next * FIELDS.length + i] = s[f]));
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
  }

  /** The samples, oldest first. */
  points(): HistoryPoint[] {
    const out: HistoryPoint[] = [];
    for (let k = 0; k < this.size; k++) {
      const at = (this.next - this.size + k + this.capacity) % this.capacity;
      const p = { t: this.times[at] } as HistoryPoint;
      FIELDS.forEach((f, i) => (p[f] = this.values[at * FIELDS.length + i]));
      out.push(p);
    }
    return out;
  }
}

export interface HistoryOptions {
  clock: Clock;
  intervalMs: number;
  capacity: number;
  /** The figures now; undefined (a store that does not answer) skips the sample. */
  sample: () => Promise<HistorySample | undefined>;
}

/** Samples on a timer into a ring; `view()` adds a live point for now. */
export class History {
  private readonly ring: HistoryRing;
  private stop: (() => void) | undefined;

  constructor(private readonly opts: HistoryOptions) {
    this.ring = new HistoryRing(opts.capacity);
  }

  get intervalMs(): number {
    return this.opts.intervalMs;
  }

  start(): void {
    if (this.stop) return;
    void this.take();
    this.stop = every(this.opts.clock, this.opts.intervalMs, () => void this.take());
  }

  close(): void {
    this.stop?.();
    this.stop = undefined;
  }

  /** One sample now (the timer's work; tests call it directly). */
  async take(): Promise<void> {
    const s = await this.opts.sample().catch(() => undefined);
    if (s) this.ring.add(this.opts.clock.now(), s);
  }

  /** The ring, oldest first, and the figures as of now as the last point. */
  async view(): Promise<HistoryPoint[]> {
    const points = this.ring.points();
    const now = await this.opts.sample().catch(() => undefined);
    if (now) points.push({ t: this.opts.clock.now(), ...now });
    return points;
  }
}
