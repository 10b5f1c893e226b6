/**
 * The reconcile rule, pure: from what was observed (YARN), what is desired (the store's items and
 * the configured rules) and what the engine remembers, decide what to push, which containers to
 * release, when to wake up next, and what the API should be able to show. No I/O and no clock:
 * every rule of the pass is an input or an output here, and is unit-tested without any YARN
 * (test/sync/reconcile.unit.test.ts).
 */
import { BlockedItem } from '../model/item';
import { appliesTo, nextExpiry } from '../model/effective';
import { BlacklistDiff, DesiredPlan, DiffOrigin, NodeView, blacklistSet, diffWith, isEmptyDiff, planWith, runningByRack } from './desired';
import { EvacuationPhase, EvacuationPlan, EvacuationStatus, StatusContext, evacuationStatus, stepTargets } from './evacuation';
import { ReleaseKind, StepDecision, StepRules, decideSteps } from './evacuation-steps';
import { FlinkKnowledge } from './flink-view';
import { JobStart, JobStarts } from './evacuation-starts';
import { EvacuationClock, Memory, evacuationClock, rememberRunning, seedHighWater } from './memory';
import { ContainerIndex } from './watch-containers';
import { evacuating, evacuationStartsInSteps, idleOnMarkedNodes, markedTaskManagers, planEvacuationsInSteps } from './evacuation-plans';
import { Steps, finish, stepEnds } from './steps';

/** The configured rules the decision depends on. */
export interface Rules {
  maxBlockedFraction: number;
  /** Default evacuation timeout (ms) when an item has none; negative = forever. */
  evacuationTimeoutMs: number;
  /** Most containers released in one proxy call; one call per pass. */
  releaseBatchSize: number;
  /** How long the highest RUNNING-node count is remembered as the cap's floor. */
  capNodeCountMemoryMs: number;
  /** How task managers leave: the disruption budget and the checkpoint before a release (evacuation-steps.ts). */
  steps: StepRules;
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
  /** The job's Flink as last read (absent: not used). */
  flink?: FlinkKnowledge;
}

/** Something worth one log line, said once when it happens. */
export type SyncEvent =
  | { kind: 'deferred'; id: string; capacity: number; runningNodes: number }
  | { kind: 'undeferred'; id: string; enforced: boolean }
  | { kind: 'phase'; id: string; from: EvacuationPhase | undefined; status: EvacuationStatus };

export interface Decision {
  /** The blacklist change to send, absent when there is nothing to send. */
  push?: BlacklistDiff;
  /** The two plan sets `push` was computed between, when it was (watch-blacklist.ts appliedIs). */
  pushOrigin?: DiffOrigin;
  /** Containers to release by this pass (one batch), every one waiting (this batch first), and how each goes. */
  releases: { batch: string[]; waiting: string[]; kinds: ReadonlyMap<string, ReleaseKind> };
  /** Jobs to trigger a checkpoint for before a release step (evacuation-steps.ts). */
  triggers: string[];
  /** Something waits on a task manager (an evacuation not READY, a MARK_BLOCKED place holding one): Flink is worth reading. */
  flinkWanted: boolean;
  /** The task managers MARK_BLOCKED places hold (released once idle: the poll looks for that between passes). */
  markedTaskManagers: ReadonlySet<string>;
  /** When the desired state changes by itself: the next end of an item in scope, each evacuation's deadline. */
  deadlines: Map<string, number>;
  /** What the API shows: the plan and every evacuation (absent when the containers are unknown). */
  view: { plan: DesiredPlan; pending: BlacklistDiff; evacuations?: EvacuationsView };
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

/** The evacuations of a pass: each EVACUATE item's plan, the job-wide decision, and the statuses as decided. */
export interface EvacuationsView {
  plans: Map<string, EvacuationPlan>;
  steps: StepDecision;
  statuses: Map<string, EvacuationStatus>;
}

/** No containers (shared: planEvacuation only reads it). */


/** `now` is the wall clock (ends, starts); `mono` the monotonic clock grace periods are measured on (absent: `now`). */
export function reconcile(observed: Observed, desired: Desired, memory: Memory, now: number, mono: number = now): Decision {
  return finish(reconcileInSteps(observed, desired, memory, now, mono));
}

/** reconcile, handing control back after every STEP_ITEMS evacuations of each of its loops (steps.ts). */
export function* reconcileInSteps(observed: Observed, desired: Desired, memory: Memory, now: number, mono: number = now): Steps<Decision> {
  const { plan, pending, push, pushOrigin, memory: next, events, deadlines } = decideBlacklist(observed, desired, memory, now);
  const { starts, since } = yield* evacuationStartsInSteps(evacuating(plan), desired.jobStarts ?? new Map(), observed.actual, desired.applicationId, now);
  const clocks = new Map<string, EvacuationClock>();
  for (const [id, at] of since) {
    clocks.set(id, evacuationClock(memory.evacuationClocks.get(id), at, now, mono));
    if (stepEnds(clocks.size)) yield;
  }
  const decision: Decision = { releases: { batch: [], waiting: [], kinds: new Map() }, triggers: [], flinkWanted: false, markedTaskManagers: new Set(), deadlines, view: { plan, pending }, memory: { ...next, evacuationClocks: clocks }, events, starts, clocks };
  if (push) decision.push = push;
  if (pushOrigin) decision.pushOrigin = pushOrigin;
  if (observed.containers) yield* decideEvacuations(decision, observed, desired, { now, mono });
  return decision;
}

/** The part of a decision that does not depend on the containers or Flink: what YARN's blacklist should hold. */
export interface BlacklistDecision {
  plan: DesiredPlan;
  /** The change from what YARN has to the plan (empty: nothing to send). */
  pending: BlacklistDiff;
  /** `pending` when there is something to send. */
  push?: BlacklistDiff;
  pushOrigin?: DiffOrigin;
  /** The memory after it (the cap's high water, deferrals, the plan's memo); evacuations untouched. */
  memory: Memory;
  /** The cap's deferrals and what it let go. */
  events: SyncEvent[];
  /** The next end of an item in scope. */
  deadlines: Map<string, number>;
}

/**
 * The blacklist alone: the plan under the safety cap and its difference from YARN's. A pass that
 * reads Flink pushes this first and decides the evacuations once, after that read (reconcile).
 */
export function decideBlacklist(observed: Observed, desired: Desired, memory: Memory, now: number): BlacklistDecision {
  const { rules, applicationId } = desired;
  const running = observed.runningNodes ?? countRunning(observed.nodes);
  const seeded = memory.runningHighWater ?? seedHighWater(undefined, runningOnYarn(observed), rules.maxBlockedFraction, now);
  const cap = rememberRunning(seeded, running, now, rules.capNodeCountMemoryMs);
  const planned = planWith({ items: desired.items, applicationId, now, nodes: observed.nodes, maxBlockedFraction: rules.maxBlockedFraction, runningNodesFloor: cap.floor, runningNodes: running, assumeRunning: observed.nodesUnknown === true }, memory.decision);
  const plan = planned.plan;
  // Only what this sidecar may have put there is a removal candidate: a host another owner holds,
  // or held in this or the previous attempt (a new AM's proxy forgets who held what), stays.
  const theirs = (h: string) => observed.othersHold.has(h) || memory.othersSeen.has(h) || memory.inheritedOthers.has(h);
  const maybe = [...memory.maybeOnYarn, ...observed.schedulerOnly].filter((h) => !theirs(h));
  const diffed = diffWith(blacklistSet(plan), observed.actual, memory.repushAll, maybe, planned.memo);
  const pending = diffed.diff;
  const next: Memory = { ...memory, decision: diffed.memo, runningHighWater: cap.highWater, deferred: new Set(plan.deferred.map((i) => i.id)), othersSeen: seen(memory.othersSeen, observed.othersHold) };
  const deadlines = new Map<string, number>();
  const end = nextExpiry(desired.items, now, (i) => appliesTo(i, applicationId));
  if (end !== undefined) deadlines.set('expiry', end);
  const out: BlacklistDecision = { plan, pending, memory: next, events: deferralEvents(memory.deferred, plan), deadlines };
  if (!isEmptyDiff(pending)) {
    out.push = pending;
    if (diffed.origin) out.pushOrigin = diffed.origin;
  }
  return out;
}

/** The evacuations of the pass: each item's plan, the job-wide steps, the releases, triggers and statuses. */
function* decideEvacuations(decision: Decision, observed: Observed, desired: Desired, at: { now: number; mono: number }): Steps<void> {
  const containers = observed.containers!;
  const { rules } = desired;
  let next = decision.memory;
  const flink: FlinkKnowledge = observed.flink ?? { kind: 'off', why: "Flink's REST API is not used" };
  const plans = yield* planEvacuationsInSteps(evacuating(decision.view.plan), decision.clocks, containers, next.released, rules.evacuationTimeoutMs, { ...at, amContainerId: observed.amContainerId }, observed.nodes);
  const targets = [...stepTargets(plans.values(), next.released), ...idleOnMarkedNodes(decision.view.plan, flink, containers, next.released, observed)];
  const steps = decideSteps(targets, flink, next.steps, rules.steps, at.mono);
  next = { ...next, steps: steps.memory };
  const kinds = new Map(steps.release.map((r) => [r.containerId, r.kind]));
  const waiting = steps.release.map((r) => r.containerId);
  decision.releases = { batch: waiting.slice(0, rules.releaseBatchSize), waiting, kinds };
  decision.triggers = steps.trigger;
  const statuses = yield* evacuationStatusesInSteps(plans, { steps, flink, released: withReleases(next.released, decision.releases.batch, containers), kinds: steps.memory.kinds, now: at.now });
  const phases = yield* phaseEventsInSteps(next.phases, statuses);
  decision.events.push(...phases.events);
  decision.memory = { ...next, phases: phases.phases };
  // One key per instant, named by its first evacuation: the timer needs the instants, and the
  // evacuations of one batch all share one (10,000 keys were 10,000 heap entries a pass).
  const wakes = new Map<number, string>();
  for (const [id, p] of plans) if (p.wakeAt !== undefined && !wakes.has(p.wakeAt)) wakes.set(p.wakeAt, id);
  for (const [wakeAt, id] of wakes) decision.deadlines.set(`evacuation:${id}`, wakeAt);
  if (flink.kind !== 'off') {
    decision.markedTaskManagers = markedTaskManagers(decision.view.plan, containers, next.released, observed);
    // A release step in progress is judged on Flink too (gone, settled, its failover counted).
    decision.flinkWanted = decision.markedTaskManagers.size > 0 || steps.memory.step !== undefined || anyInProgress(statuses);
  }
  if (steps.wakeAt !== undefined) decision.deadlines.set('evacuation-step', at.now + Math.max(0, steps.wakeAt - at.mono));
  decision.view.evacuations = { plans, steps, statuses };
}

/** Whether any evacuation is not READY (a walk, not a copy of 10,000 statuses). */
export function anyInProgress(statuses: ReadonlyMap<string, EvacuationStatus>): boolean {
  for (const st of statuses.values()) if (st.phase !== 'READY') return true;
  return false;
}

/** The statuses of every plan under one decision (again after a release, with what was released). */
export function evacuationStatuses(plans: ReadonlyMap<string, EvacuationPlan>, ctx: StatusContext): Map<string, EvacuationStatus> {
  return finish(evacuationStatusesInSteps(plans, ctx));
}

export function* evacuationStatusesInSteps(plans: ReadonlyMap<string, EvacuationPlan>, ctx: StatusContext): Steps<Map<string, EvacuationStatus>> {
  const out = new Map<string, EvacuationStatus>();
  for (const [id, p] of plans) {
    out.set(id, evacuationStatus(p, ctx));
    if (stepEnds(out.size)) yield;
  }
  return out;
}

/** `released` with this pass's batch in it (id → host), without copying when there is none. */
export function withReleases(released: ReadonlyMap<string, string>, batch: readonly string[], containers: ContainerIndex): ReadonlyMap<string, string> {
  if (batch.length === 0) return released;
  const out = new Map(released);
  for (const id of batch) out.set(id, containers.byId.get(id)?.host ?? '');
  return out;
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

/** A phase change per evacuation since the last pass; items no longer evacuating are forgotten. */
export function phaseEvents(
  before: ReadonlyMap<string, EvacuationPhase>,
  statuses: ReadonlyMap<string, EvacuationStatus>,
): { phases: Map<string, EvacuationPhase>; events: SyncEvent[] } {
  return finish(phaseEventsInSteps(before, statuses));
}

function* phaseEventsInSteps(before: ReadonlyMap<string, EvacuationPhase>, statuses: ReadonlyMap<string, EvacuationStatus>): Steps<{ phases: Map<string, EvacuationPhase>; events: SyncEvent[] }> {
  const phases = new Map<string, EvacuationPhase>();
  const events: SyncEvent[] = [];
  for (const [id, status] of statuses) {
    phases.set(id, status.phase);
    const from = before.get(id);
    if (from !== status.phase) events.push({ kind: 'phase', id, from, status });
    if (stepEnds(phases.size)) yield;
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

export { evacuating, evacuationStarts, planEvacuations } from './evacuation-plans';
