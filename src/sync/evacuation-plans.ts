/**
 * What evacuates this pass, pure: the evacuating items, when each started for this job, one plan
 * per item over the containers as last read, and the task managers MARK_BLOCKED places hold (the
 * idle ones FLIP-224 releases). reconcile.ts turns them into the pass's decision.
 */
import { BlockedItem, EVACUATE } from '../model/item';
import { AppContainer } from '../yarn/types';
import { DesiredPlan, NodeView, hostsByRack } from './desired';
import { EvacuationPlan, isTaskManager, planEvacuation, releasedByHost } from './evacuation';
import { StepTarget } from './evacuation-steps';
import { FlinkKnowledge, isIdle } from './flink-view';
import { JobStart, JobStarts, freshStart, mayEvacuate, startOf } from './evacuation-starts';
import { EvacuationClock } from './memory';
import { ContainerIndex } from './watch-containers';
import { Steps, finish, stepEnds } from './steps';

/** Where the job's containers stand: its AM container (never evacuated) and the cluster's nodes. */
export interface Placement {
  amContainerId?: string | undefined;
  nodes: readonly NodeView[];
}

const NONE: readonly AppContainer[] = [];

/** Items that evacuate now: effective, in scope, EVACUATE, and not held back by the cap. */
export function evacuating(plan: DesiredPlan): BlockedItem[] {
  // Two walks, not a copy of both lists then a filter: a pass calls this with every item in force.
  const out: BlockedItem[] = [];
  for (const i of plan.enforced) if (i.action === EVACUATE) out.push(i);
  for (const i of plan.taskManagers) if (i.action === EVACUATE) out.push(i);
  return out;
}

/**
 * When each evacuating item's evacuation started for this job: its stored start, or (none stored)
 * this pass — the one that has its node on this job's blacklist — which is then a start to record.
 * Another job's task manager item needs no start of ours.
 */
export function evacuationStarts(...args: Parameters<typeof evacuationStartsInSteps>): { starts: Map<string, JobStart>; since: Map<string, number> } {
  return finish(evacuationStartsInSteps(...args));
}

export function* evacuationStartsInSteps(
  items: readonly BlockedItem[],
  jobStarts: JobStarts,
  onBlacklist: ReadonlySet<string>,
  applicationId: string | undefined,
  now: number,
): Steps<{ starts: Map<string, JobStart>; since: Map<string, number> }> {
  const starts = new Map<string, JobStart>();
  const since = new Map<string, number>();
  for (const item of items) {
    const stored = startOf(jobStarts, item);
    const at = stored ?? freshStart(item, onBlacklist, now);
    since.set(item.id, at);
    if (stored === undefined && mayEvacuate(item, applicationId)) starts.set(item.id, { since: at, created: item.created.at });
    if (stepEnds(since.size)) yield;
  }
  return { starts, since };
}

/** planEvacuationsInSteps at once. */
export function planEvacuations(...args: Parameters<typeof planEvacuationsInSteps>): Map<string, EvacuationPlan> {
  return finish(planEvacuationsInSteps(...args));
}

/**
 * One plan per evacuating item, over the containers as last read; `clocks`: when each started
 * for this job and its monotonic zero (absent: it starts now).
 */
export function* planEvacuationsInSteps(
  items: readonly BlockedItem[],
  clocks: ReadonlyMap<string, EvacuationClock>,
  containers: ContainerIndex,
  released: ReadonlyMap<string, string>,
  defaultTimeoutMs: number,
  at: { now: number; mono: number; amContainerId?: string | undefined },
  nodes: readonly NodeView[] = [],
): Steps<Map<string, EvacuationPlan>> {
  const out = new Map<string, EvacuationPlan>();
  const { now } = at;
  const { amContainerId } = at;
  // What was released, by host, once for every item (a walk of `released` per item was items × released).
  const releasedOn = released.size > 0 ? releasedByHost(released) : undefined;
  // A rack evacuates every node of it (any state: a node of a failing switch may already be UNHEALTHY).
  const racks = items.some((i) => i.kind === 'rack') ? hostsByRack(nodes) : undefined;
  for (const item of items) {
    const clock = clocks.get(item.id);
    const started = clock?.since ?? now;
    const elapsedMs = clock ? at.mono - clock.zero : 0;
    if (item.kind === 'rack') {
      const hosts = racks?.get(item.id) ?? [];
      const onRack = hosts.flatMap((h) => containers.byHost.get(h) ?? []);
      out.set(item.id, planEvacuation({ item, since: started, elapsedMs, containersOnNode: onRack, released, releasedOn, defaultTimeoutMs, now, amContainerId, hosts: new Set(hosts) }));
      if (stepEnds(out.size)) yield;
      continue;
    }
    const c = item.kind === 'taskmanager' && item.containerId !== undefined ? containers.byId.get(item.containerId) : undefined;
    // A task manager item names a node and a container: release only if the container runs there
    // (a misnamed node must not release a healthy task manager somewhere else).
    const elsewhere = c && c.host !== item.node ? c.host : undefined;
    const onNode = item.kind === 'node' ? (containers.byHost.get(item.node) ?? NONE) : c && !elsewhere ? [c] : NONE;
    const p = planEvacuation({ item, since: started, elapsedMs, containersOnNode: onNode, released, releasedOn, defaultTimeoutMs, now, amContainerId });
    if (elsewhere) p.runsOn = elsewhere;
    out.set(item.id, p);
    if (stepEnds(out.size)) yield;
  }
  return out;
}

/** The task managers of the job MARK_BLOCKED places (node, rack or task manager item) hold that this sidecar has not released. */
export function markedTaskManagers(plan: DesiredPlan, containers: ContainerIndex, released: ReadonlyMap<string, string>, observed: Placement): Set<string> {
  const out = new Set<string>();
  const take = (host: string) => {
    for (const c of containers.byHost.get(host) ?? []) if (isTaskManager(c, observed.amContainerId) && !released.has(c.containerId)) out.add(c.containerId);
  };
  let racks: Map<string, string[]> | undefined;
  for (const i of plan.enforced) {
    if (i.action === EVACUATE) continue;
    if (i.kind !== 'rack') take(i.node);
    else for (const h of (racks ??= hostsByRack(observed.nodes)).get(i.id) ?? []) take(h);
  }
  for (const i of plan.taskManagers) {
    if (i.action === EVACUATE || i.containerId === undefined) continue;
    const c = containers.byId.get(i.containerId);
    if (c?.host === i.node && isTaskManager(c, observed.amContainerId) && !released.has(c.containerId)) out.add(c.containerId);
  }
  return out;
}

/**
 * FLIP-224's MARK_BLOCKED: no free slot stays on a blocked node. Only task managers Flink reports
 * idle are looked at (a few), each placed by its container: a MARK_BLOCKED node (or rack) item of
 * the plan, or a MARK_BLOCKED task manager item naming it where it runs.
 */
export function idleOnMarkedNodes(plan: DesiredPlan, flink: FlinkKnowledge, containers: ContainerIndex, released: ReadonlyMap<string, string>, observed: Placement): StepTarget[] {
  if (flink.kind !== 'known') return [];
  const idle: string[] = [];
  for (const [id, tm] of flink.view.taskManagers) if (isIdle(tm) && containers.byId.has(id) && !released.has(id) && id !== observed.amContainerId) idle.push(id);
  if (idle.length === 0) return [];
  const marked = new Map<string, string>();
  for (const i of plan.enforced) if (i.action !== EVACUATE) marked.set(i.id, i.id);
  const rackOf = new Map<string, string>();
  for (const n of observed.nodes) if (n.rack !== undefined) rackOf.set(n.host, n.rack);
  const tmItems = new Map<string, BlockedItem>();
  for (const i of plan.taskManagers) if (i.action !== EVACUATE && i.containerId !== undefined) tmItems.set(i.containerId, i);
  const out: StepTarget[] = [];
  for (const id of idle) {
    const host = containers.byId.get(id)!.host;
    const tmItem = tmItems.get(id);
    const itemId = marked.get(host) ?? marked.get(rackOf.get(host) ?? '') ?? (tmItem && tmItem.node === host ? tmItem.id : undefined);
    if (itemId !== undefined) out.push({ containerId: id, itemId, evacuate: false, due: false, order: Number.MAX_SAFE_INTEGER });
  }
  return out;
}
