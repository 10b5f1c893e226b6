/**
 * The seam where the sidecar gets its sync engine.
 *  - YARN configured (`yarn.resourcemanager.webapp.address` and
 *    `cluster.resource-blocklist.amrm-proxy.address` set) and enforcement enabled: the real engine
 *    (src/sync/engine.ts) over the RM REST client and the AMRM proxy client.
 *  - Otherwise: API-only with NoSync (nothing is pushed anywhere).
 * In both cases the handle carries the metrics (GET /metrics serves `metrics.text()`) and runs the
 * expiry job, which only tidies the store: whether an item counts is decided by time.
 */
import { NoSync, SyncFacade } from '../sync/sync-port';
import { ConfigError, LoadedConfig } from '../config/config';
import { BlocklistStore } from '../store/store';
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { AuditSink } from '../model/audit';
import { EngineReading, Metrics, createMetrics } from '../metrics/metrics';
import { NodeNaming, SyncView } from '../sync/view';
import { ExpiryJob, ExpiryOutcome } from '../sync/expiry';
import { SyncEngine, syncSettingsFromConfig } from '../sync/engine';
import { Withdrawal } from '../sync/withdraw-when-disabled';
import { Backoff } from '../sync/backoff';
import { AmrmProxy, ResourceManagerReader } from '../yarn/types';
import { ResourceManagerClient, hostOf, normaliseBaseUrl } from '../yarn/rm-client';
import { AmrmProxyClient } from '../yarn/amrm-client';
import { resolveApplicationId } from '../yarn/resolve-app';
import { NodeNamingSetting, PortNamedProxy, detectNodeNaming, hostNamedRm } from '../yarn/node-names';
import { createYarnHttpsAgent } from '../security/tls';
import { KerberosLogin, kerberosSettings } from '../security/kerberos';
import * as os from 'node:os';
import type * as https from 'node:https';
import type { ZkSession } from '../store/zookeeper/session';
import type { SharedClusterStats } from './shared-cluster-state';
import { GoneStates } from '../detect/gone-job-records';
import { FlinkRestClient } from '../flink/client';
import { FlinkLocation } from '../flink/locate';
import { FlinkJobManager } from '../flink/types';
import { countedResourceManager } from './counted-rm';

export interface SyncDeps {
  config: LoadedConfig;
  store: BlocklistStore;
  clock: Clock;
  logger: Logger;
  /** Expiry audit lines go here (else to the logger with `audit: true`). */
  audit?: AuditSink;
  /** A registry of its own when absent. */
  metrics?: Metrics;
  /** Overrides the clients the config names (tests, in-process simulator). */
  yarn?: { rm: ResourceManagerReader; proxy: AmrmProxy };
  /** Overrides the Flink JobManager client (tests, in-process simulator). */
  flink?: (location: FlinkLocation) => FlinkJobManager;
  /** Environment for CONTAINER_ID (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * The sidecar's ZooKeeper session (ZooKeeper store only), shared with the store: the
   * cluster-state election and readings run on it. The sidecar owns and closes it.
   */
  zookeeper?: ZkSession;
  /**
   * The sidecar's Kerberos login when it has one already (SASL to ZooKeeper): the RM client uses
   * it instead of a second login, and the sidecar stops it.
   */
  kerberos?: KerberosLogin;
}

export interface SyncHandle extends SyncFacade {
  /** Prometheus metrics of this sidecar: `metrics.text()` / `metrics.contentType` for GET /metrics. */
  readonly metrics: Metrics;
  /** 'engine' when pushing to YARN, 'none' when API-only. */
  readonly mode: 'engine' | 'none';
  /** The YARN clients the engine uses (absent when API-only): the detector reads through them too. */
  readonly yarn?: { rm: ResourceManagerReader; proxy: AmrmProxy };
  /** The cluster-state election and readings (ZooKeeper store with yarn.cluster-state.shared), when running. */
  clusterState?(): SharedClusterStats;
  /**
   * With the cluster-state election: whether this sidecar is the one elected, which alone looks
   * for gone jobs' records (core/sweep-schedule.ts). Absent: every sidecar looks.
   */
  sweepsRecords?(): boolean;
  /** The RM web address the engine reads (the one that answered last), when it reads a real RM. */
  rmWebAddress?(): string | undefined;
  /** One expiry pass now (POST /blocklist/expire, `blocklist expire`), besides the cron schedule. */
  expireNow(): Promise<ExpiryOutcome>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The JobManager's client at a location: the deadline and answer bound every peer call has, counted as the detector's Flink calls are. */
function flinkClients(deps: SyncDeps, metrics: Metrics, tls: { httpsAgent?: https.Agent }): (location: FlinkLocation) => FlinkJobManager {
  const v = deps.config.values;
  return (loc) =>
    new FlinkRestClient({
      baseUrl: loc.baseUrl,
      canPost: loc.canPost,
      timeoutMs: v['cluster.resource-blocklist.yarn.request-timeout'],
      clock: deps.clock,
      maxAnswerBytes: v['cluster.resource-blocklist.detector.flink.max-answer-size'],
      onFailure: (failure) => metrics.peerCallFailures.inc({ peer: 'flink', failure }),
      ...tls,
    });
}

/** Whether the config names both YARN endpoints the engine needs. */
export function yarnConfigured(config: LoadedConfig): boolean {
  const v = config.values;
  return v['yarn.resourcemanager.webapp.address'].trim() !== '' && v['cluster.resource-blocklist.amrm-proxy.address'].trim() !== '';
}

export async function createSync(deps: SyncDeps): Promise<SyncHandle> {
  const v = deps.config.values;
  const enabled = v['cluster.resource-blocklist.enabled'];
  const kerberos = kerberosSettings(v);
  if (kerberos.kind === 'invalid') throw new ConfigError([kerberos.problem]);
  const metrics = deps.metrics ?? createMetrics({ process: true, maxItemSeries: v['metrics.items.max-series'], maxEvacuationSeries: v['metrics.evacuations.max-series'] });
  const expiry = new ExpiryJob({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger,
    schedule: v['cluster.resource-blocklist.expiry.cron'],
    metrics,
    ...(deps.audit ? { audit: deps.audit } : {}),
  });
  if (!enabled || (!deps.yarn && !yarnConfigured(deps.config))) return apiOnly(deps, { metrics, expiry, keytab: kerberos.kind === 'keytab' });
  // https:// RMs and proxies signed by a private CA: one agent trusting the configured bundle.
  const httpsAgent = v['cluster.resource-blocklist.yarn.ssl.ca-file'] ? createYarnHttpsAgent(v['cluster.resource-blocklist.yarn.ssl.ca-file']) : undefined;
  const tls = httpsAgent ? { httpsAgent } : {};
  const applicationId = await configuredApplicationId(deps);
  // A secured RM (SPNEGO): log in from the keytab now, so a wrong keytab stops start-up with the KDC's answer.
  const login = !deps.yarn && kerberos.kind === 'keytab' ? (deps.kerberos ?? (await startKerberos(kerberos, v['yarn.resourcemanager.webapp.address'], deps))) : undefined;
  const given = deps.yarn ?? yarnClients(deps, metrics, tls, login);
  const counted = { rm: countedResourceManager(given.rm, metrics.rmRequests), proxy: given.proxy };
  // The RM's own configuration is read once, from the client itself (the counted reader has no /conf).
  const yarn = await withNodeNaming({ ...counted, detectWith: given.rm }, v['cluster.resource-blocklist.yarn.include-port-in-node-name'], deps);
  const share = await openSharedClusterState(deps, yarn.rm, applicationId);
  const goneStates = new GoneStates({ store: deps.store, logger: deps.logger, ...(share ? { sweeper: () => share.isLeader() } : {}) });
  const engine = new SyncEngine({
    store: deps.store,
    rm: share?.reader ?? yarn.rm,
    proxy: yarn.proxy,
    clock: deps.clock,
    logger: deps.logger,
    settings: { ...syncSettingsFromConfig(v), nodeNaming: yarn.naming },
    metrics,
    ...(applicationId !== undefined ? { applicationId } : {}),
    ...(share ? { sweepsRecords: () => share.isLeader() } : {}),
    // The detector's state records of gone jobs: looked for here, not by the detector, so the
    // elected sidecar looks whether or not it runs a detector (or stands by for its job's).
    sweepAlso: (app, now) => goneStates.collect(app, now),
    // The job's JobManager (found from the RM's application report unless configured): evacuations
    // and MARK_BLOCKED items release task managers as Flink survives best.
    flink: deps.flink ?? flinkClients(deps, metrics, tls),
    ...(deps.audit ? { audit: deps.audit } : {}),
  });
  metrics.countFromStore({
    store: deps.store,
    clock: deps.clock,
    applicationId: () => engine.view().applicationId ?? applicationId,
    enabled: true,
    knownHosts: () => engine.view().nodes?.known,
    engine: () => engineReading(engine.view()),
  });
  metrics.timePassesFrom({ clock: deps.clock, progress: () => engine.progress() });
  return engineHandle({ deps, metrics, expiry, engine, share, login, yarn: { rm: share?.reader ?? yarn.rm, proxy: yarn.proxy }, rm: given.rm });
}

/** Disabled, or YARN not configured: the API and the expiry job, nothing pushed (and, disabled, our own entries withdrawn). */
async function apiOnly(deps: SyncDeps, parts: { metrics: Metrics; expiry: ExpiryJob; keytab: boolean }): Promise<SyncHandle> {
  const { metrics, expiry } = parts;
  const enabled = deps.config.values['cluster.resource-blocklist.enabled'];
  const appId = await configuredApplicationId(deps);
  metrics.countFromStore({ store: deps.store, clock: deps.clock, applicationId: () => appId, enabled });
  if (parts.keytab && !deps.kerberos) deps.logger.info('security.kerberos.login.* are set but nothing reads the RM (API only): no Kerberos login');
  if (enabled) deps.logger.info('YARN is not configured (yarn.resourcemanager.webapp.address, cluster.resource-blocklist.amrm-proxy.address): API only, nothing is pushed');
  else deps.logger.info("cluster.resource-blocklist.enabled is false: nothing is pushed to YARN, and this sidecar's own entries are withdrawn from it");
  const withdrawal = enabled ? undefined : withdrawalFor(deps);
  return Object.assign(new NoSync(enabled), {
    metrics,
    mode: 'none' as const,
    expireNow: () => expiry.runOnce(),
    async start() {
      expiry.start();
      withdrawal?.start();
      await withdrawal?.idle();
    },
    async stop() {
      await withdrawal?.stop();
      await expiry.stop();
    },
  });
}

/** The RM and AMRM proxy clients the configuration names, each call bounded and its failures counted. */
function yarnClients(deps: SyncDeps, metrics: Metrics, tls: { httpsAgent?: https.Agent }, login: KerberosLogin | undefined): { rm: ResourceManagerReader; proxy: AmrmProxy } {
  const v = deps.config.values;
  const timeoutMs = v['cluster.resource-blocklist.yarn.request-timeout'];
  return {
    rm: new ResourceManagerClient({
      addresses: v['yarn.resourcemanager.webapp.address'],
      timeoutMs,
      clock: deps.clock,
      maxListBytes: v['cluster.resource-blocklist.yarn.max-answer-size'],
      onFailure: (failure) => metrics.peerCallFailures.inc({ peer: 'rm', failure }),
      logger: deps.logger,
      ...(v['yarn.resourcemanager.webapp.user'] ? { user: v['yarn.resourcemanager.webapp.user'] } : {}),
      ...(login ? { auth: login } : {}),
      ...tls,
    }),
    proxy: new AmrmProxyClient({
      address: v['cluster.resource-blocklist.amrm-proxy.address'],
      timeoutMs,
      clock: deps.clock,
      maxAnswerBytes: v['cluster.resource-blocklist.amrm-proxy.max-answer-size'],
      onFailure: (failure) => metrics.peerCallFailures.inc({ peer: 'proxy', failure }),
      ...(v['cluster.resource-blocklist.amrm-proxy.secret-file'] ? { secretFile: v['cluster.resource-blocklist.amrm-proxy.secret-file'] } : {}),
      ...tls,
    }),
  };
}

interface EngineParts {
  deps: SyncDeps;
  metrics: Metrics;
  expiry: ExpiryJob;
  engine: SyncEngine;
  share: SharedClusterStateHandle | undefined;
  login: KerberosLogin | undefined;
  /** The engine's reader: with a shared cluster state the node counts and list come from ZooKeeper. */
  yarn: { rm: ResourceManagerReader; proxy: AmrmProxy };
  /** The RM client as configured (its active address), before counting and sharing wrap it. */
  rm: ResourceManagerReader;
}

/** The running engine as the sidecar and the API see it; started and stopped with its expiry job, cluster state and login. */
function engineHandle(p: EngineParts): SyncHandle {
  const { engine, expiry, share, login, deps } = p;
  return {
    metrics: p.metrics,
    mode: 'engine',
    // The detector reads through this too: with a shared cluster state it is not one more RM reader per job.
    yarn: p.yarn,
    rmWebAddress: () => (p.rm instanceof ResourceManagerClient ? p.rm.activeAddress : undefined),
    ...(share ? { clusterState: () => share.stats(), sweepsRecords: () => share.isLeader() } : {}),
    async expireNow() {
      const out = await expiry.runOnce();
      if (out.outcome === 'removed' && out.items.length) engine.kick('expired items deleted');
      return out;
    },
    kick: (reason) => engine.kick(reason),
    taskManagersOn: (node) => engine.taskManagersOn(node),
    containersKnown: () => engine.containersKnown(),
    containerHost: (id) => engine.containerHost(id),
    view: () => engine.view(),
    synced: () => engine.synced(),
    progress: () => engine.progress(),
    async start() {
      expiry.start();
      share?.start();
      await engine.start();
    },
    async stop() {
      await expiry.stop();
      await engine.stop();
      await share?.stop();
      if (login !== deps.kerberos) await login?.stop();
    },
  };
}

/** What the scrape-time series read of the engine's last pass (src/metrics/store-reading.ts). */
function engineReading(view: SyncView): EngineReading {
  const plan = view.plan;
  return {
    ...(view.appAttemptId !== undefined ? { appAttemptId: view.appAttemptId } : {}),
    ...(view.actual ? { actual: view.actual } : {}),
    ...(plan ? { deferred: plan.deferred, cap: { used: plan.capUsed, limit: plan.capacity, runningNodes: plan.capNodes } } : {}),
    evacuations: view.evacuations,
  };
}

/**
 * With the ZooKeeper store and yarn.cluster-state.shared: the node counts and node list are read
 * by one elected sidecar per store and shared through ZooKeeper (shared-cluster-state.ts), on the
 * sidecar's one ZooKeeper session, the store's. When that session ends (expiry, or a stuck client
 * replaced) the election's ephemeral member znode goes with it, so the election joins again on
 * the new session, as the store's watch re-arms there.
 */
async function openSharedClusterState(deps: SyncDeps, rm: ResourceManagerReader, applicationId: string | undefined): Promise<SharedClusterStateHandle | undefined> {
  const v = deps.config.values;
  if (v['cluster.resource-blocklist.store.type'] !== 'zookeeper' || !v['cluster.resource-blocklist.yarn.cluster-state.shared']) return undefined;
  const session = deps.zookeeper;
  if (!session) {
    deps.logger.info('yarn.cluster-state.shared: no ZooKeeper session of the sidecar (a store was handed in); this sidecar reads the RM itself');
    return undefined;
  }
  const { ZkLayout, parseConnectString } = await import('../store/zookeeper/paths.js');
  const { SharedClusterState } = await import('./shared-cluster-state.js');
  const addr = parseConnectString(v['cluster.resource-blocklist.store.zookeeper.quorum']);
  const share = new SharedClusterState({
    rm,
    session,
    basePath: new ZkLayout(addr.chroot, v['cluster.resource-blocklist.store.zookeeper.root']).base,
    member: `${applicationId ?? 'sidecar'}@${os.hostname()}:${process.pid}`,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'cluster-state' }),
    operationTimeoutMs: v['cluster.resource-blocklist.store.zookeeper.operation-timeout'],
    metricsIntervalMs: v['cluster.resource-blocklist.yarn.refresh-interval'],
    nodesIntervalMs: v['cluster.resource-blocklist.yarn.nodes.refresh-interval'],
  });
  return {
    reader: share.reader,
    stats: () => share.stats(),
    isLeader: () => share.election.isLeader,
    start: () => share.start(),
    // Leaves the election (deletes the member znode) on the shared session; the sidecar closes it later.
    stop: () => share.stop(),
  };
}

interface SharedClusterStateHandle {
  reader: ResourceManagerReader;
  stats(): SharedClusterStats;
  isLeader(): boolean;
  start(): void;
  stop(): Promise<void>;
}

/** Switched off with a proxy to talk to: withdraw this sidecar's own owner set from the AM's blacklist. */
function withdrawalFor(deps: SyncDeps): Withdrawal | undefined {
  const v = deps.config.values;
  const address = v['cluster.resource-blocklist.amrm-proxy.address'].trim();
  if (!deps.yarn && address === '') return undefined;
  const ca = v['cluster.resource-blocklist.yarn.ssl.ca-file'];
  const proxy =
    deps.yarn?.proxy ??
    new AmrmProxyClient({
      address,
      timeoutMs: v['cluster.resource-blocklist.yarn.request-timeout'],
      clock: deps.clock,
      maxAnswerBytes: v['cluster.resource-blocklist.amrm-proxy.max-answer-size'],
      ...(ca ? { httpsAgent: createYarnHttpsAgent(ca) } : {}),
    });
  const s = syncSettingsFromConfig(v);
  return new Withdrawal({ proxy, owner: v['cluster.resource-blocklist.amrm-proxy.owner'], clock: deps.clock, logger: deps.logger, backoff: new Backoff({ initialMs: s.initialBackoffMs, maxMs: s.maxBackoffMs, jitter: s.backoffJitter ?? 0 }) });
}

/** The Kerberos login for the RM client; the first RM address's host is the login's probe (HTTP/<host>). */
async function startKerberos(
  k: { keytab: string; principal: string; krb5Conf?: string },
  rmAddresses: string,
  deps: SyncDeps,
): Promise<KerberosLogin> {
  const first = normaliseBaseUrl(rmAddresses.split(',').map((s) => s.trim()).filter((s) => s !== '')[0] ?? '');
  const login = new KerberosLogin({
    principal: k.principal,
    keytab: k.keytab,
    ...(k.krb5Conf ? { krb5Conf: k.krb5Conf } : {}),
    probeHost: hostOf(first),
    clock: deps.clock,
    logger: deps.logger.child({ component: 'kerberos' }),
  });
  try {
    await login.start();
  } catch (e) {
    await login.stop();
    throw e;
  }
  return login;
}

/** yarn.application.id, else CONTAINER_ID; undefined when neither is set (the proxy will say). A bad value fails start-up. */
async function configuredApplicationId(deps: SyncDeps): Promise<string | undefined> {
  const configured = deps.config.values['yarn.application.id'];
  const env = deps.env ?? process.env;
  if (!configured.trim() && !env.CONTAINER_ID?.trim()) return undefined;
  return (await resolveApplicationId({ configured, env })).applicationId;
}

/**
 * The proxy as the engine pushes through it: as it is when the RM names nodes by host (YARN's
 * default), wrapped to push NodeIds when it names them host:port (yarn/node-names.ts).
 */
async function withNodeNaming(yarn: { rm: ResourceManagerReader; proxy: AmrmProxy; detectWith: ResourceManagerReader }, setting: NodeNamingSetting, deps: SyncDeps): Promise<{ rm: ResourceManagerReader; proxy: AmrmProxy; naming: NodeNaming }> {
  const d = await detectNodeNaming(yarn.detectWith, setting);
  if (d.warning) deps.logger.warn(d.warning);
  if (d.naming === 'host') {
    deps.logger.debug(`blacklist entries are host names: ${d.why}`);
    return { rm: yarn.rm, proxy: yarn.proxy, naming: { entries: 'host', why: d.warning ?? d.why } };
  }
  deps.logger.info(`blacklist entries are pushed as each NodeManager's host:port (what the scheduler matches): ${d.why}`);
  return { rm: hostNamedRm(yarn.rm), proxy: new PortNamedProxy(yarn.proxy, yarn.rm, deps.clock, deps.logger), naming: { entries: 'host:port', why: d.why } };
}
