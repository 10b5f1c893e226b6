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
  /** Calls fn once after delayMs; returns a cancel function. */
  setTimer(delayMs: number, fn: () => void): () => void;
}

/** The real clock. Timers are unref'd so a pending deadline never keeps a CLI process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
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

/** A clock that moves only when told to. advance() fires every timer that falls due, in time order. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start = 1_652_313_600_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(delayMs: number, fn: () => void): () => void {
    const timer: FakeTimer = { at: this.t + Math.max(0, delayMs), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Moves time forward by ms, firing due timers at their own instants. */
  advance(ms: number): void {
    this.set(this.t + ms);
  }

  /** Sets the time. Moving backwards fires nothing (a wall clock may jump back). */
  set(to: number): void {
    for (;;) {
      const due = this.timers
        .filter((x) => !x.cancelled && x.at <= to)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.cancelled = true;
      if (due.at > this.t) this.t = due.at;
      due.fn();
    }
    this.timers = this.timers.filter((x) => !x.cancelled);
    this.t = to;
  }

  /** Number of armed timers (for tests that assert timers are coalesced or cancelled). */
  pendingTimers(): number {
    return this.timers.filter((x) => !x.cancelled).length;
  }
}
