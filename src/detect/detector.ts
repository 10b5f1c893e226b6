/**
 * The detector's runner: every poll interval it asks each source what happened, folds the failures
 * into incidents, reconciles its automatic blocks with the store (expired? lifted by an operator?),
 * decides (decide.ts), and in `enforce` mode adds ordinary blocklist items through the same path
 * the REST API uses — scope this application, principal `detector`, a cause that explains itself.
 * In `shadow` mode it decides and shows everything and blocks nothing. Its state (incidents, keys
 * already counted, backoff levels, source cursors) is a named record in the store.
 */
import { randomBytes } from 'node:crypto';
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { appliesTo, inForce, isEffective } from '../model/effective';
import { BlockSpec } from '../model/validate';
import { BlocklistStore } from '../store/store';
import { AmrmProxy, ClusterMetrics, ClusterNode } from '../yarn/types';
import { DETECTOR_PRINCIPAL, DecideSettings, DetectorReport, decide } from './decide';
import { ingest, recordHealth } from './incidents';
import { EffectiveBlock, JobItem, SOURCE_DECOMMISSIONING, SOURCE_FAILURES, adoptOrphans, consumeWhileBlocked, forgetSettled, observeBlocks, recordBlock } from './auto-blocks';
import { DetectorMetrics } from './metrics';
import { DetectorSource } from './source';
import { Polled, SourcePoller, SourceStatus } from './source-poller';
import { DetectorState } from './state';
import { StateRecord, stateKeyOf } from './state-record';
import { NodesSeen, RmNodes } from './rm-nodes';
import { DetectorLease, RunnerView, leaseMsFor } from './leadership';
import { abandonOwnLeftovers, abandonReservation, reservationUsable, reserveBlock } from './reservation';
import { ListedItems, jobBlocks } from './store-items';

export type { SourceStatus };

export interface DetectorSettings extends DecideSettings {
  pollIntervalMs: number;
}

/** What adding an automatic block came to. */
export type AddResult = { outcome: 'created' | 'merged' | 'unchanged' } | { outcome: 'conflict'; reason: string };

/** Adds one item exactly as a REST block would (the blocklist service: merge rules, audit, a sync kick). */
export type AddItem = (spec: BlockSpec, principal: string) => Promise<AddResult>;

export interface DetectorDeps {
  settings: DetectorSettings;
  clock: Clock;
  logger: Logger;
  metrics?: DetectorMetrics;
  store: Pick<BlocklistStore, 'list'> & Partial<Pick<BlocklistStore, 'version' | 'readRecord' | 'writeRecord' | 'replaceRecord' | 'recordKeys' | 'removeRecord'>>;
  addItem: AddItem;
  proxy: Pick<AmrmProxy, 'containers'>;
  /** All nodes: which host names the RM knows (a fallback attribution by host name needs it). Read rarely. */
  nodes: () => Promise<ClusterNode[]>;
  /** Node counts by state (~1 KB): the automatic-block cap's RUNNING count, read every pass. */
  clusterMetrics?: () => Promise<ClusterMetrics>;
  sources: DetectorSource[];
  /** The application the sidecar serves (scope of automatic blocks); undefined until resolved. */
  applicationId: () => string | undefined;
  /** This sidecar's name in the job's detector lease (leadership.ts); unique per process. */
  member?: string;
}

/** What GET /detector answers. */
export interface DetectorView {
  mode: DecideSettings['mode'];
  settings: { failuresPerHost: number; windowMs: number; jobFaultHosts: number; blockDurationMs: number; maxBlockDurationMs: number; maxBlockedFraction: number; action: string; pollIntervalMs: number; evacuateDecommissioning: boolean };
  applicationId: string | null;
  lastPassAt: number | null;
  lastError: string | null;
  /** Whether the state survives a restart (the store keeps named records). */
  persistent: boolean;
  sources: SourceStatus[];
  /** Which sidecar of the job runs the detector (the others stand by: leadership.ts). */
  runner: RunnerView;
  report: DetectorReport | null;
}

/** Reservations lost to another sidecar's write in one pass before its blocks for failures wait for the next. */
const RESERVE_ROUNDS = 3;

export class Detector {
  /** The state and its record in the store (state-record.ts). */
  private readonly record: StateRecord;
  /** Whether this sidecar runs the job's detector or stands by (leadership.ts). */
  private readonly lease: DetectorLease;
  /** This sidecar's name in the job's detector lease and on its reservations. */
  private readonly member: string;
  private report: DetectorReport | null = null;
  private lastPassAt: number | null = null;
  private lastError: string | null = null;
  /** The sources, their status, and where the app's containers ran (source-poller.ts). */
  private readonly sources: SourcePoller;
  /** The RM's nodes as last read (rm-nodes.ts). */
  private readonly rmNodes: RmNodes;
  /** The store's items, listed again only when its version moved. */
  private readonly listed: ListedItems;
  private stopTimer: (() => void) | undefined;
  private running: Promise<DetectorReport | null> | undefined;

  constructor(private readonly deps: DetectorDeps) {
    this.sources = new SourcePoller(deps);
    this.record = new StateRecord(deps.store, deps.clock, deps.logger, () => this.stateKey);
    this.rmNodes = new RmNodes(deps);
    this.listed = new ListedItems(deps.store);
    this.member = deps.member ?? `detector-${randomBytes(6).toString('hex')}`;
    this.lease = new DetectorLease(this.record, this.member, deps.clock, deps.logger, leaseMsFor(deps.settings.pollIntervalMs));
  }

  get stateKey(): string | undefined {
    const app = this.deps.applicationId();
    return app ? stateKeyOf(app) : undefined;
  }

  /** The state the record holds (changed in place by the pass; replaced when another writer's is merged in). */
  private get state(): DetectorState {
    return this.record.state;
  }

  /** Polls every pollIntervalMs on the injected clock until stop(). */
  start(): void {
    if (this.deps.settings.mode === 'off' || this.stopTimer) return;
    let stopped = false;
    let cancel: () => void = () => {};
    const arm = (): void => {
      cancel = this.deps.clock.setTimer(this.deps.settings.pollIntervalMs, () => {
        if (stopped) return;
        void this.pass().finally(() => {
          if (!stopped) arm();
        });
      });
    };
    void this.pass().finally(() => {
      if (!stopped) arm();
    });
    this.stopTimer = () => {
      stopped = true;
      cancel();
    };
  }

  async stop(): Promise<void> {
    this.stopTimer?.();
    this.stopTimer = undefined;
    await this.running?.catch(() => undefined);
    // The other sidecar of the job takes over at its next pass, not when the lease lapses.
    await this.lease.release();
  }

  /** One pass; concurrent callers share it. Never throws: the error is kept for GET /detector. */
  pass(): Promise<DetectorReport | null> {
    if (!this.running) {
      this.running = this.passOnce()
        .catch((e: unknown) => {
          this.lastError = (e as Error)?.message ?? String(e);
          this.deps.logger.warn(`detector pass failed: ${this.lastError}`);
          return this.report;
        })
        .finally(() => {
          this.running = undefined;
        });
    }
    return this.running;
  }

  view(): DetectorView {
    const s = this.deps.settings;
    return {
      mode: s.mode,
      settings: {
        failuresPerHost: s.failuresPerHost,
        windowMs: s.windowMs,
        jobFaultHosts: s.jobFaultHosts,
        blockDurationMs: s.blockDurationMs,
        maxBlockDurationMs: s.maxBlockDurationMs,
        maxBlockedFraction: s.maxBlockedFraction,
        action: s.action,
        pollIntervalMs: s.pollIntervalMs,
        evacuateDecommissioning: s.evacuateDecommissioning,
      },
      applicationId: this.deps.applicationId() ?? null,
      lastPassAt: this.lastPassAt,
      lastError: this.lastError,
      persistent: typeof this.deps.store.readRecord === 'function' && typeof this.deps.store.writeRecord === 'function',
      sources: this.sources.status(),
      runner: this.lease.view(),
      report: this.report,
    };
  }

  /** One pass: observe YARN, poll the sources, fold, decide (pure), act, remember. */
  private async passOnce(): Promise<DetectorReport | null> {
    const { settings, clock } = this.deps;
    if (settings.mode === 'off') return null;
    const appId = this.deps.applicationId();
    if (!appId) throw new Error('the application is not known yet (waiting for the sync engine to resolve it)');
    await this.record.load();
    const runs = await this.lease.acquire();
    this.deps.metrics?.runner?.set(runs ? 1 : 0);
    if (!runs) {
      // Another sidecar of the job runs it: no source, YARN or store read beyond the record.
      this.record.followStored();
      this.lastPassAt = clock.now();
      this.lastError = null;
      return this.report;
    }

    const nodes = await this.observeYarn();
    const polled = await this.sources.poll(this.state, nodes);
    const now = clock.now();
    this.foldIn(polled, now);
    const { report, itemStamps } = await this.decideAndReserve(appId, nodes, now);
    for (const b of report.blocks) await this.applyBlock(b, report, appId, now, itemStamps.get(b.host));
    this.countSuppressions(report);
    forgetSettled(this.state, now, settings.windowMs);

    this.report = report;
    this.lastPassAt = now;
    this.lastError = null;
    await this.record.save();
    return report;
  }

  /**
   * Decides, and reserves the blocks for failures in the record before any is made
   * (reservation.ts). A reservation that loses to another sidecar's write means the record
   * changed — perhaps that sidecar's own reservation: decide again from the record with it. After
   * RESERVE_ROUNDS lost rounds the blocks for failures wait for the next pass.
   */
  private async decideAndReserve(appId: string, nodes: NodesSeen | undefined, now: number): Promise<{ report: DetectorReport; itemStamps: Map<string, string> }> {
    const { settings } = this.deps;
    for (let round = 1; ; round++) {
      const { blocked, heldByOtherJobs, itemStamps } = await this.currentBlocks(appId, now);
      consumeWhileBlocked(this.state, blocked.keys(), settings.mode, now);
      const refusedJoins = this.refusedJoins(itemStamps);
      const report = decide({ now, settings, state: this.state, runningNodes: nodes ? nodes.running : null, blocked, heldByOtherJobs, refusedJoins, applicationId: appId });
      const capped = report.blocks.filter((b) => b.capped);
      if (capped.length === 0) return { report, itemStamps };
      const out = await this.record.commit((s) => {
        for (const b of capped) {
          if (settings.mode === 'enforce') reserveBlock(s, b, now, this.member);
          else recordBlock(s, b, 'shadow', now);
        }
      });
      if (out !== 'lost') return { report, itemStamps };
      if (round >= RESERVE_ROUNDS) {
        this.deps.logger.warn(`detector: reserving its blocks kept losing to another writer of the job's record (${RESERVE_ROUNDS} rounds); no block for failures this pass`);
        report.blocks = report.blocks.filter((b) => !b.capped);
        for (const hr of report.hosts) if (hr.block?.capped) hr.why += ' — not made this pass: another sidecar of the job kept writing its record';
        return { report, itemStamps };
      }
    }
  }

  /** What YARN knows: live containers (id → host) are remembered; the nodes as last read. */
  private async observeYarn(): Promise<NodesSeen | undefined> {
    try {
      for (const c of await this.deps.proxy.containers()) this.sources.remember(c.containerId, c.host);
    } catch (e) {
      this.deps.logger.warn(`detector: reading the app's containers failed (attribution uses what it already knows): ${(e as Error).message}`);
    }
    return this.rmNodes.read();
  }

  /** Failures become incidents (one per host and restart); health reports are kept as evidence. */
  private foldIn(polled: Polled, now: number): void {
    const ing = ingest(this.state, polled.failures, now, this.deps.settings.windowMs);
    for (const inc of ing.newIncidents) this.deps.metrics?.incidents.inc({ source: inc.sources[0] });
    // An RM that knows no nodes (failing over) reports no unhealthy or decommissioning node either:
    // that is not every node back to health. Forgetting them cleared "evacuated once" of a node
    // still decommissioning, and the detector evacuated it again when the RM was back — even if an
    // operator had lifted that evacuation meanwhile.
    if (polled.healthRead && !this.rmNodes.withoutNodes) recordHealth(this.state, polled.health, now);
  }

  /**
   * The node blocks in force for this app, and the hosts whose item is in force for other jobs
   * only; our own automatic blocks checked against the store (expired, or lifted by an operator).
   */
  private async currentBlocks(appId: string, now: number): Promise<{ blocked: Map<string, EffectiveBlock>; heldByOtherJobs: Set<string>; itemStamps: Map<string, string> }> {
    const items = await this.listed.get();
    const byId = new Map(items.map((i) => [i.id, i]));
    if (this.deps.settings.mode === 'enforce') {
      const ours: JobItem[] = [];
      for (const it of inForce(items, appId, now)) {
        if (it.kind === 'node') ours.push({ host: it.node, itemId: it.id, createdBy: it.created.by, createdAt: it.created.at, end: it.endTimestamp, ...(it.source !== undefined ? { source: it.source } : {}) });
      }
      for (const h of adoptOrphans(this.state, ours, this.deps.settings)) this.deps.logger.info(`detector: ${h} carries an automatic block its state did not record (a sidecar stopped before writing it); counted as its own`);
    }
    abandonOwnLeftovers(this.state, this.member, (id) => {
      const it = byId.get(id);
      return it !== undefined && appliesTo(it, appId) && isEffective(it, now);
    });
    const { unblockedByOperator } = observeBlocks(this.state, (id) => {
      const it = byId.get(id);
      return it ? { end: it.endTimestamp, updatedBy: it.updated.by, forJob: appliesTo(it, appId) } : undefined;
    }, now);
    for (const h of unblockedByOperator) this.deps.logger.info(`detector: an operator lifted the automatic block of ${h}; its incidents so far will not block it again`);
    return jobBlocks(items, appId, now);
  }

  /** Hosts whose join was refused for their item as it still is; a changed item is tried again. */
  private refusedJoins(itemStamps: ReadonlyMap<string, string>): Map<string, string> {
    const out = new Map<string, string>();
    for (const [host, hs] of Object.entries(this.state.hosts)) {
      if (!hs.refusedJoin) continue;
      if (itemStamps.get(host) === hs.refusedJoin.item) out.set(host, hs.refusedJoin.reason);
      else delete hs.refusedJoin;
    }
    return out;
  }

  /** Shadow: record and say what would happen. Enforce: an ordinary item through the API's own path. */
  private async applyBlock(b: DetectorReport['blocks'][number], report: DetectorReport, appId: string, now: number, itemStamp: string | undefined): Promise<void> {
    const { settings, logger, metrics } = this.deps;
    if (settings.mode === 'shadow') {
      recordBlock(this.state, b, 'shadow', now);
      if (!b.capped) (this.state.hosts[b.host] ??= {}).evacuatedAt = now;
      metrics?.blocks.inc({ mode: 'shadow' });
      logger.info(`detector (shadow): would block ${b.host} — ${b.cause}`);
      return;
    }
    // allowMerge only to join another job's block of the host: a block an operator made for this
    // job meanwhile is theirs, answered as a conflict and left as it is.
    const spec: BlockSpec = { id: b.host, kind: 'node', node: b.host, action: b.action, end: { type: 'after', ms: b.durationMs }, cause: b.cause, scope: appId, allowMerge: b.join, source: b.capped ? SOURCE_FAILURES : SOURCE_DECOMMISSIONING };
    // Its reservation (reservation.ts) is given up at once when the block is not made.
    const abandon = (): void => {
      const lb = this.state.hosts[b.host]?.lastBlock;
      if (lb?.pending && lb.start === now) abandonReservation(lb);
    };
    const reserved = this.state.hosts[b.host]?.lastBlock;
    if (b.capped && reserved?.pending && reserved.start === now && !reservationUsable(reserved, this.deps.clock.now())) {
      // Stalled since the reservation (earlier adds of this pass, a store that stopped answering):
      // another sidecar of the job may have abandoned it and given its slot away meanwhile.
      abandon();
      logger.warn(`detector: not blocking ${b.host}: its reservation is too old to use (${Math.round((this.deps.clock.now() - now) / 1000)} s since it was made); decided again next pass`);
      const hr = report.hosts.find((x) => x.host === b.host);
      if (hr) hr.why += ' — not made this pass: its reservation grew too old while the pass stalled';
      return;
    }
    let o: AddResult;
    try {
      o = await this.deps.addItem(spec, DETECTOR_PRINCIPAL);
    } catch (e) {
      abandon();
      logger.warn(`detector: blocking ${b.host} failed: ${(e as Error).message}`);
      const hr = report.hosts.find((x) => x.host === b.host);
      if (hr) hr.why += ` — the block failed: ${(e as Error).message}`;
      return;
    }
    if (o.outcome === 'conflict') {
      abandon();
      if (b.join && itemStamp !== undefined) {
        // Refused as the item is (it names the most applications a scope holds): trying again every
        // pass was a refused write and an audit record per pass, for nothing, until it changes.
        (this.state.hosts[b.host] ??= {}).refusedJoin = { item: itemStamp, reason: o.reason, at: now };
        logger.warn(`detector: joining the block other jobs hold on ${b.host} was refused (${o.reason}); not tried again until that item changes`);
        return;
      }
      logger.info(`detector: ${b.host} was blocked meanwhile (${o.reason}); not adding an automatic block`);
      return;
    }
    if (this.state.hosts[b.host]?.refusedJoin) delete this.state.hosts[b.host].refusedJoin;
    if (b.capped) recordBlock(this.state, b, 'enforce', now);
    else (this.state.hosts[b.host] ??= {}).evacuatedAt = now;
    metrics?.blocks.inc({ mode: 'enforce' });
    logger.warn(`detector: blocked ${b.host} until ${new Date(b.end).toISOString()} — ${b.cause}`);
  }

  /** Suppressions are counted once per host and reason, not once per pass. */
  private countSuppressions(report: DetectorReport): void {
    const { logger, metrics } = this.deps;
    const nowDecisions: Record<string, string> = {};
    for (const sup of report.suppressed) {
      nowDecisions[sup.host] = sup.reason;
      if (this.state.lastDecisions[sup.host] === sup.reason) continue;
      metrics?.suppressed.inc({ reason: sup.reason });
      if (sup.reason === 'cap') logger.warn(`detector: ALERT automatic-block cap reached (${report.cap.inUse}/${report.cap.max}); ${sup.host} not blocked`);
      else logger.info(`detector: ${sup.host} not blocked (${sup.reason})`);
    }
    this.state.lastDecisions = nowDecisions;
  }
}
