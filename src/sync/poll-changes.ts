/**
 * What a poll tick checks between passes, with cheap reads only: did the store move, did the
 * attempt change, is an evacuation waiting for containers to go, is a cache past its age.
 */
import { monotonicNow } from '../core/clock';
import { EvacuationStatus } from './evacuation';
import { Memory } from './memory';
import { ChangeReason, ControllerParts } from './controller-parts';

/** What the last pass left that a poll looks at, read as the poll goes (a pass may end meanwhile). */
export interface SincePass {
  statuses(): ReadonlyMap<string, EvacuationStatus>;
  memory(): Memory;
  /** The task managers MARK_BLOCKED places held at the last decision (the poll looks for idle ones). */
  marked(): ReadonlySet<string>;
}

/** Why a pass should run now, or undefined when nothing moved. */
export async function changeReason(parts: ControllerParts, last: SincePass): Promise<ChangeReason | undefined> {
  const { watch, flink, needs, deps } = parts;
  const store = await watch.store.changed();
  if (store) return store;
  if (await watch.attempt.changed()) return 'attempt-change';
  if (await watch.blacklist.drifted(deps.clock.now())) return 'blacklist-drift';
  for (const st of last.statuses().values()) if (st.phase !== 'READY') return 'evacuating';
  if (last.memory().steps.step !== undefined) return 'evacuating';
  if (last.marked().size > 0 && (await flink.idleAmong(last.marked(), monotonicNow(deps.clock), watch.attempt.applicationId))) return 'evacuating';
  if (flink.pending(last.memory().steps).length > 0 && (await flink.checkTriggers(last.memory().steps))) return 'evacuating';
  const now = deps.clock.now();
  const items = watch.store.cache.value?.items ?? [];
  const need = needs.get(items, watch.attempt.applicationId, now);
  if (watch.containers.stale(now, { evacuating: false, itemsInForce: need.any }) || watch.nodes.stale(now, need)) return 'refresh';
  return undefined;
}
