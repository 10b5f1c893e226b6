/**
 * What the engine remembers between passes, as plain data, and the pure rules that change it.
 * Everything here is a cache of facts outside the process or bookkeeping for log lines; none of it
 * is a fact only this process knows, so a restart that starts from `emptyMemory()` is safe:
 *  - `released`: across a restart the proxy is the record (a released container is no longer
 *    listed as live), so nothing is released twice;
 *  - `runningHighWater`: after a restart the cap's floor starts from what YARN holds (seedHighWater):
 *    the RUNNING hosts of ours still on the blacklist were enforced under a cap that allowed them;
 *  - `repushAll` / `maybeOnYarn`: a restart re-reads YARN's blacklist anyway;
 *  - `evacuationClocks`: a restarted process takes the elapsed time of each evacuation from its
 *    stored (wall-clock) start once, and counts on the monotonic clock from there;
 *  - `decision`: only saves work (the same inputs give the same plan without it).
 */
import { EvacuationPhase } from './evacuation';
import { StepMemory, emptyStepMemory, keepKinds } from './evacuation-steps';
import { BlacklistDiff, DecisionMemo } from './desired';
import { ContainerIndex } from './watch-containers';

export interface Memory {
  /** Every desired host must be sent again: a new attempt's AMRMClient starts empty. */
  repushAll: boolean;
  /** Hosts YARN may still honour although the proxy does not list them: removed unless desired. */
  maybeOnYarn: ReadonlySet<string>;
  /** Containers this process asked the proxy to release: id → host. Never asked twice. */
  released: ReadonlyMap<string, string>;
  /** The most RUNNING nodes seen lately: the safety cap's remembered denominator. */
  runningHighWater?: { count: number; at: number };
  /** Items the cap deferred at the last pass (each deferral is logged once). */
  deferred: ReadonlySet<string>;
  /** Each evacuation's phase at the last pass (each phase change is logged once). */
  phases: ReadonlyMap<string, EvacuationPhase>;
  /** Hosts other owners held during this attempt, as seen by any read. */
  othersSeen: ReadonlySet<string>;
  /**
   * Hosts other owners held in the previous attempt. The scheduler may carry them over while the
   * new AM's proxy forgot who held them: they are never this sidecar's to remove.
   */
  inheritedOthers: ReadonlySet<string>;
  /** Each evacuation's clock: item id → its start and the monotonic instant its elapsed time counts from. */
  evacuationClocks: ReadonlyMap<string, EvacuationClock>;
  /** The job's release steps, checkpoints and idle streaks (evacuation-steps.ts). */
  steps: StepMemory;
  /** What the plan and diff remember to save work (desired.ts): the last plan, diff and age order. */
  decision: DecisionMemo;
}

/**
 * An evacuation's grace period as a duration: `since` is the start as stored (wall clock, epoch
 * ms), `zero` the monotonic instant at which its elapsed time was 0.
 */
export interface EvacuationClock {
  since: number;
  zero: number;
}

export function emptyMemory(): Memory {
  return { repushAll: false, maybeOnYarn: new Set(), released: new Map(), deferred: new Set(), phases: new Map(), othersSeen: new Set(), inheritedOthers: new Set(), evacuationClocks: new Map(), steps: emptyStepMemory(), decision: {} };
}

/**
 * The clock of an evacuation that started at `since` (wall): the one already running for that
 * start, or, the first time this process meets it, one whose elapsed time is what the wall clock
 * says now (never negative: a wall clock behind the start counts as no time gone). From then on
 * only the monotonic clock moves it, so a wall-clock step neither shortens nor lengthens a grace
 * period. Across a restart the time the process was down is counted by the wall clock.
 */
export function evacuationClock(known: EvacuationClock | undefined, since: number, now: number, mono: number): EvacuationClock {
  if (known !== undefined && known.since === since) return known;
  return { since, zero: mono - Math.max(0, now - since) };
}

/** How long the highest RUNNING count is remembered when the config does not say (5 min). */
export const DEFAULT_CAP_NODE_COUNT_MEMORY_MS = 5 * 60_000;

/**
 * The cap's denominator never drops below the most RUNNING nodes seen within the memory window,
 * so a dip in the RM's node list (an RM restart while NodeManagers re-register, a truncated
 * answer) does not lift enforced blocks; a real shrink takes effect once the window has passed.
 */
export function rememberRunning(
  highWater: Memory['runningHighWater'],
  running: number,
  now: number,
  windowMs: number,
): { floor: number; highWater: { count: number; at: number } } {
  const keep = highWater !== undefined && running < highWater.count && now - highWater.at <= windowMs;
  const next = keep ? highWater : { count: running, at: now };
  return { floor: next.count, highWater: next };
}

/**
 * A new application attempt: its client starts empty, so everything desired is sent again; the
 * scheduler may carry the old attempt's list over while the new client reports none, so whatever
 * the old attempt had is a candidate for an explicit removal.
 */
export function afterNewAttempt(m: Memory, previouslyOnYarn: Iterable<string>): Memory {
  const maybe = new Set(m.maybeOnYarn);
  for (const h of previouslyOnYarn) maybe.add(h);
  return { ...m, repushAll: true, maybeOnYarn: maybe, inheritedOthers: m.othersSeen, othersSeen: new Set() };
}

/**
 * After the push stage: a push that went through (or was not needed) leaves YARN equal to desired,
 * so nothing is "maybe" any more and the re-push is done. A failed push may still have reached the
 * AM (the answer can be lost after the AM acted): its additions are "maybe on YARN" until a
 * successful push, and the re-push stays pending.
 */
export function afterPush(m: Memory, push: { ok: true } | { ok: false; attempted: BlacklistDiff }): Memory {
  if (push.ok) return { ...m, repushAll: false, maybeOnYarn: new Set() };
  const maybe = new Set(m.maybeOnYarn);
  for (const h of push.attempted.additions) maybe.add(h);
  return { ...m, maybeOnYarn: maybe };
}

/** Released and unknown ids (unknown = already gone) are done: never asked again. */
export function afterRelease(m: Memory, done: readonly string[], containers: ContainerIndex | undefined): Memory {
  if (done.length === 0) return m;
  const released = new Map(m.released);
  for (const id of done) released.set(id, containers?.byId.get(id)?.host ?? '');
  return { ...m, released };
}

/** A released id is kept while the proxy still lists it or an evacuation reports it; no longer. */
export function pruneReleased(m: Memory, listed: ReadonlyMap<string, unknown>, reported: ReadonlySet<string>): Memory {
  if (m.released.size === 0) return m;
  let changed = false;
  const released = new Map<string, string>();
  for (const [id, host] of m.released) {
    if (listed.has(id) || reported.has(id)) released.set(id, host);
    else changed = true;
  }
  if (!changed) return m;
  // How a release went is kept as long as the release itself (or while it is still owed).
  return { ...m, released, steps: keepKinds(m.steps, (id) => released.has(id) || !m.released.has(id)) };
}

/**
 * The remembered count after a restart: gone with the process, while YARN still holds what the last
 * process enforced. `onYarn` RUNNING hosts of ours on the blacklist were allowed by a denominator of
 * at least onYarn / fraction, so the cap starts from that floor (for the same window, as if it had
 * been seen now). Without it a sidecar restarted while the RM re-registers its NodeManagers (few
 * RUNNING for a while) read a tiny cap and lifted every block from YARN.
 */
export function seedHighWater(highWater: Memory['runningHighWater'], onYarn: number, fraction: number, now: number): Memory['runningHighWater'] {
  if (highWater !== undefined || onYarn <= 0 || fraction <= 0) return highWater;
  return { count: Math.ceil(onYarn / fraction - 1e-9), at: now };
}
