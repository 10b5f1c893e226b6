/**
 * The reconcile rule, pure: from what was observed (YARN), what is desired (the store's items and
 * the configured rules) and what the engine remembers, decide what to push, which containers to
 * release, when to wake up next, and what the API should be able to show. No I/O and no clock:
 * every rule of the pass is an input or an output here, and is unit-tested without any YARN
 * (test/sync/reconcile.unit.test.ts).
 */
import { BlockedItem, EVACUATE } from '../model/item';
import { appliesTo, nextExpiry } from '../model/effective';
import { BlacklistDiff, DesiredPlan, NodeView, blacklistSet, diffBlacklist, hostsByRack, isEmptyDiff, planDesired, runningByRack } from './desired';
import { EvacuationDecision, EvacuationPhase, evaluateEvacuation } from './evacuation';
import { JobStart, JobStarts, freshStart, mayEvacuate, startOf } from './evacuation-starts';
import { EvacuationClock, Memory, evacuationClock, rememberRunning, seedHighWater } from './memory';
import { ContainerIndex } from './watch-containers';

/** The configured rules the decision depends on. */
export interface Rules {
  maxBlockedFraction: number;
  /** Default evacuation timeout (ms) when an item has none; negative = forever. */
  evacuationTimeoutMs: number;
  /** Most containers released in one proxy call; one call per pass. */
  releaseBatchSize: number;
  /** How long the highest RUNNING-node count is remembered as the cap's floor. */
  capNodeCountMemoryMs: number;
}

export interface Desired {
  /** The store's items as last read (the last good snapshot while the store is unreachable). */
  items: readonly BlockedItem[];
  applicationId: string | undefined;
  rules: Rules;
  /** This job's stored evacuation starts (evacuation-starts.ts); absent = none stored yet. */
  jobStarts?: JobStarts;
}

export interface Observed {
  /** What the proxy lists (or what the last successful push left there). */
  actual: ReadonlySet<string>;
  /** Hosts other owners of the AM's blacklist hold (Flink's own blocklist, …): never removed. */
  othersHold: ReadonlySet<string>;
  /** Hosts only the RM's view of the attempt lists: removed explicitly unless desired. */
  schedulerOnly: readonly string[];
  /** The cluster's nodes as last read (which blocked hosts are RUNNING). */
  nodes: readonly NodeView[];
  /** RUNNING nodes as the RM counts them now (the cap's denominator); absent = counted from `nodes`. */
  runningNodes?: number;
  /** No node list read yet: every blocked host takes a slot of the cap. */
  nodesUnknown?: boolean;
  /** The app's containers; undefined when they could not be read (no evacuation is decided). */
  containers: ContainerIndex | undefined;
  /** The attempt's AM container, when the proxy or the RM named it (never released). */
  amContainerId?: string;
}

/** Something worth one log line, said once when it happens. */
export type SyncEvent =
  | { kind: 'deferred'; id: string; capacity: number; runningNodes: number }
  | { kind: 'undeferred'; id: string; enforced: boolean }
  | { kind: 'phase'; id: string; from: EvacuationPhase | undefined; decision: EvacuationDecision };

export interface Decision {
  /** The blacklist change to send, absent when there is nothing to send. */
  push?: BlacklistDiff;
  /** Containers to release by this pass (one batch), and every one waiting (this batch first). */
  releases: { batch: string[]; waiting: string[] };
  /** When the desired state changes by itself: the next end of an item in scope, each evacuation's deadline. */
  deadlines: Map<string, number>;
  /** What the API shows: the plan and every evacuation (absent when the containers are unknown). */
  view: { plan: DesiredPlan; pending: BlacklistDiff; evacuations?: Map<string, EvacuationDecision> };
  /**
   * Evacuations of this job whose start is not stored yet: they start in this pass (stored once
   * the push went through). Item id → start.
   */
  starts: Map<string, JobStart>;
  /** When each evacuation of this pass started for this job (stored or fresh) and its monotonic zero: item id → clock. */
  clocks: Map<string, EvacuationClock>;
  /** The memory after this decision (the cap's high water, deferral and phase bookkeeping). */
  memory: Memory;
  events: SyncEvent[];
}

/** `now` is the wall clock (ends, starts); `mono` the monotonic clock grace periods are measured on (absent: `now`). */
export function reconcile(observed: Observed, desired: Desired, memory: Memory, now: number, mono: number = now): Decision {
  const { rules, applicationId } = desired;
  const running = observed.runningNodes ?? countRunning(observed.nodes);
  const seeded = memory.runningHighWater ?? seedHighWater(undefined, runningOnYarn(observed), rules.maxBlockedFraction, now);
  const cap = rememberRunning(seeded, running, now, rules.capNodeCountMemoryMs);
  const plan = planDesired({ items: desired.items, applicationId, now, nodes: observed.nodes, maxBlockedFraction: rules.maxBlockedFraction, runningNodesFloor: cap.floor, runningNodes: running, assumeRunning: observed.nodesUnknown === true });
  // Only what this sidecar may have put there is a removal candidate: a host another owner holds,
  // or held in this or the previous attempt (a new AM's proxy forgets who held what), stays.
  const theirs = (h: string) => observed.othersHold.has(h) || memory.othersSeen.has(h) || memory.inheritedOthers.has(h);
  const maybe = [...memory.maybeOnYarn, ...observed.schedulerOnly].filter((h) => !theirs(h));
  const pending = diffBlacklist(blacklistSet(plan), observed.actual, memory.repushAll, maybe);
  const events = deferralEvents(memory.deferred, plan);
  let next: Memory = { ...memory, runningHighWater: cap.highWater, deferred: new Set(plan.deferred.map((i) => i.id)), othersSeen: seen(memory.othersSeen, observed.othersHold) };
  const deadlines = new Map<string, number>();
  const end = nextExpiry(desired.items, now, (i) => appliesTo(i, applicationId));
  if (end !== undefined) deadlines.set('expiry', end);
  const { starts, since } = evacuationStarts(evacuating(plan), desired.jobStarts ?? new Map(), observed.actual, applicationId, now);
  const clocks = new Map<string, EvacuationClock>();
  for (const [id, at] of since) clocks.set(id, evacuationClock(memory.evacuationClocks.get(id), at, now, mono));
  next = { ...next, evacuationClocks: clocks };
  const decision: Decision = { releases: { batch: [], waiting: [] }, deadlines, view: { plan, pending }, memory: next, events, starts, clocks };
  if (!isEmptyDiff(pending)) decision.push = pending;
  if (observed.containers) {
    const evacuations = planEvacuations(evacuating(plan), clocks, observed.containers, next.released, rules.evacuationTimeoutMs, { now, mono, amContainerId: observed.amContainerId }, observed.nodes);
    const phases = phaseEvents(next.phases, evacuations);
    events.push(...phases.events);
    next = { ...next, phases: phases.phases };
    for (const [id, d] of evacuations) if (d.wakeAt !== undefined) deadlines.set(`evacuation:${id}`, d.wakeAt);
    decision.releases = releaseBatch(evacuations, rules.releaseBatchSize);
    decision.view.evacuations = evacuations;
    decision.memory = next;
  }
  return decision;
}

/** RUNNING nodes our entries on YARN's blacklist cover (a host, or each RUNNING node of a rack): slots the cap gave them. */
function runningOnYarn(observed: Observed): number {
  if (observed.actual.size === 0) return 0;
  const running = new Set<string>();
  for (const n of observed.nodes) if (n.state === 'RUNNING') running.add(n.host);
  const racks = runningByRack(observed.nodes);
  const covered = new Set<string>();
  for (const e of observed.actual) {
    if (running.has(e)) covered.add(e);
    for (const h of racks.get(e) ?? []) covered.add(h);
  }
  return covered.size;
}

function seen(before: ReadonlySet<string>, now: ReadonlySet<string>): ReadonlySet<string> {
  if ([...now].every((h) => before.has(h))) return before;
  return new Set([...before, ...now]);
}

function countRunning(nodes: readonly NodeView[]): number {
  let n = 0;
  for (const x of nodes) if (x.state === 'RUNNING') n++;
  return n;
}

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
export function evacuationStarts(
  items: readonly BlockedItem[],
  jobStarts: JobStarts,
  onBlacklist: ReadonlySet<string>,
  applicationId: string | undefined,
  now: number,
): { starts: Map<string, JobStart>; since: Map<string, number> } {
  const starts = new Map<string, JobStart>();
  const since = new Map<string, number>();
  for (const item of items) {
    const stored = startOf(jobStarts, item);
    if (stored !== undefined) {
      since.set(item.id, stored);
      continue;
    }
    const at = freshStart(item, onBlacklist, now);
    since.set(item.id, at);
    if (mayEvacuate(item, applicationId)) starts.set(item.id, { since: at, created: item.created.at });
  }
  return { starts, since };
}

/**
 * One decision per evacuating item, over the containers as last read; `clocks`: when each started
 * for this job and its monotonic zero (absent: it starts now).
 */
export function planEvacuations(
  items: readonly BlockedItem[],
  clocks: ReadonlyMap<string, EvacuationClock>,
  containers: ContainerIndex,
  released: ReadonlyMap<string, string>,
  defaultTimeoutMs: number,
  at: { now: number; mono: number; amContainerId?: string | undefined },
  nodes: readonly NodeView[] = [],
): Map<string, EvacuationDecision> {
  const out = new Map<string, EvacuationDecision>();
  const { now } = at;
  const am = at.amContainerId !== undefined ? { amContainerId: at.amContainerId } : {};
  // A rack evacuates every node of it (any state: a node of a failing switch may already be UNHEALTHY).
  const racks = items.some((i) => i.kind === 'rack') ? hostsByRack(nodes) : undefined;
  for (const item of items) {
    const clock = clocks.get(item.id);
    const started = clock?.since ?? now;
    const elapsedMs = clock ? at.mono - clock.zero : 0;
    if (item.kind === 'rack') {
      const hosts = racks?.get(item.id) ?? [];
      const onRack = hosts.flatMap((h) => containers.byHost.get(h) ?? []);
      out.set(item.id, evaluateEvacuation({ item, since: started, elapsedMs, containersOnNode: onRack, released, defaultTimeoutMs, now, hosts: new Set(hosts), ...am }));
      continue;
    }
    const c = item.kind === 'taskmanager' && item.containerId !== undefined ? containers.byId.get(item.containerId) : undefined;
    // A task manager item names a node and a container: release only if the container runs there
    // (a misnamed node must not release a healthy task manager somewhere else).
    const elsewhere = c && c.host !== item.node ? c.host : undefined;
    const onNode = item.kind === 'node' ? (containers.byHost.get(item.node) ?? []) : c && !elsewhere ? [c] : [];
    const d = evaluateEvacuation({ item, since: started, elapsedMs, containersOnNode: onNode, released, defaultTimeoutMs, now, ...am });
    if (elsewhere) d.status.runsOn = elsewhere;
    out.set(item.id, d);
  }
  return out;
}

/** Every container due for release, each once, in item order; the first `batchSize` go now. */
export function releaseBatch(evacuations: ReadonlyMap<string, EvacuationDecision>, batchSize: number): { batch: string[]; waiting: string[] } {
  const waiting: string[] = [];
  const seen = new Set<string>();
  for (const d of evacuations.values()) {
    for (const c of d.toRelease) {
      if (seen.has(c)) continue;
      seen.add(c);
      waiting.push(c);
    }
  }
  return { batch: waiting.slice(0, batchSize), waiting };
}

/** A phase change per evacuation since the last pass; items no longer evacuating are forgotten. */
export function phaseEvents(
  before: ReadonlyMap<string, EvacuationPhase>,
  evacuations: ReadonlyMap<string, EvacuationDecision>,
): { phases: Map<string, EvacuationPhase>; events: SyncEvent[] } {
  const phases = new Map<string, EvacuationPhase>();
  const events: SyncEvent[] = [];
  for (const [id, d] of evacuations) {
    phases.set(id, d.status.phase);
    const from = before.get(id);
    if (from !== d.status.phase) events.push({ kind: 'phase', id, from, decision: d });
  }
  return { phases, events };
}

/** Each item the cap starts holding back, and each it lets go, once. */
function deferralEvents(before: ReadonlySet<string>, plan: DesiredPlan): SyncEvent[] {
  const events: SyncEvent[] = [];
  const now = new Set<string>();
  for (const item of plan.deferred) {
    now.add(item.id);
    if (!before.has(item.id)) events.push({ kind: 'deferred', id: item.id, capacity: plan.capacity, runningNodes: plan.runningNodes });
  }
  if (before.size === 0) return events;
  const enforced = new Set(plan.enforced.map((i) => i.id));
  for (const id of before) if (!now.has(id)) events.push({ kind: 'undeferred', id, enforced: enforced.has(id) });
  return events;
}
