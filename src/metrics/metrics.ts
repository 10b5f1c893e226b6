/**
 * Prometheus metrics of the sidecar (docs/operations.md, Metrics), on a registry of their own: never
 * prom-client's global default, so a test (or one process hosting several sidecars) can create as
 * many as it likes without "metric already registered" errors.
 *
 * The REST API serves `GET /metrics` as `metrics.text()` with `metrics.contentType`. The parts:
 *  - this file: the counters and gauges the engine sets as it works, and the counts read from the
 *    store at scrape time (a new series the engine sets is one name, one field, one constructor);
 *  - store-reading.ts: what the scrape-time gauges read (the store, the engine's last pass);
 *  - item-series.ts, engine-series.ts: series per item and per evacuation (bounded), the cap, the job;
 *  - process.ts: the process's own series (prom-client's defaults, build info), once per process.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Clock } from '../core/clock';
import { processRegistry } from './process';
import { BlocklistSource, StoreReader } from './store-reading';
import { registerItemSeries } from './item-series';
import { registerEngineSeries } from './engine-series';
import { HistorySample } from './history';

export { BlocklistCounts, BlocklistSource, CountedStore, EngineReading, EvacuationReading, KnownNodes, countItems } from './store-reading';
import type { BlocklistCounts } from './store-reading';

export const METRIC_NAMES = {
  /** FLIP-224's own name (camelCase, against Prometheus' conventions): kept for its dashboards. */
  blockedNodes: 'numBlockedNodes',
  /** The same figure under Prometheus' conventions (promtool passes on everything but the FLIP's name). */
  blockedNodesConventional: 'blocklist_blocked_nodes',
  blockedTaskManagers: 'blocklist_blocked_taskmanagers',
  deferredItems: 'blocklist_deferred_items',
  evacuatingNodes: 'blocklist_evacuating_nodes',
  containersReleased: 'blocklist_containers_released_total',
  taskManagersReleased: 'blocklist_evacuation_taskmanagers_released_total',
  evacuationCheckpoints: 'blocklist_evacuation_checkpoints_total',
  pushes: 'blocklist_blacklist_pushes_total',
  pushLatency: 'blocklist_blacklist_push_duration_seconds',
  storeErrors: 'blocklist_store_errors_total',
  storeDegraded: 'blocklist_store_degraded',
  lastSuccessfulSync: 'blocklist_last_successful_sync_timestamp_seconds',
  passes: 'blocklist_reconcile_passes_total',
  blacklistHosts: 'blocklist_yarn_blacklist_hosts',
  expiredItems: 'blocklist_expired_items_total',
  quarantinedItems: 'blocklist_quarantined_items',
  rmRequests: 'blocklist_rm_requests_total',
  passRunning: 'blocklist_sync_pass_running_seconds',
  failing: 'blocklist_sync_failing_seconds',
  peerCallFailures: 'blocklist_peer_call_failures_total',
  clockSkew: 'blocklist_store_clock_skew_seconds',
  clockSkewLimit: 'blocklist_store_clock_skew_limit_seconds',
} as const;

export type PushResult = 'success' | 'failure';
export type PassResult = 'success' | 'failure';

export interface Metrics {
  readonly registry: Registry;
  readonly contentType: string;
  /** The Prometheus exposition text (what GET /metrics answers). */
  text(): Promise<string>;
  /** numBlockedNodes: node items that count for this app now (FLIP-224's gauge), deferred ones included. */
  readonly blockedNodes: Gauge;
  /** blocklist_blocked_nodes: numBlockedNodes under Prometheus' naming conventions. */
  readonly blockedNodesConventional: Gauge;
  readonly blockedTaskManagers: Gauge;
  readonly deferredItems: Gauge;
  /** Evacuating items by phase (WAIT_CONTAINER, CHECKPOINTING, RELEASING, TIMEOUT, READY). */
  readonly evacuatingNodes: Gauge<'phase'>;
  readonly containersReleased: Counter;
  /** Task managers released by evacuations and MARK_BLOCKED items, by how: idle, checkpointed, deadline, fallback, blind. */
  readonly taskManagersReleased: Counter<'reason'>;
  /** Checkpoints before a release step, by result: triggered, trigger-failed, completed, failed, timed_out. */
  readonly evacuationCheckpoints: Counter<'result'>;
  readonly pushes: Counter<'result'>;
  readonly pushLatency: Histogram;
  readonly storeErrors: Counter;
  readonly storeDegraded: Gauge;
  readonly lastSuccessfulSync: Gauge;
  readonly passes: Counter<'result'>;
  readonly blacklistHosts: Gauge;
  readonly expiredItems: Counter;
  /** Stored rows that cannot be decoded or break a request's rules (left out, not enforced) as of the store's last full read. */
  readonly quarantinedItems: Gauge;
  /** This sidecar's clock minus the store's time (ZooKeeper's), as last measured; 0 for a store without a time of its own. */
  readonly clockSkew: Gauge;
  /** The skew beyond which expiry of shared items is refused (0 for a store without a time of its own). */
  readonly clockSkewLimit: Gauge;
  /** Calls of the ResourceManager's REST API, by call (clusterMetrics, nodes, …) and result. */
  readonly rmRequests: Counter<'call' | 'result'>;
  /**
   * Makes numBlockedNodes and the task manager gauge exact at scrape time, counted from the store
   * (so a scrape right after a PUT already shows it, with or without a sync engine). The count is
   * cached until the store's version moves or the next endTimestamp passes. `enabled=false`
   * counts nothing: while the feature is off nothing is blocked.
   */
  countFromStore(source: BlocklistSource): void;
  /** blocklist_sync_pass_running_seconds: how long the running pass has run (0: none); a wedge grows it. */
  readonly passRunning: Gauge;
  /** blocklist_sync_failing_seconds: how long every pass has failed (0: the last one succeeded). */
  readonly failing: Gauge;
  /** Makes both read the engine's progress at scrape time. */
  timePassesFrom(source: PassSource): void;
  /**
   * Outgoing calls that got no complete answer, by peer (rm, proxy, flink) and failure (connection,
   * transport, idle, deadline, too-large): a peer that trickles counts `deadline` even while the
   * passes go on with the last node list.
   */
  readonly peerCallFailures: Counter<'peer' | 'failure'>;
  /** The figures of the console's history (blocked nodes, evacuations, deferred, unapplied) now; undefined before countFromStore or while the store does not answer. */
  sample(): Promise<HistorySample | undefined>;
}

/** The sync engine's passes right now (the engine, a layer above, implements it). */
export interface PassSource {
  clock: Clock;
  progress(): { passRunningSince?: number; failingSince?: number };
}

export interface MetricsOptions {
  /** Append the process's series (prom-client's defaults, build info): a sidecar's metrics, not a test engine's. */
  process?: boolean;
  /** Most items with a blocklist_item_info series (metrics.items.max-series). */
  maxItemSeries?: number;
  /** Most evacuations with per-node series (metrics.evacuations.max-series). */
  maxEvacuationSeries?: number;
}

export const DEFAULT_MAX_ITEM_SERIES = 1000;
export const DEFAULT_MAX_EVACUATION_SERIES = 100;

/** The two gauges of the engine's passes, read from `source()` at scrape time. */
function passGauges(registers: Registry[], source: () => PassSource | undefined): { passRunning: Gauge; failing: Gauge } {
  const secondsSince = (pick: (p: ReturnType<PassSource['progress']>) => number | undefined): number => {
    const s = source();
    const t = s ? pick(s.progress()) : undefined;
    return s && t !== undefined ? Math.max(0, (s.clock.now() - t) / 1000) : 0;
  };
  return {
    passRunning: new Gauge({
      name: METRIC_NAMES.passRunning,
      help: 'Seconds the running reconcile pass has been running (0: none runs); one that keeps growing waits on a peer.',
      registers,
      collect() {
        this.set(secondsSince((p) => p.passRunningSince));
      },
    }),
    failing: new Gauge({
      name: METRIC_NAMES.failing,
      help: 'Seconds every reconcile pass has failed (0: the last pass succeeded).',
      registers,
      collect() {
        this.set(secondsSince((p) => p.failingSince));
      },
    }),
  };
}

/** What the engine sets as it works. A new series is a name above, a field of Metrics and a line here. */
function engineSet(registers: Registry[]) {
  return {
    deferredItems: new Gauge({ name: METRIC_NAMES.deferredItems, help: 'Node items held back by the safety cap (max-blocked-fraction).', registers }),
    evacuatingNodes: new Gauge({ name: METRIC_NAMES.evacuatingNodes, help: 'Items evacuating containers, by phase (WAIT_CONTAINER, CHECKPOINTING, RELEASING, TIMEOUT, READY).', labelNames: ['phase'] as const, registers }),
    containersReleased: new Counter({ name: METRIC_NAMES.containersReleased, help: 'Containers released through the AMRM proxy by evacuations.', registers }),
    taskManagersReleased: new Counter({ name: METRIC_NAMES.taskManagersReleased, help: 'Task managers released by evacuations and MARK_BLOCKED items, by how: idle, checkpointed (after a completed checkpoint), deadline, fallback (the checkpoint failed or was slow), blind (Flink unreadable).', labelNames: ['reason'] as const, registers }),
    evacuationCheckpoints: new Counter({ name: METRIC_NAMES.evacuationCheckpoints, help: 'Checkpoints asked for or awaited before a release step, by result: triggered, trigger-failed, completed, failed, timed_out.', labelNames: ['result'] as const, registers }),
    pushes: new Counter({ name: METRIC_NAMES.pushes, help: 'Blacklist updates sent to the AMRM proxy, by result.', labelNames: ['result'] as const, registers }),
    pushLatency: new Histogram({
      name: METRIC_NAMES.pushLatency,
      help: 'Latency of one blacklist update call to the AMRM proxy.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    storeErrors: new Counter({ name: METRIC_NAMES.storeErrors, help: 'Failed reads of the blocklist store by the sync engine.', registers }),
    storeDegraded: new Gauge({ name: METRIC_NAMES.storeDegraded, help: '1 while the store is unreachable and the last good snapshot is enforced.', registers }),
    lastSuccessfulSync: new Gauge({ name: METRIC_NAMES.lastSuccessfulSync, help: 'Unix time (seconds) of the last reconcile pass that read desired and actual and applied the difference.', registers }),
    passes: new Counter({ name: METRIC_NAMES.passes, help: 'Reconcile passes, by result.', labelNames: ['result'] as const, registers }),
    blacklistHosts: new Gauge({ name: METRIC_NAMES.blacklistHosts, help: "Hosts on YARN's blacklist for this application, as last read or pushed.", registers }),
    expiredItems: new Counter({ name: METRIC_NAMES.expiredItems, help: 'Expired items deleted from the store by the expiry job of this sidecar.', registers }),
    rmRequests: new Counter({ name: METRIC_NAMES.rmRequests, help: "Calls of the ResourceManager's REST API by this sidecar (shared cluster-state readings from ZooKeeper not included), by call and result.", labelNames: ['call', 'result'] as const, registers }),
    peerCallFailures: new Counter({ name: METRIC_NAMES.peerCallFailures, help: 'Calls to the RM, the AMRM proxy and Flink that got no complete answer, by peer and failure (connection, transport, idle, deadline, too-large).', labelNames: ['peer', 'failure'] as const, registers }),
  };
}

/** Counted from the store at scrape time, one reading shared by the gauges of a scrape. */
function storeCounts(registers: Registry[], reader: StoreReader, quarantined: () => readonly unknown[] | undefined) {
  const counted = (name: string, help: string, pick: (c: BlocklistCounts) => number) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const c = (await reader.read())?.counts;
        if (c) this.set(pick(c));
      },
    });
  return {
    blockedNodes: counted(METRIC_NAMES.blockedNodes, 'Number of currently blocked nodes for this application (FLIP-224 gauge), deferred ones included.', (c) => c.nodes),
    blockedNodesConventional: counted(METRIC_NAMES.blockedNodesConventional, 'Currently blocked nodes for this application, deferred ones included (numBlockedNodes under Prometheus naming).', (c) => c.nodes),
    blockedTaskManagers: counted(METRIC_NAMES.blockedTaskManagers, 'Number of currently blocked task manager containers for this application.', (c) => c.taskManagers),
    quarantinedItems: new Gauge({
      name: METRIC_NAMES.quarantinedItems,
      help: "Stored items that cannot be decoded or break the API's rules: not enforced until removed (DELETE / blocklist unblock).",
      registers,
      async collect() {
        await reader.read(); // a full read when the store changed: the quarantine is as fresh as the counts
        this.set(quarantined()?.length ?? 0);
      },
    }),
  };
}

/** The store's time against this sidecar's clock, as the store last measured it (0 for a store without a time). */
function storeClock(registers: Registry[], skew: () => { skewMs: number; limitMs: number } | undefined) {
  return {
    clockSkew: new Gauge({
      name: METRIC_NAMES.clockSkew,
      help: "This sidecar's clock minus the store's time (ZooKeeper's), seconds, as last measured; beyond the limit expiry of shared items is refused. 0 for a store without a time of its own (SQLite).",
      registers,
      collect() {
        this.set((skew()?.skewMs ?? 0) / 1000);
      },
    }),
    clockSkewLimit: new Gauge({
      name: METRIC_NAMES.clockSkewLimit,
      help: 'The clock skew beyond which expiry of shared items is refused (cluster.resource-blocklist.store.zookeeper.clock-skew-limit), seconds; 0 for a store without a time of its own.',
      registers,
      collect() {
        this.set((skew()?.limitMs ?? 0) / 1000);
      },
    }),
  };
}

/** Label values that always exist, so dashboards see 0 rather than no series. */
function zeroLabels(set: ReturnType<typeof engineSet>): void {
  for (const phase of ['WAIT_CONTAINER', 'CHECKPOINTING', 'RELEASING', 'TIMEOUT', 'READY']) set.evacuatingNodes.set({ phase }, 0);
  for (const peer of ['rm', 'proxy']) for (const failure of ['deadline', 'too-large']) set.peerCallFailures.inc({ peer, failure }, 0);
  for (const reason of ['idle', 'checkpointed', 'deadline', 'fallback', 'blind']) set.taskManagersReleased.inc({ reason }, 0);
  for (const result of ['triggered', 'trigger-failed', 'completed', 'failed', 'timed_out']) set.evacuationCheckpoints.inc({ result }, 0);
  for (const result of ['success', 'failure']) {
    set.pushes.inc({ result }, 0);
    set.passes.inc({ result }, 0);
  }
}

export function createMetrics(opts: MetricsOptions = {}, registry: Registry = new Registry()): Metrics {
  const registers = [registry];
  let source: BlocklistSource | undefined;
  let passes: PassSource | undefined;
  const reader = new StoreReader(() => source);
  const counts = storeCounts(registers, reader, () => source?.store.quarantined?.());
  const set = engineSet(registers);
  const clock = storeClock(registers, () => source?.store.clockSkew?.());
  const timed = passGauges(registers, () => passes);
  registerItemSeries(registry, reader, opts.maxItemSeries ?? DEFAULT_MAX_ITEM_SERIES);
  const figures = registerEngineSeries(registry, () => source, reader, { maxEvacuations: opts.maxEvacuationSeries ?? DEFAULT_MAX_EVACUATION_SERIES });
  zeroLabels(set);
  return {
    registry,
    contentType: registry.contentType,
    text: opts.process ? async () => `${await registry.metrics()}${await processRegistry().metrics()}` : () => registry.metrics(),
    ...counts,
    ...clock,
    ...set,
    ...timed,
    countFromStore(s) {
      source = s;
      reader.reset();
    },
    timePassesFrom(s) {
      passes = s;
    },
    async sample() {
      const r = await reader.read();
      if (!r) return undefined;
      const engine = source?.engine?.();
      let evacuating = 0;
      for (const e of engine?.evacuations.values() ?? []) if (e.phase !== 'READY') evacuating++;
      return { blocked: r.counts.nodes, evacuating, deferred: engine?.deferred?.length ?? 0, unapplied: (await figures.unapplied()) ?? 0 };
    },
  };
}
