/**
 * Time is injected everywhere: logic takes a Clock, never calls Date.now() itself, so tests of
 * expiry and evacuation deadlines run on a FakeClock instead of sleeping.
 *
 * Timers hang off the clock too. A FakeClock fires due timers synchronously when advanced, which is
 * what makes "an item is removed from YARN at its endTimestamp" testable without waiting.
 */
export interface Clock {
  /** Wall-clock epoch milliseconds (the same scale as endTimestamp). */
  now(): number;
  /**
   * Milliseconds on a clock that only moves forward at the rate of real time (a wall-clock step
   * does not move it): what durations are measured on. Its zero means nothing. Absent: `now()`
   * stands in (a clock made for a test that never steps).
   */
  monotonic?(): number;
  /** Calls fn once after delayMs; returns a cancel function. */
  setTimer(delayMs: number, fn: () => void): () => void;
}

/** The clock's monotonic reading, or its wall reading when it has none. */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now();
}

/** The real clock. Timers are unref'd so a pending deadline never keeps a CLI process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(delayMs, fn) {
    // setTimeout overflows above 2^31-1 ms (~24.8 days) and fires at once; clamp and let the
    // caller re-arm (deadline owners recompute on every fire anyway).
    const t = setTimeout(fn, Math.max(0, Math.min(delayMs, 2 ** 31 - 1)));
    t.unref();
    return () => clearTimeout(t);
  },
};

/**
 * Runs `fn` every `periodMs` on `clock` until the returned stop function is called (a poll, an AM
 * heartbeat). The next run is armed before `fn` runs, so under a FakeClock an advance by several
 * periods runs once per period; a stopped timer never runs again, even when its last arming is
 * already due.
 */
export function every(clock: Clock, periodMs: number, fn: () => void): () => void {
  let cancel: (() => void) | undefined;
  let stopped = false;
  const arm = (): void => {
    cancel = clock.setTimer(periodMs, () => {
      if (stopped) return;
      arm();
      fn();
    });
  };
  arm();
  return () => {
    stopped = true;
    cancel?.();
  };
}

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to. advance() moves both readings and fires every timer that
 * falls due, in time order; stepWall() moves the wall reading alone, as an NTP step or an operator's
 * `date -s` does, and fires nothing (timers, like setTimeout, count real time).
 */
export class FakeClock implements Clock {
  private t: number;
  private mono = 0;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start = 1_652_313_600_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  monotonic(): number {
    return this.mono;
  }

  /** The wall clock jumps by ms (either way); the monotonic clock and the timers do not notice. */
  stepWall(ms: number): void {
    this.t += ms;
  }

  setTimer(delayMs: number, fn: () => void): () => void {
    const timer: FakeTimer = { at: this.mono + Math.max(0, delayMs), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Moves time forward by ms, firing due timers at their own instants. */
  advance(ms: number): void {
    const to = this.mono + Math.max(0, ms);
    for (;;) {
      const due = this.timers
        .filter((x) => !x.cancelled && x.at <= to)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.cancelled = true;
      if (due.at > this.mono) {
        this.t += due.at - this.mono;
        this.mono = due.at;
      }
      due.fn();
    }
    this.timers = this.timers.filter((x) => !x.cancelled);
    this.t += to - this.mono;
    this.mono = to;
  }

  /** Sets the wall time: forward as advance() does; backwards as a wall step that fires nothing. */
  set(to: number): void {
    if (to >= this.t) this.advance(to - this.t);
    else this.stepWall(to - this.t);
  }

  /** Number of armed timers (for tests that assert timers are coalesced or cancelled). */
  pendingTimers(): number {
    return this.timers.filter((x) => !x.cancelled).length;
  }
}
