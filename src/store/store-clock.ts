/**
 * The clock a sidecar counts shared items on. An item's end is an instant in the shared store;
 * a sidecar whose clock runs ahead would otherwise lift its job's blocks early, and stamp the
 * blocks it makes later than they were made. So, while the local clock is ahead of the store's
 * time by more than the limit (store.ts ClockSkew), this clock reads the store's time: a block
 * ends only when it has ended on both clocks. Within the limit, or behind it, it is the local
 * clock as it is. Timers and the monotonic clock are the local clock's: a duration is one on either.
 * docs/zookeeper.md (Clocks) gives the decision and what a clock behind the store's does.
 */
import { Clock } from '../core/clock';
import { ClockSkew } from './store';

export function sharedStoreClock(local: Clock, skew: () => ClockSkew | undefined): Clock {
  const clock: Clock = {
    now() {
      const t = local.now();
      const s = skew();
      return s !== undefined && t - s.storeNow > s.limitMs ? s.storeNow : t;
    },
    setTimer: (delayMs, fn) => local.setTimer(delayMs, fn),
  };
  // Durations stay on the local monotonic clock (core/clock.ts): no skew moves them.
  const monotonic = local.monotonic?.bind(local);
  if (monotonic) clock.monotonic = monotonic;
  return clock;
}
