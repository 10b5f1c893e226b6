/**
 * One reconcile pass, level-triggered like a Kubernetes controller, in three steps:
 *   observe  — the watchers refresh their caches, each by its own read policy (pass-observe.ts);
 *   decide   — the pure rule (reconcile.ts) turns observed + desired + memory into actions, the
 *              evacuations on this pass's read of Flink (pass-flink.ts);
 *   execute  — the executor applies them (executor.ts) and the memory takes in the outcomes.
 * A pass is idempotent and can run any number of times; the engine (engine.ts) decides *when*.
 * This file only wires the steps and holds what a pass leaves for the next (the memory, what the
 * view shows: pass-shown.ts); no rule lives here.
 */
import { monotonicNow } from '../core/clock';
import { BlockedItem } from '../model/item';
import { BlacklistDiff, DesiredPlan, blacklistSet } from './desired';
import { EvacuationStatus, isTaskManager, withCountdown } from './evacuation';
import { Memory, afterNewAttempt, afterPush, afterRelease, emptyMemory, pruneReleased } from './memory';
import { BlacklistDecision, Decision, anyInProgress, decideBlacklist, evacuationStatusesInSteps, reconcileInSteps } from './reconcile';
import { STEP_ITEMS, inTurns, nextTurn } from './steps';
import { FlinkSide } from './flink-side';
import { PushOutcome } from './executor';
import { GoneSweep } from './gone-job-sweeps';
import { ChangeReason, ControllerDeps, ControllerParts, PassOutcome, controllerParts } from './controller-parts';
import { Observation, amContainer, observe } from './pass-observe';
import { decideWithFlink } from './pass-flink';
import { Shown, auditReleases, buildView, countPhases, emptyShown, logEvents, showEvacuations } from './pass-shown';
import { SincePass, changeReason } from './poll-changes';
import { SyncView } from './view';
import type { ContainersKnown } from './sync-port';

/** The decision before the push: the blacklist alone while Flink is to be read, else the whole one. */
interface BeforePush {
  first: BlacklistDecision;
  decided?: Decision;
}

export class Controller {
  private readonly parts: ControllerParts;
  /** Gone jobs' records, looked for beside the passes (engine.idle() waits for a sweep running). */
  readonly gone: GoneSweep;
  /** Flink's JobManager as the evacuations read it, and the checkpoints they trigger. */
  readonly flink: FlinkSide;
  private memory: Memory = emptyMemory();
  private viewCache: SyncView | undefined;
  /** What the view shows, as of the last pass. */
  private shown: Shown = emptyShown();
  /** The task managers MARK_BLOCKED places held at the last decision (the poll looks for idle ones). */
  private marked: ReadonlySet<string> = new Set();
  /** What a poll reads of the last pass, as it stands at each read. */
  private readonly sincePass: SincePass;

  constructor(private readonly deps: ControllerDeps) {
    this.parts = controllerParts(deps);
    this.gone = this.parts.gone;
    this.flink = this.parts.flink;
    this.sincePass = { statuses: () => this.shown.statuses, memory: () => this.memory, marked: () => this.marked };
  }

  get applicationId(): string | undefined {
    return this.parts.watch.attempt.applicationId;
  }

  /**
   * Forget what YARN has and the containers: the next pass re-reads them (full resync). The node
   * list and counts keep their own read policies: they come from the RM, which every job shares.
   */
  requestFullResync(): void {
    this.viewCache = undefined;
    this.parts.watch.blacklist.invalidate();
    this.parts.watch.containers.cache.invalidate();
  }

  async pass(): Promise<PassOutcome> {
    const out = await this.run();
    this.viewCache = undefined;
    const { metrics, clock } = this.deps;
    metrics.passes.inc({ result: out.result === 'synced' ? 'success' : 'failure' });
    if (out.result === 'failed') {
      // Whatever failed, we no longer know what YARN has (the proxy or the AM may have restarted):
      // the next pass reads it again, the RM's view included.
      this.parts.watch.blacklist.invalidate();
      this.shown.lastFailure = { stage: out.stage, error: out.error };
    } else if (!out.degraded) {
      this.shown.lastFailure = undefined;
      this.shown.lastSuccessfulSync = clock.now();
      metrics.lastSuccessfulSync.set(this.shown.lastSuccessfulSync / 1000);
    }
    return out;
  }

  private async run(): Promise<PassOutcome> {
    const seen = await observe(this.parts, this.deps.clock.now(), () => this.onNewAttempt());
    if (!seen.ok) return seen.failed;
    const { first, decided } = await this.decideBeforePush(seen);
    const now = this.deps.clock.now();
    const pushed = await this.parts.executor.push(first.push);
    const pushFailure = this.takePush(pushed, first, now);
    if (pushFailure) return pushFailure;
    const decision = decided ?? this.adopt(await decideWithFlink(this.parts, seen, first.plan, this.memory, this.shown.statuses));
    // A turn of the event loop between the CPU-heavy steps of a pass over many evacuations: the
    // API's answers (and /healthz) go out in between.
    if (decision.clocks.size >= STEP_ITEMS) await nextTurn();
    await this.recordStarts(seen.desired.items, decision);
    // The blacklist is applied; evacuations must wait for a container list read by this pass.
    if (seen.containersError !== undefined) return { result: 'failed', stage: 'containers', error: seen.containersError };
    const out = await this.release(decision, pushed);
    if (decision.triggers.length > 0) this.memory = { ...this.memory, steps: await this.flink.trigger(decision.triggers, this.memory.steps, this.memory.steps.step?.number) };
    return out;
  }

  /**
   * The blacklist does not depend on Flink, so it goes out before any read of Flink (or of the
   * RM's report that locates it): a slow JobManager never holds a block back. What the
   * evacuations decide waits for that read, so they are decided once, after it.
   */
  private async decideBeforePush(seen: Extract<Observation, { ok: true }>): Promise<BeforePush> {
    const { clock } = this.deps;
    if (this.flink.mayRead(monotonicNow(clock), this.waitedOnTaskManagers())) return { first: this.blacklistFirst(seen) };
    const decided = await inTurns(reconcileInSteps({ ...seen.observed, flink: this.flink.knowledge }, seen.desired, this.memory, clock.now(), monotonicNow(clock)));
    const first: BlacklistDecision = { plan: decided.view.plan, pending: decided.view.pending, memory: decided.memory, events: decided.events, deadlines: decided.deadlines, ...(decided.push ? { push: decided.push } : {}), ...(decided.pushOrigin ? { pushOrigin: decided.pushOrigin } : {}) };
    // This pass's own decision is the judge: one that waits on a task manager is decided again on a
    // read of Flink made now (a remembered "nothing wanted" kept later passes on an old read).
    if (this.flink.mayRead(monotonicNow(clock), decided.flinkWanted)) return { first: this.showBeforeRead(first) };
    this.adopt(decided);
    return { first, decided };
  }

  /** The blacklist alone, shown while Flink is read; the evacuations are decided once, after the read. */
  private blacklistFirst(seen: Extract<Observation, { ok: true }>): BlacklistDecision {
    return this.showBeforeRead(decideBlacklist(seen.observed, seen.desired, this.memory, this.deps.clock.now()));
  }

  /** Shows the plan to be pushed while Flink is read; its memo only saves work (the decision after the read finds this plan in it). */
  private showBeforeRead(first: BlacklistDecision): BlacklistDecision {
    this.showPlan(first.plan, first.pending);
    this.memory = { ...this.memory, decision: first.memory.decision };
    return first;
  }

  /** Whether the last pass left something waiting on a task manager (what its decision's flinkWanted said). */
  private waitedOnTaskManagers(): boolean {
    return this.memory.steps.step !== undefined || this.marked.size > 0 || anyInProgress(this.shown.statuses);
  }

  /** A new attempt's client starts empty: re-read its list, re-push, remove what the old one had. */
  private onNewAttempt(): void {
    const { watch } = this.parts;
    this.memory = afterNewAttempt(this.memory, watch.blacklist.cache.value?.actual ?? []);
    this.flink.watcher.forget();
    watch.blacklist.invalidate();
    watch.containers.cache.invalidate();
  }

  /** Shows a decision's plan (while what else it decides waits on Flink), the pending diff with it. */
  private showPlan(plan: DesiredPlan, pending: BlacklistDiff): void {
    this.shown.plan = plan;
    this.shown.pending = pending;
    this.deps.metrics.deferredItems.set(plan.deferred.length);
  }

  /** Takes in the decision before acting on it: memory, view, deadlines, log lines, gauges. */
  private adopt(d: Decision): Decision {
    this.flink.noteOutcomes(this.memory.steps, d.memory.steps);
    this.memory = d.memory;
    this.shown.pendingReleases = d.releases.waiting;
    this.shown.deadlines = d.deadlines;
    this.marked = d.markedTaskManagers;
    this.showPlan(d.view.plan, d.view.pending);
    logEvents(this.parts, d.events);
    return d;
  }

  /** After the push: YARN now has the plan, or we no longer know what it has (re-read next pass). */
  private takePush(pushed: PushOutcome, d: BlacklistDecision, now: number): PassOutcome | undefined {
    const plan = d.plan;
    if (pushed.result === 'failed') {
      this.memory = afterPush(this.memory, { ok: false, attempted: pushed.diff });
      return { result: 'failed', stage: 'push', error: pushed.error };
    }
    this.memory = afterPush(this.memory, { ok: true });
    // Nothing pushed: the proxy already holds the plan, and the belief read this pass stands (a
    // fresh copy of it would make the next poll read and parse the whole list again: megabytes
    // at 100,000 hosts).
    if (pushed.result === 'pushed') this.parts.watch.blacklist.wrote(plan.blacklist, now, { change: pushed.diff, write: pushed.write, ...(d.pushOrigin ? { origin: d.pushOrigin } : {}) }, blacklistSet(plan));
    this.shown.pending = { additions: [], removals: [] };
    // Answers given while the pass goes on (it may still read Flink) see the plan YARN now has.
    this.viewCache = undefined;
    return undefined;
  }

  /**
   * The nodes are on this job's YARN blacklist now: their evacuations start, and the job's record
   * keeps them (a failure is logged and retried after the next pass; the starts stay in memory).
   */
  private async recordStarts(items: readonly BlockedItem[], d: Decision): Promise<void> {
    const out = await this.parts.starts.record(items, d.starts);
    if (out.result === 'failed') this.deps.logger.warn(`${out.error}; kept in memory and written after the next pass`);
    this.gone.start(items, this.parts.watch.attempt.applicationId, this.deps.clock.now());
  }

  /** Releases one batch, then re-evaluates so the view shows what was just released. */
  private async release(d: Decision, pushed: PushOutcome): Promise<PassOutcome> {
    const { batch, waiting, kinds } = d.releases;
    const out = await this.parts.executor.release(batch);
    const containers = this.parts.watch.containers.cache.value;
    const evac = d.view.evacuations;
    if (out.result === 'released' && containers) {
      this.memory = afterRelease(this.memory, [...out.released, ...out.unknown], containers);
      auditReleases(this.parts, out.released, kinds, evac);
      this.shown.pendingReleases = waiting.slice(batch.length);
    }
    // The evacuations are shown as their releases came out, so a reader never sees a release that
    // failed as done, nor one merely in flight.
    // Nothing released: the statuses are the decision's own (decided with this very memory).
    if (evac) showEvacuations(this.shown, evac, out.result === 'nothing-to-release' ? evac.statuses : await inTurns(evacuationStatusesInSteps(evac.plans, { steps: evac.steps, flink: this.flink.knowledge, released: this.memory.released, kinds: this.memory.steps.kinds, now: this.deps.clock.now() })));
    if (out.result === 'failed') return { result: 'failed', stage: 'release', error: out.error };
    this.forgetReleases(d, containers?.byId ?? new Map());
    countPhases(this.parts, this.shown.statuses);
    return {
      result: 'synced',
      ...(pushed.result === 'pushed' ? { pushed: pushed.diff } : {}),
      released: out.result === 'released' ? out.released : [],
      more: waiting.length > batch.length,
      degraded: this.parts.watch.store.degraded,
    };
  }

  /** Forgets the releases nobody reports any more and the proxy no longer lists. */
  private forgetReleases(d: Decision, listed: ReadonlyMap<string, unknown>): void {
    const reported = new Set<string>();
    for (const e of this.shown.statuses.values()) for (const c of e.released) reported.add(c);
    // What MARK_BLOCKED items released is said while they are in force (their status lists it).
    const blocked = blacklistSet(d.view.plan);
    const marked = new Set(d.view.plan.taskManagers.map((i) => i.containerId));
    for (const [c, host] of this.memory.released) if (blocked.has(host) || marked.has(c)) reported.add(c);
    this.memory = pruneReleased(this.memory, listed, reported);
  }

  /** What a poll tick checks between passes (poll-changes.ts). */
  async checkForChanges(): Promise<ChangeReason | undefined> {
    const reason = await changeReason(this.parts, this.sincePass);
    this.viewCache = undefined;
    return reason;
  }

  /** Whether a release step waits on a triggered checkpoint that has not answered yet. */
  awaitsCheckpoint(): boolean {
    return this.flink.pending(this.memory.steps).length > 0;
  }

  /** Asks about the triggered checkpoints; true once one has answered (a pass should take it in). */
  async checkpointAnswered(): Promise<boolean> {
    const over = await this.flink.checkTriggers(this.memory.steps);
    if (over) this.viewCache = undefined;
    return over;
  }

  /** When the desired set changes by itself, as the last decision computed it. */
  deadlines(): Map<string, number> {
    return this.shown.deadlines;
  }

  synced(): boolean {
    return this.shown.lastSuccessfulSync !== undefined;
  }

  /** The containers for an answer that needs them (SyncFacade.containersKnown). */
  async containersKnown(): Promise<ContainersKnown> {
    const r = await this.parts.watch.containers.forAnswer(this.deps.clock.now());
    return r.ok ? { known: true } : { known: false, why: `the application's containers could not be read: ${r.error}` };
  }

  /** Where a live container of the app runs, as last read. */
  containerHost(containerId: string): string | undefined {
    const c = this.parts.watch.containers.cache.value?.byId.get(containerId);
    return c && !this.memory.released.has(containerId) ? c.host || c.nodeId.split(':')[0] : undefined;
  }

  /** The app's live task managers on one host, sorted (FLIP-224's `taskManagers`). */
  taskManagersOn(node: string): string[] {
    const { watch } = this.parts;
    const list = watch.containers.cache.value?.byHost.get(node) ?? [];
    // A container released by this process is gone, even before the next read says so.
    return list
      .filter((c) => isTaskManager(c, amContainer(watch).amContainerId) && !this.memory.released.has(c.containerId))
      .map((c) => c.containerId)
      .sort();
  }

  /** The evacuations still in progress, countdown as of now (for the periodic status log). */
  activeEvacuations(): EvacuationStatus[] {
    const now = this.deps.clock.now();
    return [...this.shown.statuses.values()].filter((s) => s.phase !== 'READY').map((s) => withCountdown(s, now));
  }

  /**
   * The state as of the last pass or poll. The same object until the next one ends (GET /blocklist
   * asks once per item), and a pass in progress is never seen half done.
   */
  view(): SyncView {
    return (this.viewCache ??= buildView(this.parts, this.shown, this.memory));
  }
}
