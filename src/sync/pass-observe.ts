/**
 * A pass's observe step: each watcher refreshes its cache as its read policy says (watch-*.ts), in
 * the order the decision needs them, and the caches become the decision's inputs.
 */
import { Observed, Desired } from './reconcile';
import { message } from './cache';
import { ControllerParts, PassOutcome, Watchers } from './controller-parts';
import { PassStage } from './view';

export type Observation = { ok: true; observed: Observed; desired: Desired; containersError?: string } | { ok: false; failed: PassOutcome };

const failed = (stage: PassStage, error: string): { ok: false; failed: PassOutcome } => ({ ok: false, failed: { result: 'failed', stage, error } });

/**
 * Refreshes every cache its policy says is due. `onNewAttempt` runs as soon as the attempt read
 * finds a new one, before the caches it makes stale are read.
 */
export async function observe(parts: ControllerParts, now: number, onNewAttempt: () => void): Promise<Observation> {
  const { watch, starts, needs, rules } = parts;
  await watch.store.refresh(now);
  const snapshot = watch.store.cache.value;
  if (!snapshot) return failed('store', watch.store.error ?? 'store not read yet');
  const attempt = await watch.attempt.refresh(now);
  if (!attempt.ok) return failed('attempt', attempt.error);
  if (attempt.newAttempt) onNewAttempt();
  try {
    await starts.load(watch.attempt.applicationId);
  } catch (e) {
    // Without its stored starts the job would start its evacuations again (and store that).
    return failed('store', `reading this job's evacuation starts failed: ${message(e)}`);
  }
  const need = needs.get(snapshot.items, watch.attempt.applicationId, now);
  const nodes = await watch.nodes.refresh(now, need);
  if (!nodes.ok) return failed('nodes', nodes.error);
  const appId = watch.attempt.applicationId;
  const bl = await watch.blacklist.refresh(now, appId, watch.attempt.attemptId);
  if (!bl.ok) return failed('blacklist-read', bl.error);
  const containers = await watch.containers.refresh(now, { evacuating: need.evacuating, itemsInForce: need.any });
  const view = watch.blacklist.cache.value ?? { actual: new Set<string>(), othersHold: new Set<string>(), schedulerOnly: [] };
  return {
    ok: true,
    observed: { actual: view.actual, othersHold: view.othersHold, schedulerOnly: view.schedulerOnly, nodes: watch.nodes.cache.value ?? [], ...(watch.nodes.runningNodes !== undefined ? { runningNodes: watch.nodes.runningNodes } : {}), ...(need.nodeCount > 0 && !watch.nodes.listKnown ? { nodesUnknown: true } : {}), containers: containers.ok ? watch.containers.cache.value : undefined, ...amContainer(watch) },
    desired: { items: snapshot.items, applicationId: appId, rules, jobStarts: starts.value },
    ...(containers.ok ? {} : { containersError: containers.error }),
  };
}

/** The attempt's AM container by fact: the proxy's word, else the RM's attempt report. */
export function amContainer(watch: Watchers): { amContainerId?: string } {
  const id = watch.attempt.cache.value?.amContainerId ?? watch.blacklist.rmAmContainer(watch.attempt.attemptId);
  return id !== undefined ? { amContainerId: id } : {};
}
