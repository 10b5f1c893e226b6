/**
 * Graceful evacuation of one item, pure (Hadoop's DecommissioningNodesWatcher, graceful
 * decommission):
 *
 *   containers left, waitTime < timeout (or timeout < 0)  → WAIT_CONTAINER
 *   containers left, waitTime >= timeout                  → TIMEOUT  (release them)
 *   no containers left                                    → READY
 *
 * waitTime is a duration on the monotonic clock since this job's start of the evacuation (its
 * stored start, evacuation-starts.ts, is wall-clock: the elapsed time it implies is taken once,
 * when this process first meets the start, and counted on the monotonic clock from then on;
 * memory.ts evacuationClock). A wall-clock step therefore moves no deadline. An item held back by
 * the safety cap has not started, and a timeout change, a merge or a sidecar restart does not
 * restart the clock. Timeout priority: the item's evacuationTimeout > the configured default.
 * Negative = forever; 0 = at once.
 */
import { BlockAction, BlockedItem, EVACUATE } from '../model/item';
import { FlinkKnowledge, isIdle } from './flink-view';
import { ReleaseKind, StepDecision, StepTarget, Wait } from './evacuation-steps';
import { AppContainer } from '../yarn/types';
import { parseContainerId } from '../model/ids';

/**
 * Where an evacuation (or a MARK_BLOCKED item's release of idle task managers) stands:
 *  - WAIT_CONTAINER: task managers still work there, before the deadline (idle ones go at once);
 *  - CHECKPOINTING: the deadline is reached and the job takes a checkpoint before the release;
 *  - RELEASING: released (or waiting for its release step) the way Flink survives best: idle, or
 *    right after a completed checkpoint;
 *  - TIMEOUT: released at the deadline without a fresh checkpoint (the job takes none, the
 *    checkpoint failed or was slow, or Flink could not be read);
 *  - READY: none of the job's task managers is left there.
 */
export type EvacuationPhase = 'WAIT_CONTAINER' | 'CHECKPOINTING' | 'RELEASING' | 'TIMEOUT' | 'READY';

export const EVACUATION_PHASES: readonly EvacuationPhase[] = ['WAIT_CONTAINER', 'CHECKPOINTING', 'RELEASING', 'TIMEOUT', 'READY'];

/** One evacuation as the engine last evaluated it (data; the API words it). */
export interface EvacuationStatus {
  /** The item evacuating: a node id, or `<node>/<containerId>` for one task manager. */
  itemId: string;
  node: string;
  /** MARK_BLOCKED: only idle task managers are released, never at a deadline. */
  action: BlockAction;
  phase: EvacuationPhase;
  /** Why it is not READY yet (absent when READY). */
  waiting?: Wait;
  /** Epoch ms this job's evacuation started (never reset by a timeout change or a restart). */
  since: number;
  /** Effective timeout in seconds; -1 = forever. */
  timeoutSeconds: number;
  /** Epoch ms deadline as the wall clock reads now (moved by a wall-clock step), absent when waiting forever. */
  deadline?: number;
  /** Seconds until the deadline: max(0, …); -1 forever; 0 when READY. */
  remainingSeconds: number;
  /** App containers still on the node. */
  containers: string[];
  /** Containers this sidecar asked the proxy to release (kept after they are gone). */
  released: string[];
  /** Of `containers` not released yet, by Flink's slots as last read: all slots free / some in use. */
  idle?: string[];
  busy?: string[];
  /** The checkpoint its release step waits for, or waited for. */
  checkpoint?: CheckpointStatus;
  /** The job's release step its task managers are in. */
  step?: { number: number; containers: string[] };
  /** A task manager item whose container runs on another host than the item names: that host (nothing is released). */
  runsOn?: string;
}

export interface CheckpointStatus {
  jobId: string;
  id?: number;
  status: 'IN_PROGRESS' | 'PERIODIC' | 'COMPLETED' | 'FAILED' | 'TIMED_OUT';
  detail?: string;
}

/**
 * States in which a container no longer occupies the node. The proxy reports a container it was
 * asked to release as RELEASING (or drops it); YARN reports finished ones as COMPLETE.
 */
const GONE_STATES: ReadonlySet<string> = new Set(['COMPLETE', 'COMPLETED', 'RELEASED', 'RELEASING', 'KILLED', 'FAILED', 'DONE', 'EXITED']);

/** Whether a container still occupies its node (YARN counts RUNNING and NEW; we count anything not finished). */
export function isLive(c: AppContainer): boolean {
  return !GONE_STATES.has(c.state.toUpperCase());
}

/**
 * The ApplicationMaster's container, by fact: the attempt's amContainerId (the proxy's, else the
 * RM's attempt report). It is never a target: releasing it would kill the job's AM, and this
 * sidecar with it. Numbers say nothing: after a work-preserving RM restart a worker can be
 * `…_000001` under a new epoch. Only when no one has named the AM container (an old proxy and an
 * RM whose attempts could not be read) is container 1 of its attempt taken for it, so that a
 * proxy that lists every container cannot turn an evacuation of the AM's node into a job failure.
 */
export function isAmContainer(containerId: string, amContainerId: string | undefined): boolean {
  if (amContainerId !== undefined) return containerId === amContainerId;
  const p = parseContainerId(containerId);
  return p.ok && p.value.container === 1;
}

/** A live task manager container (what `taskManagers` lists and evacuations move). */
export function isTaskManager(c: AppContainer, amContainerId: string | undefined): boolean {
  return isLive(c) && !isAmContainer(c.containerId, amContainerId);
}

/** Effective timeout in ms: item's seconds > default; any negative value is -1 (forever). */
export function evacuationTimeoutMs(item: BlockedItem, defaultMs: number): number {
  const ms = item.evacuationTimeout !== undefined ? item.evacuationTimeout * 1000 : defaultMs;
  return ms < 0 ? -1 : ms;
}

/** Whether the grace period is over, by the watcher's rule: WAIT only while waitTime < timeout; equality is the end. */
export function graceOver(elapsedMs: number, timeoutMs: number): boolean {
  if (timeoutMs < 0) return false;
  return timeoutMs === 0 || elapsedMs >= timeoutMs;
}

/** Remaining seconds as YARN's getTimeoutInSec: -1 forever, 0 when READY, else max(0, floor(left/1000)). */
export function remainingSeconds(phase: EvacuationPhase, deadline: number | undefined, now: number): number {
  if (phase === 'READY') return 0;
  if (deadline === undefined) return -1;
  return Math.max(0, Math.floor((deadline - now) / 1000));
}

export interface EvacuationInput {
  item: BlockedItem;
  /**
   * When this job's evacuation of the item started (wall clock, shown): its stored start, or now
   * for the pass that puts the node on the job's blacklist (reconcile's `starts` records it).
   */
  since: number;
  /** How long it has been going, on the monotonic clock (absent: now − since). */
  elapsedMs?: number;
  /** The app's containers as last read (any state; the gone ones are skipped). */
  containersOnNode: readonly AppContainer[];
  /** Containers this sidecar already asked YARN to release (never asked twice): id → host. */
  released: ReadonlyMap<string, string>;
  /** `released` grouped by host (releasedByHost): a pass planning many items walks `released` once, not once per item. */
  releasedOn?: ReadonlyMap<string, readonly string[]> | undefined;
  defaultTimeoutMs: number;
  now: number;
  /** A rack item's hosts (its evacuation covers each of them). */
  hosts?: ReadonlySet<string>;
  /** The attempt's AM container (isAmContainer). */
  amContainerId?: string | undefined;
}

/** One item's evacuation before the job-wide rules (evacuation-steps.ts) say what goes when. */
export interface EvacuationPlan {
  item: BlockedItem;
  since: number;
  timeoutMs: number;
  /** The wall-clock instant of the deadline as the wall clock reads now; absent when waiting forever. */
  deadline?: number;
  /** The grace period is over. */
  due: boolean;
  /** Live task managers it covers, sorted (released ones still listed included). */
  containers: string[];
  /** Of those and earlier ones, what this sidecar released for it. */
  released: string[];
  /** When the grace period ends by itself (for the deadline timer). */
  wakeAt?: number;
  runsOn?: string;
}

/**
 * One item's targets and grace period. A node item covers every live task manager of the app on
 * its host; a task manager item only its own container (and never the node).
 */
export function planEvacuation(input: EvacuationInput): EvacuationPlan {
  const { item, now, since } = input;
  const timeoutMs = item.action === EVACUATE ? evacuationTimeoutMs(item, input.defaultTimeoutMs) : -1;
  const elapsedMs = Math.max(0, input.elapsedMs ?? now - since);
  const containers: string[] = [];
  for (const c of input.containersOnNode) if (isTaskManager(c, input.amContainerId) && (item.kind !== 'taskmanager' || c.containerId === item.containerId)) containers.push(c.containerId);
  containers.sort();
  const deadline = timeoutMs >= 0 ? now + timeoutMs - elapsedMs : undefined;
  const due = graceOver(elapsedMs, timeoutMs);
  const released = input.released.size === 0 ? [] : input.releasedOn ? releasedFrom(item, input.releasedOn, input.released, input.hosts) : releasedFor(item, input.released, input.hosts);
  const plan: EvacuationPlan = { item, since, timeoutMs, due, containers, released };
  if (deadline !== undefined) plan.deadline = deadline;
  if (!due && deadline !== undefined) plan.wakeAt = deadline;
  return plan;
}

/** The task managers the job-wide rules decide on: those of each plan not released yet. */
export function stepTargets(plans: Iterable<EvacuationPlan>, released: ReadonlyMap<string, string>): StepTarget[] {
  const out: StepTarget[] = [];
  for (const p of plans) {
    const evacuate = p.item.action === EVACUATE;
    const order = p.deadline ?? Number.MAX_SAFE_INTEGER;
    for (const c of p.containers) if (!released.has(c)) out.push({ containerId: c, itemId: p.item.id, evacuate, due: p.due, order });
  }
  return out;
}

/** What the job-wide decision said, and the kinds of releases made, for the statuses. */
export interface StatusContext {
  steps: Pick<StepDecision, 'waits' | 'memory'>;
  flink: FlinkKnowledge;
  /** Containers asked to release (this pass included). */
  released: ReadonlyMap<string, string>;
  kinds: ReadonlyMap<string, ReleaseKind>;
  now: number;
}

/** The status of one item: its phase and why it waits, from the job-wide decision. */
export function evacuationStatus(plan: EvacuationPlan, ctx: StatusContext): EvacuationStatus {
  const pending: string[] = [];
  const releasedNow: string[] = [];
  for (const c of plan.containers) (ctx.released.has(c) ? releasedNow : pending).push(c);
  // plan.released is sorted and without repeats already: most statuses release nothing new.
  const released = releasedNow.length === 0 ? plan.released.slice() : [...new Set([...plan.released, ...releasedNow])].sort();
  const phase = phaseOf(plan, pending, ctx);
  const status: EvacuationStatus = {
    itemId: plan.item.id,
    node: plan.item.node,
    action: plan.item.action,
    phase,
    since: plan.since,
    timeoutSeconds: plan.timeoutMs < 0 ? -1 : plan.timeoutMs / 1000,
    remainingSeconds: remainingSeconds(phase, plan.deadline, ctx.now),
    containers: plan.containers,
    released,
  };
  if (plan.deadline !== undefined) status.deadline = plan.deadline;
  if (plan.runsOn !== undefined) status.runsOn = plan.runsOn;
  const waiting = phase === 'READY' ? undefined : waitOf(pending, plan.containers.length - pending.length, ctx);
  if (waiting) status.waiting = waiting;
  if (ctx.flink.kind === 'known' && pending.length > 0) Object.assign(status, slotLists(pending, ctx.flink));
  if (ctx.steps.memory.step && plan.containers.length > 0) Object.assign(status, stepOf(plan.containers, ctx));
  return status;
}

function phaseOf(plan: EvacuationPlan, pending: readonly string[], ctx: StatusContext): EvacuationPhase {
  if (plan.containers.length === 0) return 'READY';
  if (pending.some((c) => ctx.steps.waits.get(c)?.code === 'checkpoint')) return 'CHECKPOINTING';
  if (pending.length > 0) return plan.due ? 'RELEASING' : 'WAIT_CONTAINER';
  const forced = plan.containers.some((c) => { const k = ctx.kinds.get(c); return k === 'deadline' || k === 'fallback' || k === 'blind'; });
  return forced ? 'TIMEOUT' : 'RELEASING';
}

function waitOf(pending: readonly string[], releasing: number, ctx: StatusContext): Wait | undefined {
  for (const c of pending) {
    const w = ctx.steps.waits.get(c);
    if (w) return w;
  }
  if (releasing > 0) return { code: 'release', detail: `${releasing} task manager(s) released: waiting for YARN to report them gone` };
  return undefined;
}

function slotLists(pending: readonly string[], flink: FlinkKnowledge): { idle?: string[]; busy?: string[] } {
  if (flink.kind !== 'known' || pending.length === 0) return {};
  const tms = flink.view.taskManagers;
  return { idle: pending.filter((c) => isIdle(tms.get(c))), busy: pending.filter((c) => tms.has(c) && !isIdle(tms.get(c))) };
}

function stepOf(containers: readonly string[], ctx: StatusContext): Pick<EvacuationStatus, 'step' | 'checkpoint'> {
  const step = ctx.steps.memory.step;
  if (!step || !containers.some((c) => step.containers.includes(c))) return {};
  const out: Pick<EvacuationStatus, 'step' | 'checkpoint'> = { step: { number: step.number, containers: [...step.containers] } };
  const w = step.checkpoints[0];
  if (w) {
    const o = w.outcome;
    const status = o ? (o.status === 'COMPLETED' ? 'COMPLETED' : o.status) : w.mode === 'periodic' ? 'PERIODIC' : 'IN_PROGRESS';
    out.checkpoint = { jobId: w.jid, status, ...(o?.status === 'COMPLETED' ? { id: o.id } : {}), ...(o?.status === 'FAILED' ? { detail: o.error } : step.why ? { detail: step.why } : w.note ? { detail: w.note } : {}) };
  }
  return out;
}

/** `released` (container id → host) grouped by host, each host's ids sorted. */
export function releasedByHost(released: ReadonlyMap<string, string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [id, host] of released) {
    const ids = out.get(host);
    if (ids) ids.push(id);
    else out.set(host, [id]);
  }
  for (const ids of out.values()) ids.sort();
  return out;
}

/** releasedFor, from `released` grouped by host. */
function releasedFrom(item: BlockedItem, byHost: ReadonlyMap<string, readonly string[]>, released: ReadonlyMap<string, string>, hosts?: ReadonlySet<string>): string[] {
  if (item.kind === 'taskmanager') return releasedFor(item, released);
  if (item.kind !== 'rack') return [...(byHost.get(item.node) ?? [])];
  const out: string[] = [];
  for (const h of hosts ?? []) for (const id of byHost.get(h) ?? []) out.push(id);
  return out.sort();
}

/** What this sidecar released for an item: all of a node item's host, or a task manager's one container. */
function releasedFor(item: BlockedItem, released: ReadonlyMap<string, string>, hosts?: ReadonlySet<string>): string[] {
  if (item.kind === 'taskmanager') return item.containerId !== undefined && released.has(item.containerId) ? [item.containerId] : [];
  const out: string[] = [];
  for (const [id, host] of released) if (item.kind === 'rack' ? hosts?.has(host) : host === item.node) out.push(id);
  return out.sort();
}

/**
 * A MARK_BLOCKED item's release of idle task managers (FLIP-224: no free slot stays on a blocked
 * node), from the view of the last pass: its task managers not released yet (`taskManagers`) and
 * those released still listed. Undefined when none of the job's task managers is or was there.
 */
export function markBlockedStatus(item: BlockedItem, taskManagers: readonly string[], releasedThere: readonly string[], view: { flink?: FlinkKnowledge; waits?: ReadonlyMap<string, Wait>; stillListed: (id: string) => boolean; since: number }): EvacuationStatus | undefined {
  if (taskManagers.length === 0 && releasedThere.length === 0) return undefined;
  const releasing = releasedThere.filter(view.stillListed);
  const phase: EvacuationPhase = taskManagers.length > 0 ? 'WAIT_CONTAINER' : releasing.length > 0 ? 'RELEASING' : 'READY';
  const flink = view.flink ?? { kind: 'off' as const, why: "Flink's REST API is not used" };
  const status: EvacuationStatus = { itemId: item.id, node: item.node, action: item.action, phase, since: view.since, timeoutSeconds: -1, remainingSeconds: phase === 'READY' ? 0 : -1, containers: [...taskManagers, ...releasing].sort(), released: [...releasedThere].sort() };
  if (phase === 'WAIT_CONTAINER') status.waiting = view.waits?.get(taskManagers[0]) ?? idleWait(taskManagers[0], flink);
  else if (phase === 'RELEASING') status.waiting = { code: 'release', detail: `${releasing.length} idle task manager(s) released: waiting for YARN to report them gone` };
  Object.assign(status, slotLists(taskManagers, flink));
  return status;
}

function idleWait(containerId: string, flink: FlinkKnowledge): Wait {
  if (flink.kind === 'off') return { code: 'flink-unknown', detail: `${flink.why}: idle task managers cannot be told apart, so none is released` };
  if (flink.kind === 'unknown') return { code: 'flink-unknown', detail: `Flink's REST API cannot be read (${flink.error}): no idle task manager is released until it answers` };
  const tm = flink.view.taskManagers.get(containerId);
  if (!tm) return { code: 'busy', detail: 'not registered with Flink: waits for Flink to report it' };
  return { code: 'busy', detail: `busy (${tm.slots - tm.freeSlots} of ${tm.slots} slots in use): released once idle (FLIP-224: no free slot stays on a blocked node)` };
}

/** A status as of an earlier pass with its countdown as of `now` (the phase changes only in a pass). */
export function withCountdown(s: EvacuationStatus, now: number): EvacuationStatus {
  return { ...s, remainingSeconds: remainingSeconds(s.phase, s.deadline, now) };
}
