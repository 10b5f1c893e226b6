/**
 * What a controller (controller.ts) is given and what it is made of: its settings and edges, the
 * outcome of a pass, and the parts built from them once (the watchers, the executor, the job's
 * evacuation starts, Flink's side, the rules). The pass's steps take these parts as arguments.
 */
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { AmrmProxy, ResourceManagerReader, SIDECAR_BLACKLIST_OWNER } from '../yarn/types';
import { Metrics } from '../metrics/metrics';
import { AuditSink } from '../model/audit';
import { FlinkJobManager } from '../flink/types';
import { FlinkLocation } from '../flink/locate';
import { BlacklistDiff } from './desired';
import { DEFAULT_CAP_NODE_COUNT_MEMORY_MS } from './memory';
import { Rules } from './reconcile';
import { FlinkWatcher } from './watch-flink';
import { FlinkSide } from './flink-side';
import { Executor } from './executor';
import { StartsRecord } from './starts-record';
import { GoneSweep } from './gone-job-sweeps';
import { StoreWatcher } from './watch-store';
import { AttemptWatcher } from './watch-attempt';
import { BlacklistWatcher } from './watch-blacklist';
import { NodesWatcher } from './watch-nodes';
import { ContainersWatcher } from './watch-containers';
import { NeedsMemo } from './read-policy';
import { NodeNaming, PassStage } from './view';

/** yarn.nodes.refresh-interval's default: the node list is megabytes at 10,000 nodes. */
export const DEFAULT_NODES_REFRESH_MS = 10 * 60_000;

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
  /** How blacklist entries name nodes, decided at start (yarn.include-port-in-node-name), and why: shown in the status. */
  nodeNaming?: NodeNaming;
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

/** The observed layer: one watcher per thing read, each with its cache. */
export interface Watchers {
  store: StoreWatcher;
  attempt: AttemptWatcher;
  blacklist: BlacklistWatcher;
  nodes: NodesWatcher;
  containers: ContainersWatcher;
}

/** A controller's parts, made once from its edges; what changes from pass to pass is not here. */
export interface ControllerParts {
  readonly deps: ControllerDeps;
  readonly watch: Watchers;
  readonly executor: Executor;
  /** This job's evacuation starts, as stored (evacuation-starts.ts). */
  readonly starts: StartsRecord;
  /** Gone jobs' records, looked for beside the passes (engine.idle() waits for a sweep running). */
  readonly gone: GoneSweep;
  readonly rules: Rules;
  /** What the items in force need read, kept while the snapshot and the clock allow (the poll asks every tick). */
  readonly needs: NeedsMemo;
  /** Flink's JobManager as the evacuations read it, and the checkpoints they trigger. */
  readonly flink: FlinkSide;
}

const noFlink = (): FlinkJobManager => {
  throw new Error("Flink's REST API is not used");
};

export function controllerParts(deps: ControllerDeps): ControllerParts {
  const owner = deps.settings.proxyOwner ?? SIDECAR_BLACKLIST_OWNER;
  const { store, rm, proxy, logger, metrics, settings } = deps;
  const intervals = { refreshMs: settings.refreshIntervalMs, nodesRefreshMs: settings.nodesRefreshIntervalMs ?? DEFAULT_NODES_REFRESH_MS };
  const watch: Watchers = {
    store: new StoreWatcher({ store, logger, metrics }),
    attempt: new AttemptWatcher({ proxy, logger, ...(deps.applicationId !== undefined ? { applicationId: deps.applicationId } : {}) }),
    blacklist: new BlacklistWatcher({ proxy, rm, logger, metrics, owner }),
    nodes: new NodesWatcher({ rm, logger }, intervals),
    containers: new ContainersWatcher({ proxy }, intervals),
  };
  const executor = new Executor({ proxy, metrics, logger, owner });
  const starts = new StartsRecord({ store, logger, ...(deps.sweepsRecords ? { sweeper: deps.sweepsRecords } : {}) });
  const gone = new GoneSweep({ starts, logger, ...(deps.sweepAlso ? { also: deps.sweepAlso } : {}) });
  const connect = deps.flink;
  const enabled = connect !== undefined && settings.flinkEnabled !== false;
  const watcher = new FlinkWatcher({ rm, logger, connect: connect ?? noFlink, address: settings.flinkAddress ?? '', enabled, minIntervalMs: settings.flinkReadIntervalMs ?? 1000 });
  const flink = new FlinkSide(watcher, { logger, metrics, ...(deps.audit ? { audit: deps.audit } : {}) });
  return { deps, watch, executor, starts, gone, rules: rulesOf(settings), needs: new NeedsMemo(), flink };
}

function rulesOf(settings: ControllerSettings): Rules {
  return {
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
}
