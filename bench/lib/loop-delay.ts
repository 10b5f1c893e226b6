/**
 * Event-loop delay over chosen windows only: a 1 ms timer's lateness, recorded while a window is
 * open. Node's monitorEventLoopDelay cannot do this: disabled and enabled again, it records the
 * whole disabled stretch as one delay (v20: `enable(); …; disable(); sleep(200); enable()` shows a
 * 200 ms sample), so interleaved windows would each charge the other's duration to the figure.
 */
import { RecordableHistogram, createHistogram } from 'node:perf_hooks';

export class WindowedLoopDelay {
  private readonly hist: RecordableHistogram = createHistogram();
  private timer: NodeJS.Timeout | undefined;
  private last = 0;

  open(): void {
    if (this.timer) return;
    this.last = performance.now();
    this.timer = setInterval(() => {
      const t = performance.now();
      // Lateness of this tick beyond its 1 ms period, in ns (the histogram takes integers ≥ 1).
      this.hist.record(Math.max(1, Math.round((t - this.last - 1) * 1e6)));
      this.last = t;
    }, 1);
  }

  close(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    // The stretch since the last tick is part of the window too (a block at its very end counts).
    const t = performance.now();
    if (t - this.last > 1) this.hist.record(Math.max(1, Math.round((t - this.last - 1) * 1e6)));
  }

  get p99Ms(): number {
    return this.hist.percentile(99) / 1e6;
  }

  get maxMs(): number {
    return this.hist.max / 1e6;
  }

  get samples(): number {
    return this.hist.count;
  }
}
