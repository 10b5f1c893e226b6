/**
 * One reconcile pass, level-triggered like a Kubernetes controller, in three steps:
 *   observe  — the watchers refresh their caches, each by its own read policy (watch-*.ts);
 *   decide   — the pure rule (reconcile.ts) turns observed + desired + memory into actions;
 *   execute  — the executor applies them (executor.ts) and the memory takes in the outcomes.
 * A pass is idempotent and can run any number of times; the engine (engine.ts) decides *when*.
 * This file only wires the steps; no rule lives here.
 */
import { Clock, monotonicNow } from '../core/clock';
import { BlockedItem, EVACUATE } from '../model/item';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { AmrmProxy, ResourceManagerReader, SIDECAR_BLACKLIST_OWNER } from '../yarn/types';
import { Metrics } from '../metrics/metrics';
import { BlacklistDiff, DesiredPlan, blacklistSet } from './desired';
import { EVACUATION_PHASES, EvacuationStatus, isTaskManager, withCountdown } from './evacuation';
import { DEFAULT_CAP_NODE_COUNT_MEMORY_MS, Memory, afterNewAttempt, afterPush, afterRelease, emptyMemory, pruneReleased } from './memory';
import { BlacklistDecision, Decision, Desired, EvacuationsView, Observed, Rules, SyncEvent, anyInProgress, decideBlacklist, evacuationStatusesInSteps, reconcileInSteps } from './reconcile';
import { STEP_ITEMS, inTurns, nextTurn } from './steps';
import { AuditSink } from '../model/audit';
import { FlinkJobManager } from '../flink/types';
import { FlinkLocation } from '../flink/locate';
import { FlinkWatcher } from './watch-flink';
import { FlinkSide } from './flink-side';
import { ReleaseKind, Wait } from './evacuation-steps';
import { Executor, PushOutcome } from './executor';
import { StartsRecord } from './starts-record';
import { eventLines } from './event-lines';
import { GoneSweep } from './gone-job-sweeps';
import { message } from './cache';
import { StoreWatcher } from './watch-store';
import { AttemptWatcher } from './watch-attempt';
import { BlacklistWatcher } from './watch-blacklist';
import { NodesWatcher } from './watch-nodes';
import { NeedsMemo } from './read-policy';

/** yarn.nodes.refresh-interval's default: the node list is megabytes at 10,000 nodes. */
export const DEFAULT_NODES_REFRESH_MS = 10 * 60_000;
import { ContainersWatcher } from './watch-containers';
import { PassStage, SyncView } from './view';
import type { ContainersKnown } from './sync-port';

export interface ControllerSettings {
  maxBlockedFraction: number;
  /** Default evacuation timeout (ms) when an item has none; negative = forever. */
  evacuationTimeoutMs: number;
  /** Most containers released in one proxy call; one call per pass. */
  releaseBatchSize: number;
  /** Node and container lists older than this are re-read by the next pass. */
  refreshIntervalMs: number;
  /** How long the highest RUNNING-node count is remembered as the cap's floor (default 5 min). */
  capNodeCountMemoryMs?: number;
  /** How often the node list is re-read while node items are in force (yarn.nodes.refresh-interval, default 10 min). */
  nodesRefreshIntervalMs?: number;
  /** The owner set this sidecar writes on the proxy's shared blacklist (default `blocklist`). */
  proxyOwner?: string;
  /** Most busy task managers of the job released per step; 0 = all at once (evacuation.max-parallel). */
  maxParallel?: number;
  /** The longest wait for a checkpoint before a release, from its trigger; 0 = none (evacuation.checkpoint.timeout). */
  checkpointTimeoutMs?: number;
  /** The longest a release step waits for the job to run again (evacuation.step-timeout). */
  stepTimeoutMs?: number;
  /** Whether Flink's REST API is used (flink.enabled) and its address ('' = from the RM's application report). */
  flinkEnabled?: boolean;
  flinkAddress?: string;
  /** Flink is read at most this often while something waits on it (the poll interval). */
  flinkReadIntervalMs?: number;
}

/** The defaults of the evacuation keys (config/keys.ts holds the same). */
export const EVACUATION_DEFAULTS = { maxParallel: 0, checkpointTimeoutMs: 30_000, stepTimeoutMs: 5 * 60_000 } as const;

export interface ControllerDeps {
  store: BlocklistStore;
  rm: ResourceManagerReader;
  proxy: AmrmProxy;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** From config or CONTAINER_ID; otherwise the proxy's attempt names it. */
  applicationId?: string;
  settings: ControllerSettings;
  /** A client of Flink's JobManager at a location (absent: Flink's REST API is not used). */
  flink?: (location: FlinkLocation) => FlinkJobManager;
  /** Releases and checkpoints of evacuations get an audit line each. */
  audit?: AuditSink;
  /** Whether this sidecar is the cluster's elected sweeper of gone jobs' records (absent: every sidecar sweeps). */
  sweepsRecords?: () => boolean;
  /**
   * Other families of per-job records whose gone jobs' records this sidecar looks for, next to the
   * evacuation starts (the detector's state: detect/gone-job-records.ts); each keeps its own schedule.
   */
  sweepAlso?: (applicationId: string, now: number) => Promise<unknown>;
}

export type PassOutcome =
  | {
      result: 'synced';
      /** What was sent to the proxy, when anything was. */
      pushed?: BlacklistDiff;
      released: string[];
      /** More containers wait for release than one batch took: run another pass now. */
      more: boolean;
      /** The pass enforced the last good snapshot because the store could not be read. */
      degraded: boolean;
    }
  | { result: 'failed'; stage: PassStage; error: string };

/** Why a poll tick wants a pass (undefined: nothing to do). */
export type ChangeReason = 'store-change' | 'store-recovered' | 'attempt-change' | 'blacklist-drift' | 'evacuating' | 'refresh';

type Observation = { ok: true; observed: Observed; desired: Desired; containersError?: string } | { ok: false; failed: PassOutcome };

interface Watchers {
  store: StoreWatcher;
  attempt: AttemptWatcher;
  blacklist: BlacklistWatcher;
  nodes: NodesWatcher;
  containers: ContainersWatcher;
}

interface Shown {
  plan?: DesiredPlan;
  pending: BlacklistDiff;
  pendingReleases: string[];
  evacuations?: EvacuationsView;
  statuses: Map<string, EvacuationStatus>;
  /** Why each covered task manager not released yet waits (the job-wide decision). */
  waits: ReadonlyMap<string, Wait>;
  deadlines: Map<string, number>;
  lastSuccessfulSync?: number;
  lastFailure?: { stage: PassStage; error: string };
}

/** How each kind of release went, in words (audit, logs). */
const RELEASE_WORDS: Readonly<Record<ReleaseKind, string>> = {
  idle: 'released idle (every slot free): nothing ran there',
  checkpointed: 'released right after a completed checkpoint',
  deadline: 'released at the deadline (no checkpoint to wait for)',
  fallback: 'released at the bound without a fresh checkpoint (it failed or was slow)',
  blind: "released at the deadline without Flink (its REST API could not be read)",
};

const noFlink = (): FlinkJobManager => {
  throw new Error("Flink's REST API is not used");
};

const failed = (stage: PassStage, error: string): { ok: false; failed: PassOutcome } => ({ ok: false, failed: { result: 'failed', stage, error } });

export class Controller {
  /** The observed layer: one watcher per thing read, each with its cache. */
  private readonly watch: Watchers;
  private readonly executor: Executor;
  /** This job's evacuation starts, as stored (evacuation-starts.ts). */
  private readonly starts: StartsRecord;
  /** Gone jobs' records, looked for beside the passes (engine.idle() waits for a sweep running). */
  readonly gone: GoneSweep;
  private readonly rules: Rules;
  private memory: Memory = emptyMemory();
  private viewCache: SyncView | undefined;
  /** What the items in force need read, kept while the snapshot and the clock allow (the poll asks every tick). */
  private readonly needs = new NeedsMemo();
  /** What the view shows, as of the last pass. */
  private shown: Shown = { pending: { additions: [], removals: [] }, pendingReleases: [], statuses: new Map(), waits: new Map(), deadlines: new Map() };
  /** Flink's JobManager as the evacuations read it, and the checkpoints they trigger. */
  readonly flink: FlinkSide;
  /** The task managers MARK_BLOCKED places held at the last decision (the poll looks for idle ones). */
  private marked: ReadonlySet<string> = new Set();

  private readonly owner: string;

  constructor(private readonly deps: ControllerDeps) {
    this.owner = deps.settings.proxyOwner ?? SIDECAR_BLACKLIST_OWNER;
    const { store, rm, proxy, logger, metrics, settings } = deps;
    const intervals = { refreshMs: settings.refreshIntervalMs, nodesRefreshMs: settings.nodesRefreshIntervalMs ?? DEFAULT_NODES_REFRESH_MS };
    this.watch = {
      store: new StoreWatcher({ store, logger, metrics }),
      attempt: new AttemptWatcher({ proxy, logger, ...(deps.applicationId !== undefined ? { applicationId: deps.applicationId } : {}) }),
      blacklist: new BlacklistWatcher({ proxy, rm, logger, metrics, owner: this.owner }),
      nodes: new NodesWatcher({ rm, logger }, intervals),
      containers: new ContainersWatcher({ proxy }, intervals),
    };
    this.executor = new Executor({ proxy, metrics, logger, owner: this.owner });
    this.starts = new StartsRecord({ store, logger, ...(deps.sweepsRecords ? { sweeper: deps.sweepsRecords } : {}) });
    this.gone = new GoneSweep({ starts: this.starts, logger, ...(deps.sweepAlso ? { also: deps.sweepAlso } : {}) });
    this.rules = {
      maxBlockedFraction: settings.maxBlockedFraction,
      evacuationTimeoutMs: settings.evacuationTimeoutMs,
      releaseBatchSize: settings.releaseBatchSize,
      capNodeCountMemoryMs: settings.capNodeCountMemoryMs ?? DEFAULT_CAP_NODE_COUNT_MEMORY_MS,
      steps: {
        maxParallel: settings.maxParallel ?? EVACUATION_DEFAULTS.maxParallel,
        checkpointTimeoutMs: settings.checkpointTimeoutMs ?? EVACUATION_DEFAULTS.checkpointTimeoutMs,
        stepTimeoutMs: settings.stepTimeoutMs ?? EVACUATION_DEFAULTS.stepTimeoutMs,
      },
    };
    const connect = deps.flink;
    const enabled = connect !== undefined && settings.flinkEnabled !== false;
    const watcher = new FlinkWatcher({ rm, logger, connect: connect ?? noFlink, address: settings.flinkAddress ?? '', enabled, minIntervalMs: settings.flinkReadIntervalMs ?? 1000 });
    this.flink = new FlinkSide(watcher, { logger, metrics, ...(deps.audit ? { audit: deps.audit } : {}) });
  }

  get applicationId(): string | undefined {
    return this.watch.attempt.applicationId;
  }

  /**
   * Forget what YARN has and the containers: the next pass re-reads them (full resync). The node
   * list and counts keep their own read policies: they come from the RM, which every job shares.
   */
  requestFullResync(): void {
    this.viewCache = undefined;
    this.watch.blacklist.invalidate();
    this.watch.containers.cache.invalidate();
  }

  async pass(): Promise<PassOutcome> {
    const out = await this.run();
    this.viewCache = undefined;
    const { metrics, clock } = this.deps;
    metrics.passes.inc({ result: out.result === 'synced' ? 'success' : 'failure' });
    if (out.result === 'failed') {
      // Whatever failed, we no longer know what YARN has (the proxy or the AM may have restarted):
      // the next pass reads it again, the RM's view included.
      this.watch.blacklist.invalidate();
      this.shown.lastFailure = { stage: out.stage, error: out.error };
    } else if (!out.degraded) {
      this.shown.lastFailure = undefined;
      this.shown.lastSuccessfulSync = clock.now();
      metrics.lastSuccessfulSync.set(this.shown.lastSuccessfulSync / 1000);
    }
    return out;
  }

  private async run(): Promise<PassOutcome> {
    const seen = await this.observe(this.deps.clock.now());
    if (!seen.ok) return seen.failed;
    const appId = this.watch.attempt.applicationId;
    const readsFlink = this.flink.mayRead(monotonicNow(this.deps.clock), this.needs.get(seen.desired.items, appId, this.deps.clock.now()).any);
    // The blacklist does not depend on Flink, so it goes out before any read of Flink (or of the
    // RM's report that locates it): a slow JobManager never holds a block back. What the
    // evacuations decide waits for that read, so they are decided once, after it.
    let first: BlacklistDecision;
    let decided: Decision | undefined;
    if (readsFlink) {
      first = decideBlacklist(seen.observed, seen.desired, this.memory, this.deps.clock.now());
      this.show(first);
      // The plan's memo only saves work: the decision after the read finds this plan in it.
      this.memory = { ...this.memory, decision: first.memory.decision };
    } else {
      decided = await inTurns(reconcileInSteps({ ...seen.observed, flink: this.flink.knowledge }, seen.desired, this.memory, this.deps.clock.now(), monotonicNow(this.deps.clock)));
      first = { plan: decided.view.plan, pending: decided.view.pending, memory: decided.memory, events: decided.events, deadlines: decided.deadlines, ...(decided.push ? { push: decided.push } : {}), ...(decided.pushOrigin ? { pushOrigin: decided.pushOrigin } : {}) };
      this.adopt(decided);
    }
    const now = this.deps.clock.now();
    const pushed = await this.executor.push(first.push);
    const pushFailure = this.takePush(pushed, first, now);
    if (pushFailure) return pushFailure;
    const decision = decided ?? (await this.decideWithFlink(seen, first.plan));
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
   * The decision again with this pass's read of Flink (twice when the first read is not fresh
   * enough for what it wants), on YARN's blacklist as just pushed: nothing more to push.
   */
  private async decideWithFlink(seen: Extract<Observation, { ok: true }>, pushedPlan: DesiredPlan): Promise<Decision> {
    const appId = this.watch.attempt.applicationId;
    const need = this.needs.get(seen.desired.items, appId, this.deps.clock.now());
    let inProgress = false;
    for (const st of this.shown.statuses.values()) if (st.phase !== 'READY' && st.action === EVACUATE) inProgress = true;
    const read = await this.flink.observe(monotonicNow(this.deps.clock), appId, need.any, this.memory.steps, inProgress || need.evacuating);
    const observed = { ...seen.observed, actual: blacklistSet(pushedPlan) };
    const decide = () => inTurns(reconcileInSteps({ ...observed, flink: this.flink.knowledge }, seen.desired, this.memory, this.deps.clock.now(), monotonicNow(this.deps.clock)));
    let d = await decide();
    const evacuating = d.view.evacuations !== undefined && anyInProgress(d.view.evacuations.statuses);
    if (await this.flink.needsFresh(d.flinkWanted, monotonicNow(this.deps.clock), appId, this.memory.steps, evacuating, read)) d = await decide();
    this.adopt(d);
    return d;
  }

  /** Refreshes every cache its policy says is due, in the order the decision needs them. */
  private async observe(now: number): Promise<Observation> {
    await this.watch.store.refresh(now);
    const snapshot = this.watch.store.cache.value;
    if (!snapshot) return failed('store', this.watch.store.error ?? 'store not read yet');
    const attempt = await this.watch.attempt.refresh(now);
    if (!attempt.ok) return failed('attempt', attempt.error);
    if (attempt.newAttempt) this.onNewAttempt();
    try {
      await this.starts.load(this.watch.attempt.applicationId);
    } catch (e) {
      // Without its stored starts the job would start its evacuations again (and store that).
      return failed('store', `reading this job's evacuation starts failed: ${message(e)}`);
    }
    const need = this.needs.get(snapshot.items, this.watch.attempt.applicationId, now);
    const nodes = await this.watch.nodes.refresh(now, need);
    if (!nodes.ok) return failed('nodes', nodes.error);
    const appId = this.watch.attempt.applicationId;
    const bl = await this.watch.blacklist.refresh(now, appId, this.watch.attempt.attemptId);
    if (!bl.ok) return failed('blacklist-read', bl.error);
    const containers = await this.watch.containers.refresh(now, { evacuating: need.evacuating, itemsInForce: need.any });
    const view = this.watch.blacklist.cache.value ?? { actual: new Set<string>(), othersHold: new Set<string>(), schedulerOnly: [] };
    return {
      ok: true,
      observed: { actual: view.actual, othersHold: view.othersHold, schedulerOnly: view.schedulerOnly, nodes: this.watch.nodes.cache.value ?? [], ...(this.watch.nodes.runningNodes !== undefined ? { runningNodes: this.watch.nodes.runningNodes } : {}), ...(need.nodeCount > 0 && !this.watch.nodes.listKnown ? { nodesUnknown: true } : {}), containers: containers.ok ? this.watch.containers.cache.value : undefined, ...this.amContainer() },
      desired: { items: snapshot.items, applicationId: appId, rules: this.rules, jobStarts: this.starts.value },
      ...(containers.ok ? {} : { containersError: containers.error }),
    };
  }

  /** The attempt's AM container by fact: the proxy's word, else the RM's attempt report. */
  private amContainer(): { amContainerId?: string } {
    const id = this.watch.attempt.cache.value?.amContainerId ?? this.watch.blacklist.rmAmContainer(this.watch.attempt.attemptId);
    return id !== undefined ? { amContainerId: id } : {};
  }

  /** A new attempt's client starts empty: re-read its list, re-push, remove what the old one had. */
  private onNewAttempt(): void {
    this.memory = afterNewAttempt(this.memory, this.watch.blacklist.cache.value?.actual ?? []);
    this.flink.watcher.forget();
    this.watch.blacklist.invalidate();
    this.watch.containers.cache.invalidate();
  }

  /** Shows a decision's plan (while what else it decides waits on Flink). */
  private show(d: BlacklistDecision): void {
    this.shown.plan = d.plan;
    this.shown.pending = d.pending;
    this.deps.metrics.deferredItems.set(d.plan.deferred.length);
  }

  /** Takes in the decision before acting on it: memory, view, deadlines, log lines, gauges. */
  private adopt(d: Decision): void {
    this.flink.noteOutcomes(this.memory.steps, d.memory.steps);
    this.memory = d.memory;
    this.shown.plan = d.view.plan;
    this.shown.pending = d.view.pending;
    this.shown.pendingReleases = d.releases.waiting;
    this.shown.deadlines = d.deadlines;
    this.marked = d.markedTaskManagers;
    this.deps.metrics.deferredItems.set(d.view.plan.deferred.length);
    this.logEvents(d.events);
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
    if (pushed.result === 'pushed') this.watch.blacklist.wrote(plan.blacklist, now, { change: pushed.diff, write: pushed.write, ...(d.pushOrigin ? { origin: d.pushOrigin } : {}) }, blacklistSet(plan));
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
    const out = await this.starts.record(items, d.starts);
    if (out.result === 'failed') this.deps.logger.warn(`${out.error}; kept in memory and written after the next pass`);
    this.gone.start(items, this.watch.attempt.applicationId, this.deps.clock.now());
  }

  /** Releases one batch, then re-evaluates so the view shows what was just released. */
  private async release(d: Decision, pushed: PushOutcome): Promise<PassOutcome> {
    const { batch, waiting, kinds } = d.releases;
    const out = await this.executor.release(batch);
    const containers = this.watch.containers.cache.value;
    const evac = d.view.evacuations;
    if (out.result === 'released' && containers) {
      this.memory = afterRelease(this.memory, [...out.released, ...out.unknown], containers);
      this.auditReleases(out.released, kinds, evac);
      this.shown.pendingReleases = waiting.slice(batch.length);
    }
    // The evacuations are shown as their releases came out, so a reader never sees a release that
    // failed as done, nor one merely in flight.
    // Nothing released: the statuses are the decision's own (decided with this very memory).
    if (evac) this.setEvacuations(evac, out.result === 'nothing-to-release' ? evac.statuses : await inTurns(evacuationStatusesInSteps(evac.plans, { steps: evac.steps, flink: this.flink.knowledge, released: this.memory.released, kinds: this.memory.steps.kinds, now: this.deps.clock.now() })));
    if (out.result === 'failed') return { result: 'failed', stage: 'release', error: out.error };
    const reported = new Set<string>();
    for (const e of this.shown.statuses.values()) for (const c of e.released) reported.add(c);
    // What MARK_BLOCKED items released is said while they are in force (their status lists it).
    const blocked = blacklistSet(d.view.plan);
    const marked = new Set(d.view.plan.taskManagers.map((i) => i.containerId));
    for (const [c, host] of this.memory.released) if (blocked.has(host) || marked.has(c)) reported.add(c);
    this.memory = pruneReleased(this.memory, containers?.byId ?? new Map(), reported);
    this.updateEvacuationMetrics();
    return {
      result: 'synced',
      ...(pushed.result === 'pushed' ? { pushed: pushed.diff } : {}),
      released: out.result === 'released' ? out.released : [],
      more: waiting.length > batch.length,
      degraded: this.watch.store.degraded,
    };
  }

  /** One audit line and one count per task manager released, saying how it went. */
  private auditReleases(released: readonly string[], kinds: ReadonlyMap<string, ReleaseKind>, evac: EvacuationsView | undefined): void {
    const item = new Map<string, string>();
    for (const [id, p] of evac?.plans ?? []) for (const c of p.containers) item.set(c, id);
    for (const c of released) {
      const kind = kinds.get(c) ?? 'deadline';
      this.deps.metrics.taskManagersReleased.inc({ reason: kind });
      this.deps.audit?.record({ op: 'evacuation-release', id: item.get(c) ?? c, who: 'sync', from: 'sidecar', outcome: 'released', detail: `${c}: ${RELEASE_WORDS[kind]}` });
    }
  }

  /**
   * What a poll tick checks between passes (cheap reads only): did the store move, did the
   * attempt change, is an evacuation waiting for containers to go, is a cache past its age.
   */
  async checkForChanges(): Promise<ChangeReason | undefined> {
    const reason = await this.changes();
    this.viewCache = undefined;
    return reason;
  }

  private async changes(): Promise<ChangeReason | undefined> {
    const store = await this.watch.store.changed();
    if (store) return store;
    if (await this.watch.attempt.changed()) return 'attempt-change';
    if (await this.watch.blacklist.drifted(this.deps.clock.now())) return 'blacklist-drift';
    for (const st of this.shown.statuses.values()) if (st.phase !== 'READY') return 'evacuating';
    if (this.memory.steps.step !== undefined) return 'evacuating';
    if (this.marked.size > 0 && (await this.flink.idleAmong(this.marked, monotonicNow(this.deps.clock), this.watch.attempt.applicationId))) return 'evacuating';
    if (this.flink.pending(this.memory.steps).length > 0 && (await this.flink.checkTriggers(this.memory.steps))) return 'evacuating';
    const now = this.deps.clock.now();
    const items = this.watch.store.cache.value?.items ?? [];
    const appId = this.watch.attempt.applicationId;
    const need = this.needs.get(items, appId, now);
    if (this.watch.containers.stale(now, { evacuating: false, itemsInForce: need.any }) || this.watch.nodes.stale(now, need)) return 'refresh';
    return undefined;
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
    const r = await this.watch.containers.forAnswer(this.deps.clock.now());
    return r.ok ? { known: true } : { known: false, why: `the application's containers could not be read: ${r.error}` };
  }

  /** Where a live container of the app runs, as last read. */
  containerHost(containerId: string): string | undefined {
    const c = this.watch.containers.cache.value?.byId.get(containerId);
    return c && !this.memory.released.has(containerId) ? c.host || c.nodeId.split(':')[0] : undefined;
  }

  /** The app's live task managers on one host, sorted (FLIP-224's `taskManagers`). */
  taskManagersOn(node: string): string[] {
    const list = this.watch.containers.cache.value?.byHost.get(node) ?? [];
    // A container released by this process is gone, even before the next read says so.
    return list
      .filter((c) => isTaskManager(c, this.amContainer().amContainerId) && !this.memory.released.has(c.containerId))
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
    return (this.viewCache ??= this.buildView());
  }

  private buildView(): SyncView {
    const v: SyncView = {
      enabled: true,
      engine: true,
      maxBlockedFraction: this.rules.maxBlockedFraction,
      pending: this.shown.pending,
      pendingReleases: this.shown.pendingReleases,
      evacuations: this.shown.statuses,
    };
    if (this.watch.attempt.applicationId !== undefined) v.applicationId = this.watch.attempt.applicationId;
    if (this.watch.attempt.attemptId !== undefined) v.appAttemptId = this.watch.attempt.attemptId;
    if (this.shown.lastSuccessfulSync !== undefined) v.lastSuccessfulSync = this.shown.lastSuccessfulSync;
    if (this.shown.lastFailure) v.lastFailure = this.shown.lastFailure;
    if (this.watch.store.error !== undefined) v.storeError = this.watch.store.error;
    const snapshot = this.watch.store.cache.value;
    if (snapshot) Object.assign(v, { items: snapshot.items, itemLookups: snapshot.lookups });
    if (this.shown.plan) v.plan = this.shown.plan;
    const bl = this.watch.blacklist.cache.value;
    if (bl) v.actual = bl.actual;
    if (bl?.owners) v.owners = bl.owners;
    const nodes = this.watch.nodes.cache;
    const known = this.watch.nodes.known;
    if (nodes.value && nodes.readAt !== undefined) v.nodes = { readAt: nodes.readAt, list: nodes.value, ...(known ? { known } : {}) };
    const containers = this.watch.containers.cache.value;
    if (containers) v.containers = containers;
    Object.assign(v, this.amContainer(), { flink: this.flink.knowledge, taskManagerWaits: this.shown.waits, released: this.memory.released, releaseKinds: this.memory.steps.kinds });
    return v;
  }

  private setEvacuations(e: EvacuationsView, statuses: Map<string, EvacuationStatus>): void {
    this.shown.evacuations = e;
    this.shown.statuses = statuses;
    this.shown.waits = e.steps.waits;
  }

  private updateEvacuationMetrics(): void {
    const counts = new Map(EVACUATION_PHASES.map((p) => [p, 0]));
    for (const st of this.shown.statuses.values()) counts.set(st.phase, (counts.get(st.phase) ?? 0) + 1);
    for (const [phase, n] of counts) this.deps.metrics.evacuatingNodes.set({ phase }, n);
  }

  /** A pass's events as log lines: one each for a few, one summary for many of a kind (event-lines.ts). */
  private logEvents(events: readonly SyncEvent[]): void {
    if (events.length === 0) return;
    for (const line of eventLines(events, this.rules.maxBlockedFraction)) this.deps.logger.log(line.level, line.message);
  }
}
