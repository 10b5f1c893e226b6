/**
 * One reconcile pass, level-triggered like a Kubernetes controller, in three steps:
 *   observe  — the watchers refresh their caches, each by its own read policy (watch-*.ts);
 *   decide   — the pure rule (reconcile.ts) turns observed + desired + memory into actions;
 *   execute  — the executor applies them (executor.ts) and the memory takes in the outcomes.
 * A pass is idempotent and can run any number of times; the engine (engine.ts) decides *when*.
 * This file only wires the steps; no rule lives here.
 */
import { Clock, monotonicNow } from '../core/clock';
import { BlockedItem } from '../model/item';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { AmrmProxy, ResourceManagerReader, SIDECAR_BLACKLIST_OWNER } from '../yarn/types';
import { Metrics } from '../metrics/metrics';
import { BlacklistDiff, DesiredPlan, blacklistSet } from './desired';
import { EvacuationDecision, EvacuationStatus, isTaskManager, withCountdown } from './evacuation';
import { DEFAULT_CAP_NODE_COUNT_MEMORY_MS, Memory, afterNewAttempt, afterPush, afterRelease, emptyMemory, pruneReleased } from './memory';
import { Decision, Desired, Observed, Rules, SyncEvent, evacuating, planEvacuations, reconcile } from './reconcile';
import { Executor, PushOutcome } from './executor';
import { StartsRecord } from './starts-record';
import { GoneSweep } from './gone-sweep';
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
import type { ContainersKnown } from './facade';

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
}

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
  /** Whether this sidecar is the cluster's elected sweeper of gone jobs' records (absent: every sidecar sweeps). */
  sweepsRecords?: () => boolean;
  /**
   * Other families of per-job records whose gone jobs' records this sidecar looks for, next to the
   * evacuation starts (the detector's state: detect/gone-states.ts); each keeps its own schedule.
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
  evacuations: Map<string, EvacuationDecision>;
  statuses: Map<string, EvacuationStatus>;
  deadlines: Map<string, number>;
  lastSuccessfulSync?: number;
  lastFailure?: { stage: PassStage; error: string };
}

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
  private shown: Shown = { pending: { additions: [], removals: [] }, pendingReleases: [], evacuations: new Map(), statuses: new Map(), deadlines: new Map() };

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
    };
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
    const now = this.deps.clock.now();
    const decision = reconcile(seen.observed, seen.desired, this.memory, now, monotonicNow(this.deps.clock));
    this.adopt(decision);
    const pushed = await this.executor.push(decision.push);
    const pushFailure = this.takePush(pushed, decision.view.plan, now);
    if (pushFailure) return pushFailure;
    await this.recordStarts(seen.desired.items, decision);
    // The blacklist is applied; evacuations must wait for a container list read by this pass.
    if (seen.containersError !== undefined) return { result: 'failed', stage: 'containers', error: seen.containersError };
    return this.release(decision, pushed);
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
    this.watch.blacklist.invalidate();
    this.watch.containers.cache.invalidate();
  }

  /** Takes in the decision before acting on it: memory, view, deadlines, log lines, gauges. */
  private adopt(d: Decision): void {
    this.memory = d.memory;
    this.shown.plan = d.view.plan;
    this.shown.pending = d.view.pending;
    this.shown.pendingReleases = d.releases.waiting;
    this.shown.deadlines = d.deadlines;
    this.deps.metrics.deferredItems.set(d.view.plan.deferred.length);
    for (const e of d.events) this.log(e);
  }

  /** After the push: YARN now has the plan, or we no longer know what it has (re-read next pass). */
  private takePush(pushed: PushOutcome, plan: DesiredPlan, now: number): PassOutcome | undefined {
    if (pushed.result === 'failed') {
      this.memory = afterPush(this.memory, { ok: false, attempted: pushed.diff });
      return { result: 'failed', stage: 'push', error: pushed.error };
    }
    this.memory = afterPush(this.memory, { ok: true });
    // Nothing pushed: the proxy already holds the plan, and the belief read this pass stands (a
    // fresh copy of it would make the next poll read and parse the whole list again: megabytes
    // at 100,000 hosts).
    if (pushed.result === 'pushed') this.watch.blacklist.wrote(plan.blacklist, now, { change: pushed.diff, write: pushed.write }, blacklistSet(plan));
    this.shown.pending = { additions: [], removals: [] };
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
    const { batch, waiting } = d.releases;
    const out = await this.executor.release(batch);
    const containers = this.watch.containers.cache.value;
    // The evacuations are shown once their releases are done, so a reader never sees a TIMEOUT
    // whose release is merely in flight; after a release they are evaluated again to show it.
    if (out.result === 'released' && containers) {
      this.memory = afterRelease(this.memory, [...out.released, ...out.unknown], containers);
      const at = { now: this.deps.clock.now(), mono: monotonicNow(this.deps.clock), ...this.amContainer() };
      this.setEvacuations(planEvacuations(evacuating(d.view.plan), d.clocks, containers, this.memory.released, this.rules.evacuationTimeoutMs, at, this.watch.nodes.cache.value ?? []));
      this.shown.pendingReleases = waiting.slice(batch.length);
    } else if (d.view.evacuations) this.setEvacuations(d.view.evacuations);
    if (out.result === 'failed') return { result: 'failed', stage: 'release', error: out.error };
    const reported = new Set<string>();
    for (const e of this.shown.evacuations.values()) for (const c of e.status.released) reported.add(c);
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
    for (const d of this.shown.evacuations.values()) if (d.status.phase !== 'READY') return 'evacuating';
    const now = this.deps.clock.now();
    const items = this.watch.store.cache.value?.items ?? [];
    const appId = this.watch.attempt.applicationId;
    const need = this.needs.get(items, appId, now);
    if (this.watch.containers.stale(now, { evacuating: false, itemsInForce: need.any }) || this.watch.nodes.stale(now, need)) return 'refresh';
    return undefined;
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
    if (this.watch.store.cache.value) v.items = this.watch.store.cache.value.items;
    if (this.shown.plan) v.plan = this.shown.plan;
    const bl = this.watch.blacklist.cache.value;
    if (bl) v.actual = bl.actual;
    if (bl?.owners) v.owners = bl.owners;
    const nodes = this.watch.nodes.cache;
    if (nodes.value && nodes.readAt !== undefined) v.nodes = { readAt: nodes.readAt, list: nodes.value };
    return v;
  }

  private setEvacuations(e: Map<string, EvacuationDecision>): void {
    this.shown.evacuations = e;
    this.shown.statuses = new Map([...e].map(([id, d]) => [id, d.status]));
  }

  private updateEvacuationMetrics(): void {
    const counts: Record<string, number> = { WAIT_CONTAINER: 0, TIMEOUT: 0, READY: 0 };
    for (const d of this.shown.evacuations.values()) counts[d.status.phase]++;
    for (const [phase, n] of Object.entries(counts)) this.deps.metrics.evacuatingNodes.set({ phase }, n);
  }

  private log(e: SyncEvent): void {
    const { logger } = this.deps;
    if (e.kind === 'deferred') {
      logger.warn(`safety cap: ${e.id} is deferred (not blacklisted): ${e.capacity} of ${e.runningNodes} RUNNING nodes are already blocked (max-blocked-fraction ${this.rules.maxBlockedFraction})`);
    } else if (e.kind === 'undeferred') {
      if (e.enforced) logger.info(`safety cap: ${e.id} is no longer deferred and goes on the blacklist`);
    } else {
      const s = e.decision.status;
      const timeout = s.timeoutSeconds < 0 ? 'none (waits forever)' : `${s.timeoutSeconds}s`;
      logger.info(`evacuation ${e.id}: ${e.from ?? 'start'} -> ${s.phase}, ${s.containers.length} container(s) left, timeout ${timeout}, since ${new Date(s.since).toISOString()}`);
    }
  }
}
