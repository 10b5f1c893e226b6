/**
 * The part of a pass that reads Flink: the blacklist is already pushed (it never waits on Flink),
 * and the evacuations are decided on this pass's read of the job's JobManager.
 */
import { monotonicNow } from '../core/clock';
import { EVACUATE } from '../model/item';
import { DesiredPlan, blacklistSet } from './desired';
import { EvacuationStatus } from './evacuation';
import { Memory } from './memory';
import { Decision, anyInProgress, reconcileInSteps } from './reconcile';
import { inTurns } from './steps';
import { ControllerParts } from './controller-parts';
import { Observation } from './pass-observe';

/** Whether an EVACUATE item's evacuation was still in progress at the last pass. */
function evacuateInProgress(statuses: ReadonlyMap<string, EvacuationStatus>): boolean {
  let inProgress = false;
  for (const st of statuses.values()) if (st.phase !== 'READY' && st.action === EVACUATE) inProgress = true;
  return inProgress;
}

/**
 * The decision again with this pass's read of Flink (twice when the first read is not fresh
 * enough for what it wants), on YARN's blacklist as just pushed: nothing more to push. `memory`
 * is the controller's as of the push; `shown` the statuses of the last pass.
 */
export async function decideWithFlink(
  parts: ControllerParts,
  seen: Extract<Observation, { ok: true }>,
  pushedPlan: DesiredPlan,
  memory: Memory,
  shown: ReadonlyMap<string, EvacuationStatus>,
): Promise<Decision> {
  const { watch, needs, flink, deps } = parts;
  const { clock } = deps;
  const appId = watch.attempt.applicationId;
  const need = needs.get(seen.desired.items, appId, clock.now());
  const read = await flink.observe(monotonicNow(clock), appId, memory.steps, evacuateInProgress(shown) || need.evacuating);
  const observed = { ...seen.observed, actual: blacklistSet(pushedPlan) };
  const decide = () => inTurns(reconcileInSteps({ ...observed, flink: flink.knowledge }, seen.desired, memory, clock.now(), monotonicNow(clock)));
  let d = await decide();
  const evacuating = d.view.evacuations !== undefined && anyInProgress(d.view.evacuations.statuses);
  if (await flink.needsFresh(d.flinkWanted, monotonicNow(clock), appId, memory.steps, evacuating, read)) d = await decide();
  return d;
}
