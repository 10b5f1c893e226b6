/**
 * How a job's task managers leave blocked nodes so that Flink survives it, pure (FLIP-224's slot
 * rules; YARN's WAIT_CONTAINER; Nomad's drain budget). Every pass turns the task managers that
 * evacuations and MARK_BLOCKED items cover, what Flink reports and what was remembered into
 * releases, checkpoint triggers and the reason each task manager still waits:
 *
 *  - idle (every slot free in two Flink reads in a row, every job settled): released at once, no
 *    step, no checkpoint: nothing runs there. A running batch job's task manager that may still
 *    serve result partitions is not idle for this rule until its grace period is over;
 *  - busy past the deadline: released in steps of at most `maxParallel` (0 = all at once), one step
 *    at a time. A step starts only while no job is restarting and every job is settled (or has
 *    failed to settle for `stepTimeoutMs`); for a streaming job with checkpointing it first gets a
 *    checkpoint (triggered where Flink has the call and POST reaches it, else the next periodic
 *    one), released once it completes or at `checkpointTimeoutMs` from the trigger, whichever is
 *    first. The next step waits until Flink has let the released task managers go, every job is
 *    settled again and a restart was counted (a step that released busy task managers fails them
 *    over; an unchanged count is not proof), or `stepTimeoutMs` passed without a restart in progress;
 *  - Flink not readable: nothing is known to be idle, and the grace period's end releases every
 *    busy one at once, as YARN's graceful decommission does.
 * Times are monotonic ms.
 */
import { FlinkJobView, FlinkKnowledge, FlinkView, checkpoints, isIdle, isRestarting, isSettled, totalRestarts } from './flink-view';

/** One task manager an item covers. */
export interface StepTarget {
  containerId: string;
  itemId: string;
  /** MARK_BLOCKED items release idle task managers only; EVACUATE ones all, by their deadline. */
  evacuate: boolean;
  /** EVACUATE: the grace period is over. */
  due: boolean;
  /** Earlier deadlines first when a step takes only some. */
  order: number;
}

export interface StepRules {
  /** Most busy task managers of the job released per step; 0 = all of them in one. */
  maxParallel: number;
  /** The longest wait for a checkpoint before a release, from its trigger; 0 = release without one. */
  checkpointTimeoutMs: number;
  /** The longest a step waits for the job to settle before the next may start (never while it restarts). */
  stepTimeoutMs: number;
}

/** How a task manager was released: gracefully, or at the deadline without a fresh checkpoint. */
export type ReleaseKind = 'idle' | 'checkpointed' | 'deadline' | 'fallback' | 'blind';

export type WaitCode = 'busy' | 'result-partitions' | 'job-not-running' | 'budget' | 'checkpoint' | 'release' | 'flink-unknown';

export interface Wait {
  code: WaitCode;
  detail: string;
}

export type CheckpointOutcome = { status: 'COMPLETED'; id: number } | { status: 'FAILED'; error: string } | { status: 'TIMED_OUT' };

/** One job's checkpoint before a step's release. */
export interface CheckpointWait {
  jid: string;
  /** `trigger`: asked for (triggerId once the trigger answered); `periodic`: the next one after `afterId`. */
  mode: 'trigger' | 'periodic';
  triggerId?: string;
  afterId: number;
  startedAt: number;
  /** Why a trigger was not possible or failed (the wait went periodic). */
  note?: string;
  outcome?: CheckpointOutcome;
}

export interface Step {
  number: number;
  containers: readonly string[];
  startedAt: number;
  stage: 'checkpointing' | 'released';
  checkpoints: readonly CheckpointWait[];
  /** Whether busy task managers are in it: their release fails tasks over. */
  busy: boolean;
  restartsBefore?: number;
  releasedAt?: number;
  kind?: ReleaseKind;
  /** Why a step went without a fresh checkpoint. */
  why?: string;
}

export interface StepMemory {
  step?: Step;
  lastStepNumber: number;
  /** Task managers seen idle: container id → the Flink read (seq) that first saw it idle in this streak. */
  idleSince: ReadonlyMap<string, number>;
  /** Since when (monotonic) due task managers have waited for the job to settle before a step. */
  dueWaitingSince?: number;
  /** How each released task manager went (kept while its release is remembered: keepKinds). */
  kinds: ReadonlyMap<string, ReleaseKind>;
}

export function emptyStepMemory(): StepMemory {
  return { lastStepNumber: 0, idleSince: new Map(), kinds: new Map() };
}

export interface StepDecision {
  release: { containerId: string; kind: ReleaseKind }[];
  /** Jobs to trigger a checkpoint for now (the trigger id is taken in by afterTrigger). */
  trigger: string[];
  /** Why each target not released by this decision waits. */
  waits: Map<string, Wait>;
  memory: StepMemory;
  /** When a bound runs out by itself (monotonic): the checkpoint's or the step's. */
  wakeAt?: number;
}

interface Ctx {
  rules: StepRules;
  mono: number;
  targets: readonly StepTarget[];
  view?: FlinkView;
  settled: boolean;
  restarting: boolean;
}

/**
 * `targets`: the task managers items cover that this sidecar has not asked to release yet.
 * `memory.kinds` only grows here; the controller forgets a kind with the release it describes.
 */
export function decideSteps(all: readonly StepTarget[], flink: FlinkKnowledge, memory: StepMemory, rules: StepRules, mono: number): StepDecision {
  const unique = oncePerContainer(all);
  // Decided before but not asked yet (more than one batch, or the release failed): asked again as decided.
  const owed = unique.filter((t) => memory.kinds.has(t.containerId));
  const targets = owed.length > 0 ? unique.filter((t) => !memory.kinds.has(t.containerId)) : unique;
  const d = flink.kind !== 'known' ? blindly(targets, flink, memory) : decideKnown(targets, flink.view, memory, rules, mono);
  if (owed.length > 0) d.release.unshift(...owed.map((t) => ({ containerId: t.containerId, kind: memory.kinds.get(t.containerId)! })));
  return d;
}

/** A task manager two items cover (its node and itself) is one target, as pressing as the more pressing of the two. */
function oncePerContainer(all: readonly StepTarget[]): readonly StepTarget[] {
  const by = new Map<string, StepTarget>();
  for (const t of all) {
    const o = by.get(t.containerId);
    if (!o) by.set(t.containerId, t);
    else by.set(t.containerId, { ...o, evacuate: o.evacuate || t.evacuate, due: (o.evacuate && o.due) || (t.evacuate && t.due), order: Math.min(o.order, t.order), itemId: o.evacuate || !t.evacuate ? o.itemId : t.itemId });
  }
  return by.size === all.length ? all : [...by.values()];
}

function decideKnown(targets: readonly StepTarget[], view: FlinkView, memory: StepMemory, rules: StepRules, mono: number): StepDecision {
  const ctx: Ctx = { rules, mono, targets, view, settled: view.jobs.every(isSettled), restarting: view.jobs.some(isRestarting) };
  const d: StepDecision = { release: [], trigger: [], waits: new Map(), memory: { ...memory, idleSince: idleStreaks(memory.idleSince, targets, view) } };
  const live = new Set(targets.map((t) => t.containerId));
  const before = memory.step;
  let step = before ? advanceStep({ ...before, containers: before.stage === 'released' ? before.containers : before.containers.filter((c) => live.has(c)) }, ctx, d) : undefined;
  const held = new Set(step?.stage === 'checkpointing' ? step.containers : []);
  releaseIdle(ctx, d, held, step);
  const going = new Set(d.release.map((r) => r.containerId));
  const due = targets.filter((t) => t.evacuate && t.due && !going.has(t.containerId) && !held.has(t.containerId));
  if (!step && due.length > 0) step = startStep(due, ctx, d);
  else for (const t of due) d.waits.set(t.containerId, budgetWait(step));
  if (due.length === 0 || step) d.memory = withoutDueWait(d.memory);
  const released = new Set(d.release.map((r) => r.containerId));
  for (const t of targets) if (!d.waits.has(t.containerId) && !released.has(t.containerId)) d.waits.set(t.containerId, notYet(t, ctx));
  return finish(d, memory, step);
}

function finish(d: StepDecision, memory: StepMemory, step: Step | undefined): StepDecision {
  const kinds = new Map(memory.kinds);
  for (const r of d.release) kinds.set(r.containerId, r.kind);
  const { step: _old, ...rest } = d.memory;
  d.memory = { ...rest, kinds, ...(step ? { step } : {}) };
  return d;
}

/** The kinds of releases still reported (the controller's pruneReleased keeps the same ids). */
export function keepKinds(m: StepMemory, keep: (containerId: string) => boolean): StepMemory {
  if ([...m.kinds.keys()].every(keep)) return m;
  return { ...m, kinds: new Map([...m.kinds].filter(([c]) => keep(c))) };
}

/** The checkpoint a step waits for took its trigger id (or could not be triggered: then the next periodic one). */
export function afterTrigger(m: StepMemory, jid: string, result: { ok: true; triggerId: string } | { ok: false; error: string }): StepMemory {
  const step = m.step;
  if (!step) return m;
  const checkpoints = step.checkpoints.map((w) => {
    if (w.jid !== jid || w.mode !== 'trigger') return w;
    return result.ok ? { ...w, triggerId: result.triggerId } : { ...w, mode: 'periodic' as const, note: `the trigger failed (${result.error}); waiting for the next periodic checkpoint` };
  });
  return { ...m, step: { ...step, checkpoints } };
}

/** Without Flink nothing is known to be idle: due task managers go at once, no step, no checkpoint. */
function blindly(targets: readonly StepTarget[], flink: Exclude<FlinkKnowledge, { kind: 'known' }>, memory: StepMemory): StepDecision {
  const why = flink.kind === 'off' ? flink.why : `Flink's REST API cannot be read (${flink.error})`;
  const d: StepDecision = { release: [], trigger: [], waits: new Map(), memory: withoutDueWait({ ...memory, idleSince: new Map() }) };
  // A step waiting for its checkpoint cannot be judged any more: its task managers go now.
  const pending = new Set(memory.step?.stage === 'checkpointing' ? memory.step.containers : []);
  for (const t of targets) {
    if ((t.evacuate && t.due) || pending.has(t.containerId)) d.release.push({ containerId: t.containerId, kind: 'blind' });
    else d.waits.set(t.containerId, { code: 'flink-unknown', detail: t.evacuate ? `${why}: idle task managers cannot be told apart; released at the deadline` : `${why}: idle task managers cannot be told apart, so none is released` });
  }
  return finish(d, memory, undefined);
}

/** Each target's idle streak: kept while Flink keeps reporting it idle, started at the first read that did. */
function idleStreaks(before: ReadonlyMap<string, number>, targets: readonly StepTarget[], view: FlinkView): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of targets) if (isIdle(view.taskManagers.get(t.containerId))) out.set(t.containerId, before.get(t.containerId) ?? view.seq);
  return out;
}

/** Idle task managers go at once when nothing could be about to use them (no step recovering, every job settled). */
function releaseIdle(ctx: Ctx, d: StepDecision, held: ReadonlySet<string>, step: Step | undefined): void {
  const view = ctx.view!;
  for (const t of ctx.targets) {
    const since = d.memory.idleSince.get(t.containerId);
    if (since === undefined || held.has(t.containerId)) continue;
    const pin = pinnedBy(view.jobs, t.containerId);
    if (pin && !(t.evacuate && t.due)) {
      d.waits.set(t.containerId, { code: 'result-partitions', detail: `idle, but batch job ${pin.name || pin.jid} may still read result partitions from it${t.evacuate ? '; released at the deadline' : '; released once the job no longer needs them'}` });
      continue;
    }
    if (pin || !ctx.settled || step?.stage === 'released') continue;
    if (since >= view.seq) {
      d.waits.set(t.containerId, { code: 'busy', detail: 'idle in the last read of Flink: released once a second read agrees' });
      continue;
    }
    d.release.push({ containerId: t.containerId, kind: 'idle' });
  }
}

function pinnedBy(jobs: readonly FlinkJobView[], containerId: string): FlinkJobView | undefined {
  return jobs.find((j) => j.type === 'BATCH' && j.state === 'RUNNING' && j.pinned?.has(containerId));
}

/** A step in progress: its checkpoint answered or ran out (release), or its release is over (gone). */
function advanceStep(step: Step, ctx: Ctx, d: StepDecision): Step | undefined {
  if (step.stage === 'checkpointing') return checkpointStage(step, ctx, d);
  const view = ctx.view!;
  const gone = step.containers.every((c) => !view.taskManagers.has(c));
  const restarts = totalRestarts(view.jobs);
  const counted = !step.busy || restarts === undefined || step.restartsBefore === undefined || restarts > step.restartsBefore;
  if (gone && ctx.settled && counted) return undefined;
  if (ctx.mono - (step.releasedAt ?? step.startedAt) >= ctx.rules.stepTimeoutMs && !ctx.restarting) return undefined;
  d.wakeAt = min(d.wakeAt, (step.releasedAt ?? step.startedAt) + ctx.rules.stepTimeoutMs);
  return step;
}

function checkpointStage(step: Step, ctx: Ctx, d: StepDecision): Step {
  const view = ctx.view!;
  const checkpoints = step.checkpoints.map((w) => (w.outcome ? w : { ...w, ...outcomeOf(w, view, ctx) }));
  const failed = checkpoints.find((w) => w.outcome !== undefined && w.outcome.status !== 'COMPLETED');
  const done = checkpoints.every((w) => w.outcome?.status === 'COMPLETED');
  if (!failed && !done) {
    // A trigger decided by a pass that did not get to send it (its push failed) is sent again.
    for (const w of checkpoints) if (w.mode === 'trigger' && w.triggerId === undefined) d.trigger.push(w.jid);
    for (const c of step.containers) d.waits.set(c, checkpointWait(checkpoints, ctx.mono));
    d.wakeAt = min(d.wakeAt, Math.min(...checkpoints.map((w) => w.startedAt + ctx.rules.checkpointTimeoutMs)));
    return { ...step, checkpoints };
  }
  const kind: ReleaseKind = failed ? 'fallback' : 'checkpointed';
  for (const c of step.containers) d.release.push({ containerId: c, kind });
  const why = failed ? fallbackWhy(failed, ctx.rules.checkpointTimeoutMs) : undefined;
  return { ...step, checkpoints, stage: 'released', releasedAt: ctx.mono, kind, ...(why ? { why } : {}), ...restartsNow(view) };
}

function outcomeOf(w: CheckpointWait, view: FlinkView, ctx: Ctx): { outcome?: CheckpointOutcome } {
  const job = view.jobs.find((j) => j.jid === w.jid);
  if (!job) return { outcome: { status: 'FAILED', error: 'the job is no longer running' } };
  if (w.mode === 'trigger' && w.triggerId !== undefined) {
    const t = view.triggers.get(w.jid);
    if (t?.triggerId === w.triggerId && t.result.status === 'COMPLETED') return { outcome: { status: 'COMPLETED', id: t.result.checkpointId } };
    if (t?.triggerId === w.triggerId && t.result.status === 'FAILED') return { outcome: { status: 'FAILED', error: t.result.error } };
  }
  const latest = job.latestCheckpoint;
  if (latest !== undefined && latest.id > w.afterId && (w.mode === 'periodic' || w.triggerId !== undefined)) return { outcome: { status: 'COMPLETED', id: latest.id } };
  if (ctx.mono - w.startedAt >= ctx.rules.checkpointTimeoutMs) return { outcome: { status: 'TIMED_OUT' } };
  return {};
}

function fallbackWhy(w: CheckpointWait, timeoutMs: number): string {
  if (w.outcome?.status === 'FAILED') return `checkpoint of job ${w.jid} failed (${w.outcome.error}): released without it`;
  return `checkpoint of job ${w.jid} did not complete within ${timeoutMs / 1000} s: released without it`;
}

function checkpointWait(waits: readonly CheckpointWait[], mono: number): Wait {
  const w = waits.find((x) => x.outcome === undefined) ?? waits[0];
  const age = `${((mono - w.startedAt) / 1000).toFixed(1)} s`;
  const what = w.mode === 'trigger' ? `the checkpoint triggered ${age} ago` : `the next periodic checkpoint (after ${w.afterId}), waited for ${age}${w.note ? `; ${w.note}` : ''}`;
  return { code: 'checkpoint', detail: `released once ${what} of job ${w.jid} completes` };
}

/** A new step: the earliest due task managers up to the budget; a checkpoint first where the job takes them. */
function startStep(due: readonly StepTarget[], ctx: Ctx, d: StepDecision): Step | undefined {
  const view = ctx.view!;
  if (ctx.restarting || !ctx.settled) {
    const since = d.memory.dueWaitingSince ?? ctx.mono;
    d.memory = { ...d.memory, dueWaitingSince: since };
    if (ctx.restarting || ctx.mono - since < ctx.rules.stepTimeoutMs) {
      const wait = jobWait(view.jobs, ctx.restarting);
      for (const t of due) d.waits.set(t.containerId, wait);
      if (!ctx.restarting) d.wakeAt = min(d.wakeAt, since + ctx.rules.stepTimeoutMs);
      return undefined;
    }
  }
  const sorted = [...due].sort((a, b) => a.order - b.order || (a.containerId < b.containerId ? -1 : 1));
  const unique = [...new Set(sorted.map((t) => t.containerId))];
  const take = ctx.rules.maxParallel > 0 ? unique.slice(0, ctx.rules.maxParallel) : unique;
  for (const c of unique.slice(take.length)) d.waits.set(c, { code: 'budget', detail: `waits for its step: at most ${ctx.rules.maxParallel} task manager(s) of the job are released at a time` });
  const busy = take.some((c) => !isIdle(view.taskManagers.get(c)));
  const number = d.memory.lastStepNumber + 1;
  d.memory = { ...d.memory, lastStepNumber: number };
  const base: Step = { number, containers: take, startedAt: ctx.mono, stage: 'checkpointing', checkpoints: [], busy, ...restartsNow(view) };
  const jobs = busy && ctx.rules.checkpointTimeoutMs > 0 ? view.jobs.filter(checkpoints) : [];
  if (jobs.length === 0) {
    for (const c of take) d.release.push({ containerId: c, kind: 'deadline' });
    return { ...base, stage: 'released', releasedAt: ctx.mono, kind: 'deadline' };
  }
  const waits = jobs.map((j): CheckpointWait => checkpointFor(j, view, ctx.mono));
  for (const w of waits) if (w.mode === 'trigger') d.trigger.push(w.jid);
  for (const c of take) d.waits.set(c, checkpointWait(waits, ctx.mono));
  d.wakeAt = min(d.wakeAt, ctx.mono + ctx.rules.checkpointTimeoutMs);
  return { ...base, checkpoints: waits };
}

function checkpointFor(job: FlinkJobView, view: FlinkView, mono: number): CheckpointWait {
  const afterId = job.latestCheckpoint?.id ?? 0;
  if (view.canTrigger) return { jid: job.jid, mode: 'trigger', afterId, startedAt: mono };
  const note = view.baseUrl.includes('/proxy/') ? "the RM's web proxy passes no POST, so no checkpoint can be triggered" : `Flink ${view.version ?? '(version unknown)'} has no checkpoint trigger (1.17 and later do)`;
  return { jid: job.jid, mode: 'periodic', afterId, startedAt: mono, note };
}

function restartsNow(view: FlinkView): { restartsBefore?: number } {
  const n = totalRestarts(view.jobs);
  return n !== undefined ? { restartsBefore: n } : {};
}

function jobWait(jobs: readonly FlinkJobView[], restarting: boolean): Wait {
  const j = jobs.find((x) => (restarting ? isRestarting(x) : !isSettled(x)));
  const name = j ? `job ${j.name || j.jid}` : 'the job';
  const t = j?.tasks;
  const detail = restarting ? `${name} is ${j?.state ?? 'restarting'}: no release step starts until it runs again` : `${name} is not running every task yet (${t ? `${t.running} of ${t.total} running` : 'tasks unknown'}): the step waits for it`;
  return { code: 'job-not-running', detail };
}

function budgetWait(step: Step | undefined): Wait {
  if (!step) return { code: 'budget', detail: 'waits for the next release step' };
  const what = step.stage === 'checkpointing' ? 'its checkpoint' : 'the job to run again with every task, the released task managers gone from Flink and their failover counted';
  return { code: 'budget', detail: `waits for step ${step.number} (${step.containers.length} task manager(s)) to end: ${what}` };
}

/** Why a target that is neither released nor held by a step waits (before its deadline, or MARK_BLOCKED). */
function notYet(t: StepTarget, ctx: Ctx): Wait {
  if (ctx.restarting || (!ctx.settled && ctx.view?.jobs.length)) return jobWait(ctx.view!.jobs, ctx.restarting);
  const tm = ctx.view?.taskManagers.get(t.containerId);
  if (ctx.view && !tm) return { code: 'busy', detail: 'not (or no longer) registered with Flink: waits for Flink to report it' };
  const used = tm ? `${tm.slots - tm.freeSlots} of ${tm.slots} slots in use` : 'busy';
  return { code: 'busy', detail: t.evacuate ? `busy (${used}): released once idle or at the deadline` : `busy (${used}): released once idle (FLIP-224: no free slot stays on a blocked node)` };
}

function withoutDueWait(m: StepMemory): StepMemory {
  if (m.dueWaitingSince === undefined) return m;
  const { dueWaitingSince: _gone, ...rest } = m;
  return rest;
}

function min(a: number | undefined, b: number): number {
  return a === undefined ? b : Math.min(a, b);
}
