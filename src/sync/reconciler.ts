/**
 * One reconcile pass, level-triggered like a Kubernetes controller: read desired (the store) and
 * actual (the proxy's blacklist, the app's containers), apply the difference, report the outcome.
 * A pass is idempotent and can run any number of times; the engine (engine.ts) decides *when*.
 *
 * What this object keeps between passes is a cache of things outside it, never a fact only it
 * knows:
 *  - the last good store snapshot: enforced while the store is unreachable (an outage is not an
 *    empty blocklist);
 *  - YARN's blacklist as last read or pushed: dropped (re-read) on start, on a new attempt, after
 *    any failed push and on every full resync;
 *  - the node and container lists, re-read when stale;
 *  - the containers this process released. Across a restart the proxy is the record: a container
 *    the AM was asked to release is reported RELEASING (or no longer listed), so it is not
 *    released again (docs/sync-engine.md, "Releasing exactly once").
 */
import { BlockedItem, EVACUATE } from '../model/item';
import { appliesTo, isExpired, nextExpiry } from '../model/effective';
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { AmrmProxy, AppContainer, ResourceManagerReader } from '../yarn/types';
import { Metrics } from '../metrics/metrics';
import { BlacklistDiff, DesiredPlan, NodeView, diffBlacklist, isEmptyDiff, planDesired } from './desired';
import { EvacuationDecision, evaluateEvacuation, isTaskManager, remainingSeconds } from './evacuation';
import { EvacuationStatus, ItemSyncStatus, SidecarStatus, StatusOptions } from './facade';

export interface ReconcilerSettings {
  maxBlockedFraction: number;
  /** Default evacuation timeout (ms) when an item has none; negative = forever. */
  evacuationTimeoutMs: number;
  /** Most containers released in one proxy call; one call per pass. */
  releaseBatchSize: number;
  /** Node and container lists older than this are re-read by the next pass. */
  refreshIntervalMs: number;
  /** How long the highest RUNNING-node count is remembered as the cap's floor (default 5 min). */
  capNodeCountMemoryMs?: number;
}

export interface ReconcilerDeps {
  store: BlocklistStore;
  rm: ResourceManagerReader;
  proxy: AmrmProxy;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** From config or CONTAINER_ID; otherwise the proxy's attempt names it. */
  applicationId?: string;
  settings: ReconcilerSettings;
}

export type PassStage = 'store' | 'attempt' | 'nodes' | 'blacklist-read' | 'push' | 'containers' | 'release';

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
export type ChangeReason = 'store-change' | 'store-recovered' | 'attempt-change' | 'evacuating' | 'refresh';

interface Snapshot {
  items: BlockedItem[];
  version: string;
}

function indexPlan(plan: DesiredPlan): Map<string, { list: 'enforced' | 'deferred' | 'taskManagers'; item: BlockedItem }> {
  const out = new Map<string, { list: 'enforced' | 'deferred' | 'taskManagers'; item: BlockedItem }>();
  for (const list of ['enforced', 'deferred', 'taskManagers'] as const) for (const item of plan[list]) out.set(item.id, { list, item });
  return out;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class Reconciler {
  private snapshot: Snapshot | undefined;
  private storeDegraded = false;
  private storeError: string | undefined;
  private attemptId: string | undefined;
  private appId: string | undefined;
  private actual: Set<string> | undefined;
  /** Each owner's share of the AM's blacklist as last read from the proxy (the console shows other owners). */
  private owners: Record<string, string[]> | undefined;
  /** Hosts YARN may still honour although the proxy does not list them: sent as removals unless desired. */
  private readonly maybeOnYarn = new Set<string>();
  private repushAll = false;
  private nodes: { list: NodeView[]; readAt: number } | undefined;
  /** The app's containers as last read, indexed once per read (a pass may look them up many times). */
  private containers: { list: AppContainer[]; readAt: number; byHost: Map<string, AppContainer[]>; byId: Map<string, AppContainer> } | undefined;
  /** Containers this process asked the proxy to release: id → host. */
  private readonly released = new Map<string, string>();
  private plan: DesiredPlan | undefined;
  private evacuations = new Map<string, EvacuationDecision>();
  private readonly lastPhase = new Map<string, string>();
  private pending: BlacklistDiff = { additions: [], removals: [] };
  private pendingReleases: string[] = [];
  private lastSuccessfulSync: number | undefined;
  private lastError: string | undefined;
  private warnedMismatch = false;
  /** The most RUNNING nodes seen lately (a cache: after a restart it simply starts again). */
  private runningHighWater: { count: number; at: number } | undefined;
  private planIndex: { plan: DesiredPlan; byId: Map<string, { list: 'enforced' | 'deferred' | 'taskManagers'; item: BlockedItem }> } | undefined;
  private snapshotIndex: { snapshot: Snapshot; byId: Map<string, BlockedItem> } | undefined;

  constructor(private readonly deps: ReconcilerDeps) {
    this.appId = deps.applicationId;
  }

  get applicationId(): string | undefined {
    return this.appId;
  }

  /**
   * The cap's denominator never drops below the most RUNNING nodes seen within the memory window,
   * so a dip in the RM's node list (RM restart, NodeManagers re-registering) does not lift
   * enforced blocks; a real shrink takes effect once the window has passed.
   */
  private capFloor(now: number): number {
    const running = this.nodes ? this.nodes.list.filter((n) => n.state === 'RUNNING').length : 0;
    const memory = this.deps.settings.capNodeCountMemoryMs ?? 5 * 60_000;
    const hw = this.runningHighWater;
    if (!hw || running >= hw.count || now - hw.at > memory) this.runningHighWater = { count: running, at: now };
    return this.runningHighWater?.count ?? running;
  }

  /** Forget what YARN has and the node list: the next pass re-reads both (full resync). */
  requestFullResync(): void {
    this.actual = undefined;
    this.nodes = undefined;
    this.containers = undefined;
  }

  async pass(): Promise<PassOutcome> {
    const { metrics } = this.deps;
    const out = await this.passInner();
    metrics.passes.inc({ result: out.result === 'synced' ? 'success' : 'failure' });
    if (out.result === 'failed') {
      this.lastError = `${out.stage}: ${out.error}`;
    } else if (!out.degraded) {
      this.lastError = undefined;
      this.lastSuccessfulSync = this.deps.clock.now();
      metrics.lastSuccessfulSync.set(this.lastSuccessfulSync / 1000);
    }
    return out;
  }

  private async passInner(): Promise<PassOutcome> {
    const { proxy, rm, clock, logger, metrics, settings } = this.deps;

    // 1. Desired: the store, or the last good snapshot while it is unreachable.
    await this.readStore();
    const snapshot = this.snapshot;
    if (!snapshot) return { result: 'failed', stage: 'store', error: this.storeError ?? 'store not read yet' };

    // 2. Which attempt: a new one starts with an empty AMRMClient, so everything is sent again.
    try {
      const attempt = await proxy.attempt();
      if (this.attemptId !== undefined && attempt.appAttemptId !== this.attemptId) {
        logger.info(`new application attempt ${attempt.appAttemptId} (was ${this.attemptId}): re-reading YARN's blacklist and re-pushing every blocked node`);
        // The scheduler may carry the old attempt's list over while the new client starts empty
        // (peers.md §4.3): what we had pushed is a candidate for an explicit removal.
        for (const h of this.actual ?? []) this.maybeOnYarn.add(h);
        this.actual = undefined;
        this.repushAll = true;
        this.containers = undefined;
      }
      this.attemptId = attempt.appAttemptId;
      if (this.appId === undefined) this.appId = attempt.applicationId;
      else if (attempt.applicationId && attempt.applicationId !== this.appId && !this.warnedMismatch) {
        this.warnedMismatch = true;
        logger.warn(`the AMRM proxy serves ${attempt.applicationId} but this sidecar is configured for ${this.appId}; enforcing for ${this.appId}`);
      }
    } catch (e) {
      return { result: 'failed', stage: 'attempt', error: message(e) };
    }

    // 3. The cluster's nodes (the safety cap's denominator). A stale list beats none.
    const now0 = clock.now();
    if (!this.nodes || now0 - this.nodes.readAt >= settings.refreshIntervalMs) {
      try {
        const list = await rm.nodes();
        this.nodes = { list: list.map((n) => ({ host: n.host, state: n.state, rack: n.rack })), readAt: now0 };
      } catch (e) {
        if (!this.nodes) return { result: 'failed', stage: 'nodes', error: `cannot read the cluster's nodes for the safety cap: ${message(e)}` };
        logger.warn(`reading the cluster's nodes failed, using the list from ${new Date(this.nodes.readAt).toISOString()}: ${message(e)}`);
      }
    }

    // 4. Actual: what the AM's client sends the RM now.
    if (!this.actual) {
      try {
        const view = await proxy.blacklist();
        this.actual = new Set(view.blacklist);
        this.owners = view.owners;
        metrics.blacklistHosts.set(this.actual.size);
      } catch (e) {
        return { result: 'failed', stage: 'blacklist-read', error: message(e) };
      }
      await this.readSchedulerBlacklist();
    }

    // 5. Desired vs actual; push only a non-empty difference.
    const now = clock.now();
    const plan = planDesired({
      items: snapshot.items,
      applicationId: this.appId,
      now,
      nodes: this.nodes.list,
      maxBlockedFraction: settings.maxBlockedFraction,
      runningNodesFloor: this.capFloor(now),
    });
    this.noteDeferrals(plan);
    this.plan = plan;
    metrics.deferredItems.set(plan.deferred.length);
    const diff = diffBlacklist(plan.blacklist, [...this.actual, ...this.maybeOnYarn], this.repushAll);
    this.pending = diff;
    let pushed: BlacklistDiff | undefined;
    if (!isEmptyDiff(diff)) {
      const stop = metrics.pushLatency.startTimer();
      try {
        await proxy.updateBlacklist(diff);
        stop();
        metrics.pushes.inc({ result: 'success' });
      } catch (e) {
        stop();
        metrics.pushes.inc({ result: 'failure' });
        // We no longer know what YARN has: re-read it before the next diff.
        this.actual = undefined;
        return { result: 'failed', stage: 'push', error: `blacklist update (+[${diff.additions.join(',')}] -[${diff.removals.join(',')}]) failed: ${message(e)}` };
      }
      logger.info(`blacklist updated: additions [${diff.additions.join(', ')}] removals [${diff.removals.join(', ')}]`);
      pushed = diff;
    }
    this.actual = new Set(plan.blacklist);
    this.maybeOnYarn.clear();
    this.repushAll = false;
    this.pending = { additions: [], removals: [] };
    metrics.blacklistHosts.set(this.actual.size);

    // 6. Containers: needed for evacuations now, and for taskManagers when stale.
    const evacuating = [...plan.enforced, ...plan.taskManagers].filter((i) => i.action === EVACUATE);
    if (evacuating.length > 0 || !this.containers || now - this.containers.readAt >= settings.refreshIntervalMs) {
      try {
        this.setContainers(await proxy.containers(), now);
      } catch (e) {
        return { result: 'failed', stage: 'containers', error: message(e) };
      }
    }

    // 7. Evacuations: release what has timed out, each container once, one batch per pass.
    this.evaluateEvacuations(evacuating, now);
    const toRelease: string[] = [];
    const seen = new Set<string>();
    for (const d of this.evacuations.values()) for (const c of d.toRelease) if (!seen.has(c)) (seen.add(c), toRelease.push(c));
    this.pendingReleases = toRelease;
    const batch = toRelease.slice(0, settings.releaseBatchSize);
    let released: string[] = [];
    if (batch.length > 0) {
      try {
        const res = await proxy.release(batch);
        released = res.released;
        // Unknown = already gone: done as well, never asked again.
        for (const id of [...res.released, ...res.unknown]) this.released.set(id, this.containers?.byId.get(id)?.host ?? '');
        metrics.containersReleased.inc(res.released.length);
        logger.info(`evacuation: released ${res.released.length} container(s)${res.unknown.length ? ` (${res.unknown.length} already gone)` : ''}: ${batch.join(', ')}`);
      } catch (e) {
        return { result: 'failed', stage: 'release', error: `releasing ${batch.length} container(s) failed: ${message(e)}` };
      }
      // Re-evaluate so the status shows what was just released.
      this.evaluateEvacuations(evacuating, now);
      this.pendingReleases = toRelease.slice(batch.length);
    }
    this.pruneReleased();
    this.updateEvacuationMetrics();
    return { result: 'synced', ...(pushed ? { pushed } : {}), released, more: toRelease.length > batch.length, degraded: this.storeDegraded };
  }

  /**
   * What a poll tick checks between passes (cheap reads only): did the store move, did the
   * attempt change, is an evacuation waiting for containers to go, is the container list stale.
   */
  async checkForChanges(): Promise<ChangeReason | undefined> {
    const { store, proxy, clock, metrics, settings } = this.deps;
    try {
      const v = await store.version();
      if (this.storeDegraded) return 'store-recovered';
      if (!this.snapshot || v !== this.snapshot.version) return 'store-change';
    } catch (e) {
      metrics.storeErrors.inc();
      this.markStoreDegraded(message(e));
    }
    try {
      const a = await proxy.attempt();
      if (this.attemptId !== undefined && a.appAttemptId !== this.attemptId) return 'attempt-change';
    } catch {
      // The proxy being down matters only when there is something to push; a pass will say so.
    }
    for (const d of this.evacuations.values()) if (d.status.phase !== 'READY') return 'evacuating';
    const now = clock.now();
    if (!this.containers || now - this.containers.readAt >= settings.refreshIntervalMs) return 'refresh';
    if (!this.nodes || now - this.nodes.readAt >= settings.refreshIntervalMs) return 'refresh';
    return undefined;
  }

  /**
   * When the desired set changes by itself: the next endTimestamp of an item in scope (expiry is
   * by time, not by the cron job) and each waiting evacuation's deadline.
   */
  deadlines(): Map<string, number> {
    const out = new Map<string, number>();
    if (this.snapshot) {
      const now = this.deps.clock.now();
      const next = nextExpiry(
        this.snapshot.items.filter((i) => appliesTo(i, this.appId)),
        now,
      );
      if (next !== undefined) out.set('expiry', next);
    }
    for (const [id, d] of this.evacuations) if (d.wakeAt !== undefined) out.set(`evacuation:${id}`, d.wakeAt);
    return out;
  }

  synced(): boolean {
    return this.lastSuccessfulSync !== undefined;
  }

  /** The app's live containers on one host, sorted (seed 000's `taskManagers`). */
  taskManagersOn(node: string): string[] {
    const list = this.containers?.byHost.get(node) ?? [];
    return list
      .filter(isTaskManager)
      .map((c) => c.containerId)
      .sort();
  }

  itemStatus(id: string): ItemSyncStatus | undefined {
    const plan = this.plan;
    if (!plan) return { state: 'pending', detail: 'no reconcile pass has completed yet' };
    // GET /blocklist asks once per item: index the plan once per pass, not a scan per call.
    if (this.planIndex?.plan !== plan) this.planIndex = { plan, byId: indexPlan(plan) };
    const where = this.planIndex.byId.get(id);
    const deferred = where?.list === 'deferred' ? where.item : undefined;
    if (deferred) {
      return { state: 'deferred', detail: `held back by the safety cap: at most ${plan.capacity} of ${plan.runningNodes} RUNNING nodes may be blacklisted (max-blocked-fraction ${this.deps.settings.maxBlockedFraction}); older items are kept` };
    }
    const evac = this.evacuations.get(id);
    const enforced = where?.list === 'enforced' ? where.item : undefined;
    if (enforced) {
      if (!this.actual?.has(enforced.node)) return { state: 'pending', detail: "not yet on YARN's blacklist (the push is pending or being retried)" };
      if (evac) return { state: evac.status.phase === 'READY' ? 'evacuated' : 'evacuating', evacuation: this.fresh(evac.status) };
      return { state: 'applied' };
    }
    const tm = where?.list === 'taskManagers' ? where.item : undefined;
    if (tm) {
      if (evac) return { state: evac.status.phase === 'READY' ? 'evacuated' : 'evacuating', evacuation: this.fresh(evac.status) };
      // A pass plans first and evaluates evacuations at its end: in between, an EVACUATE task
      // manager is on its way, not out of scope (a follower would otherwise give up on it).
      if (tm.action === EVACUATE) return { state: 'pending', detail: 'the evacuation of its container is being evaluated' };
      return { state: 'not-applicable', detail: "a task manager block does not touch YARN's blacklist (that would block the whole node); Flink refuses its slots" };
    }
    if (this.snapshotIndex?.snapshot !== this.snapshot) this.snapshotIndex = this.snapshot ? { snapshot: this.snapshot, byId: new Map(this.snapshot.items.map((i) => [i.id, i])) } : undefined;
    const item = this.snapshotIndex?.byId.get(id);
    if (!item) return { state: 'pending', detail: 'not yet seen by the sync engine' };
    if (!appliesTo(item, this.appId)) return { state: 'not-applicable', detail: `scoped to ${item.scope}, not this application` };
    if (isExpired(item, this.deps.clock.now())) return { state: 'not-applicable', detail: 'expired (the expiry job deletes it from the store)' };
    // Read from the store but not yet through a pass that reached YARN (e.g. the proxy is down).
    return { state: 'pending', detail: this.lastError ? `not yet applied: ${this.lastError}` : 'not yet reconciled' };
  }

  status(opts: StatusOptions = {}): SidecarStatus {
    const s: SidecarStatus = {
      enabled: true,
      storeDegraded: this.storeDegraded,
      blacklist: { desired: this.plan?.blacklist ?? [], actual: this.actual ? [...this.actual].sort() : [] },
      pending: { additions: this.pending.additions, removals: this.pending.removals, releases: this.pendingReleases },
      deferred: this.plan?.deferred.map((i) => i.id) ?? [],
      evacuations: [...this.evacuations.values()].map((d) => this.fresh(d.status)),
    };
    if (this.appId !== undefined) s.applicationId = this.appId;
    if (this.attemptId !== undefined) s.appAttemptId = this.attemptId;
    if (this.lastSuccessfulSync !== undefined) s.lastSuccessfulSync = this.lastSuccessfulSync;
    const err = this.storeDegraded ? `store unreachable, enforcing the last good snapshot: ${this.storeError ?? ''}` : this.lastError;
    if (err !== undefined) s.lastError = err;
    const plan = this.plan;
    if (this.owners && Object.keys(this.owners).length) s.blacklist.owners = this.owners;
    if (plan) s.safetyCap = { blockedRunningNodes: plan.capUsed, runningNodes: plan.capNodes, limit: plan.capacity, maxBlockedFraction: this.deps.settings.maxBlockedFraction };
    if (opts.nodes && this.nodes) s.nodes = { readAt: this.nodes.readAt, list: this.nodes.list.map((n) => (n.rack !== undefined ? { host: n.host, rack: n.rack, state: n.state } : { host: n.host, state: n.state })) };
    return s;
  }

  /** The evacuations still in progress (for the periodic status log). */
  activeEvacuations(): EvacuationStatus[] {
    return [...this.evacuations.values()].map((d) => this.fresh(d.status)).filter((s) => s.phase !== 'READY');
  }

  /** The status as of the last pass, with the countdown as of now (the phase changes only in a pass). */
  private fresh(s: EvacuationStatus): EvacuationStatus {
    return { ...s, remainingSeconds: remainingSeconds(s.phase, s.since, s.timeoutSeconds < 0 ? -1 : s.timeoutSeconds * 1000, this.deps.clock.now()) };
  }

  /**
   * The RM's own view of the app's blacklist (AppAttemptInfo.blacklistedNodes, newer RMs): hosts
   * the scheduler still honours but the AM's client does not report (an inherited list after an
   * AM restart) get an explicit removal. Best effort: an older RM or an RM error just skips it.
   */
  private async readSchedulerBlacklist(): Promise<void> {
    const appId = this.appId;
    if (appId === undefined) return;
    try {
      const attempts = await this.deps.rm.attempts(appId);
      const current = attempts.find((a) => a.appAttemptId === this.attemptId) ?? attempts.at(-1);
      for (const h of current?.blacklistedNodes ?? []) if (!this.actual?.has(h)) this.maybeOnYarn.add(h);
    } catch (e) {
      this.deps.logger.debug(`reading the RM's view of the blacklist failed (skipped): ${message(e)}`);
    }
  }

  private async readStore(): Promise<void> {
    const { store, metrics, logger } = this.deps;
    try {
      // Version first, then list: a write in between makes the list newer than the version, and
      // the next poll re-reads; the other order could miss a change.
      const version = await store.version();
      if (!this.snapshot || version !== this.snapshot.version) this.snapshot = { items: await store.list(), version };
      if (this.storeDegraded) logger.info('store reachable again: enforcing its current contents');
      this.storeDegraded = false;
      this.storeError = undefined;
      metrics.storeDegraded.set(0);
    } catch (e) {
      metrics.storeErrors.inc();
      this.markStoreDegraded(message(e));
    }
  }

  private markStoreDegraded(error: string): void {
    if (!this.storeDegraded) {
      this.deps.logger.warn(
        this.snapshot
          ? `store unreachable (${error}): keeping YARN's blacklist as the last good snapshot says (${this.snapshot.items.length} items)`
          : `store unreachable (${error}) and no snapshot yet: pushing nothing until it answers`,
      );
    }
    this.storeDegraded = true;
    this.storeError = error;
    this.deps.metrics.storeDegraded.set(1);
  }

  private setContainers(list: AppContainer[], now: number): void {
    const byHost = new Map<string, AppContainer[]>();
    const byId = new Map<string, AppContainer>();
    for (const c of list) {
      const host = c.host || c.nodeId.split(':')[0];
      let l = byHost.get(host);
      if (!l) byHost.set(host, (l = []));
      l.push(c);
      byId.set(c.containerId, c);
    }
    this.containers = { list, readAt: now, byHost, byId };
  }

  private evaluateEvacuations(items: BlockedItem[], now: number): void {
    const next = new Map<string, EvacuationDecision>();
    const byId = this.containers?.byId;
    for (const item of items) {
      let onNode: AppContainer[];
      if (item.kind === 'node') onNode = this.containers?.byHost.get(item.node) ?? [];
      else {
        const c = item.containerId !== undefined ? byId?.get(item.containerId) : undefined;
        onNode = c ? [c] : [];
      }
      const d = evaluateEvacuation({ item, containersOnNode: onNode, released: this.released, defaultTimeoutMs: this.deps.settings.evacuationTimeoutMs, now });
      next.set(item.id, d);
      const prev = this.lastPhase.get(item.id);
      if (prev !== d.status.phase) {
        this.lastPhase.set(item.id, d.status.phase);
        const s = d.status;
        this.deps.logger.info(
          `evacuation ${item.id}: ${prev ?? 'start'} -> ${s.phase}, ${s.containers.length} container(s) left, timeout ${s.timeoutSeconds < 0 ? 'none (waits forever)' : `${s.timeoutSeconds}s`}, since ${new Date(s.since).toISOString()}`,
        );
      }
    }
    for (const id of [...this.lastPhase.keys()]) if (!next.has(id)) this.lastPhase.delete(id);
    this.evacuations = next;
  }

  private updateEvacuationMetrics(): void {
    const counts: Record<string, number> = { WAIT_CONTAINER: 0, TIMEOUT: 0, READY: 0 };
    for (const d of this.evacuations.values()) counts[d.status.phase]++;
    for (const [phase, n] of Object.entries(counts)) this.deps.metrics.evacuatingNodes.set({ phase }, n);
  }

  /** Keep a released id while the proxy still lists it or an evacuating item reports it; no longer. */
  private pruneReleased(): void {
    if (this.released.size === 0) return;
    const listed = this.containers?.byId ?? new Map<string, AppContainer>();
    const reported = new Set<string>();
    for (const d of this.evacuations.values()) for (const c of d.status.released) reported.add(c);
    for (const id of [...this.released.keys()]) if (!listed.has(id) && !reported.has(id)) this.released.delete(id);
  }

  private readonly warnedDeferred = new Set<string>();
  private noteDeferrals(plan: DesiredPlan): void {
    const now = new Set(plan.deferred.map((i) => i.id));
    for (const item of plan.deferred) {
      if (this.warnedDeferred.has(item.id)) continue;
      this.warnedDeferred.add(item.id);
      this.deps.logger.warn(
        `safety cap: ${item.id} is deferred (not blacklisted): ${plan.capacity} of ${plan.runningNodes} RUNNING nodes are already blocked (max-blocked-fraction ${this.deps.settings.maxBlockedFraction})`,
      );
    }
    for (const id of [...this.warnedDeferred]) {
      if (!now.has(id)) {
        this.warnedDeferred.delete(id);
        if (plan.enforced.some((i) => i.id === id)) this.deps.logger.info(`safety cap: ${id} is no longer deferred and goes on the blacklist`);
      }
    }
  }
}
