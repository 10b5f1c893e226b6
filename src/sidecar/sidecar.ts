/**
 * The composition root: configuration → store, sync engine, audit, REST API, expiry — started
 * in that order and stopped in reverse. Nothing else in the program wires parts together.
 *
 * With the ZooKeeper store the sidecar opens one ZooKeeper session here and hands it to the store
 * and to the cluster-state election (through the sync factory): one connection per sidecar, so a
 * host's sidecars stay within ZooKeeper's per-address limit (maxClientCnxns, 60 by default). It is
 * closed once, last, after everything that uses it has stopped.
 */
import { AddressInfo } from 'node:net';
import { FastifyInstance } from 'fastify';
import { ConfigError, LoadedConfig, effectiveConfig } from '../config/config';
import { Clock, systemClock } from '../core/clock';
import { createLogger } from '../log/logger';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { openStore, openZookeeperSession } from '../store/factory';
import { sharedStoreClock } from '../store/store-clock';
import { buildApi } from '../api/server';
import { createAuditSink } from '../log/audit';
import { AuditSink } from '../model/audit';
import { SyncDeps, SyncHandle, createSync } from './sync-factory';
import { createDetector } from './detector-factory';
import { Detector } from '../detect/detector';
import { checkBindSafety } from '../security/bind-safety';
import { loadRestSecurity } from '../security/rest-security';
import { TokenWatch, watchTokenFile } from '../security/token-reload';
import { ZookeeperGssapi, startZookeeperLogin, zookeeperSaslSettings } from '../security/zookeeper-gssapi';
import type { KerberosLogin } from '../security/kerberos';
import type { ZkSession } from '../store/zookeeper/session';
import { History } from '../metrics/history';
import { ConsoleData } from '../api/console/console-routes';
import { LinkReader } from '../api/console/links';

import { PublishedAddress, applicationStates } from './published-address';
import { DiscoveryPort, RunningTargets } from '../api/routes/discovery';
import { ResourceManagerReader } from '../yarn/types';
import { ResourceManagerClient } from '../yarn/rm-client';
import { createYarnHttpsAgent } from '../security/tls';
import { kerberosSettings } from '../security/kerberos';
import { packageVersion } from '../core/package-info';

/** Samples the console's chart keeps (6 h at the default rest.console.history-interval of 1 min). */
const HISTORY_SAMPLES = 360;

export interface SidecarOptions {
  config: LoadedConfig;
  clock?: Clock;
  logger?: Logger;
  /** Overrides the store the config names (tests). */
  store?: BlocklistStore;
  audit?: AuditSink;
  /** Overrides the YARN clients the config names (tests that fake the edge). */
  yarn?: SyncDeps['yarn'];
  env?: NodeJS.ProcessEnv;
  /** The product version it publishes with its address (default: package.json's). */
  version?: string;
}

export interface Sidecar {
  /** http://host:port of the REST API. */
  url: string;
  port: number;
  store: BlocklistStore;
  sync: SyncHandle;
  /** The failure detector, when cluster.resource-blocklist.detector.mode is not off. */
  detector?: Detector;
  api: FastifyInstance;
  /** Where it told others it listens (rest.address-file, the ZooKeeper znode). */
  address: PublishedAddress;
  close(): Promise<void>;
}

interface StoreParts {
  store: BlocklistStore;
  /** The sidecar's one ZooKeeper session (ZooKeeper store), closed last. */
  zookeeper?: ZkSession;
  /** With SASL to ZooKeeper: the sidecar's Kerberos login (the RM client's too), stopped after the session. */
  zkLogin?: { login: KerberosLogin; mechanism: ZookeeperGssapi };
}

/**
 * The store the config names (or the one handed in), its ZooKeeper session and, for SASL, the
 * Kerberos login first: a wrong keytab stops start-up with the KDC's answer. Undone on failure.
 */
async function openStoreParts(opts: SidecarOptions, local: Clock, logger: Logger): Promise<StoreParts> {
  // A store handed in (tests) brings its own connection; then nothing else opens a session.
  if (opts.store) return { store: opts.store };
  const v = opts.config.values;
  const sasl = zookeeperSaslSettings(v);
  if (sasl.kind === 'invalid') throw new ConfigError([sasl.problem]);
  const zkLogin = await startZookeeperLogin(sasl, v['cluster.resource-blocklist.store.zookeeper.quorum'], local, logger);
  let zookeeper: ZkSession | undefined;
  try {
    zookeeper = await openZookeeperSession(v, logger, zkLogin && sasl.kind === 'gssapi' ? { mechanism: zkLogin.mechanism, acl: sasl.acl } : undefined);
    const store = await openStore(v, logger, zookeeper, local);
    return { store, ...(zookeeper ? { zookeeper } : {}), ...(zkLogin ? { zkLogin } : {}) };
  } catch (e) {
    await zookeeper?.close();
    await zkLogin?.login.stop();
    throw e;
  }
}

export async function startSidecar(opts: SidecarOptions): Promise<Sidecar> {
  const v = opts.config.values;
  const local = opts.clock ?? systemClock;
  const logger = opts.logger ?? createLogger({ format: v['log.format'], level: v['log.level'] });
  checkBindSafety(v);
  const security = loadRestSecurity(v, logger.child({ component: 'security' }));
  const parts = await openStoreParts(opts, local, logger);
  // On a shared store a clock ahead of the store's time counts on the store's (store/store-clock.ts).
  const skew = parts.store.clockSkew?.bind(parts.store);
  const clock = skew ? sharedStoreClock(local, skew) : local;
  const audit = opts.audit ?? createAuditSink(logger.child({ component: 'audit' }), v['log.audit.file'] || undefined, () => clock.now());
  const published = new PublishedAddress({ values: v, env: opts.env ?? process.env, logger: logger.child({ component: 'address' }), version: opts.version ?? packageVersion(), ...(parts.zookeeper ? { zookeeper: parts.zookeeper } : {}) });
  const started: Started = { ...parts, ownsStore: !opts.store, published };
  let serving: { sync: SyncHandle; api: FastifyInstance };
  try {
    serving = await startServing(opts, started, { clock, logger, audit, security });
  } catch (e) {
    await stopStarted(started, () => undefined);
    throw e;
  }
  const addr = serving.api.server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `${security.tls ? 'https' : 'http'}://${host}:${addr.port}`;
  logger.info(`REST API listening on ${url} (store ${parts.store.description})`);
  let closed = false;
  return {
    url,
    port: addr.port,
    store: parts.store,
    sync: serving.sync,
    ...(started.detector ? { detector: started.detector } : {}),
    api: serving.api,
    address: published,
    async close() {
      if (closed) return;
      closed = true;
      await stopStarted(started, (what, e) => logger.warn(`${what}: ${e.message}`));
    },
  };
}

/** What startSidecar has started so far: stopped in reverse by stopStarted, also when start-up fails half-way. */
interface Started extends StoreParts {
  /** Whether the sidecar opened the store (one handed in is the caller's to close). */
  ownsStore: boolean;
  published: PublishedAddress;
  sync?: SyncHandle;
  api?: FastifyInstance;
  tokenWatch?: TokenWatch;
  detector?: Detector;
  history?: History;
}

interface Wiring {
  clock: Clock;
  logger: Logger;
  audit: AuditSink;
  security: ReturnType<typeof loadRestSecurity>;
}

/** The engine, detector and API on the opened store, listening and started; each part filed in `started` as it comes. */
async function startServing(opts: SidecarOptions, started: Started, w: Wiring): Promise<{ sync: SyncHandle; api: FastifyInstance }> {
  const v = opts.config.values;
  const { clock, logger, audit, security } = w;
  const { store, zookeeper, zkLogin } = started;
  const sync = (started.sync = await createSync({
    config: opts.config,
    store,
    clock,
    logger: logger.child({ component: 'sync' }),
    audit,
    ...(zookeeper ? { zookeeper } : {}),
    ...(zkLogin ? { kerberos: zkLogin.login } : {}),
    ...(opts.yarn ? { yarn: opts.yarn } : {}),
    ...(opts.env ? { env: opts.env } : {}),
  }));
  const metrics = sync.metrics;
  const history = (started.history = v['rest.console.enabled'] ? new History({ clock, intervalMs: v['rest.console.history-interval'], capacity: HISTORY_SAMPLES, sample: () => metrics.sample() }) : undefined);
  const detector = (started.detector = createDetector({ config: opts.config, store, sync, clock, logger: logger.child({ component: 'detector' }), audit }));
  const api = (started.api = await buildApi({
    store,
    sync,
    clock,
    logger: logger.child({ component: 'api' }),
    audit,
    enabled: v['cluster.resource-blocklist.enabled'],
    bodyLimit: v['rest.server.max-content-length'],
    console: v['rest.console.enabled'],
    consoleData: consoleData(sync, clock, history),
    metrics,
    ...(security.tokens ? { auth: security.tokens } : {}),
    ...(security.tls ? { tls: security.tls } : {}),
    rateLimit: security.rateLimit,
    maxConcurrentListings: v['rest.listing.max-concurrent'],
    listingRetentionMs: v['rest.listing.cache-retention'],
    storeUnreachableLimitMs: v['cluster.resource-blocklist.store.unreachable-limit'],
    syncStallLimitMs: v['cluster.resource-blocklist.sync.stall-limit'],
    expire: () => sync.expireNow(),
    config: effectiveConfig(opts.config),
    ...(detector ? { detector } : {}),
    discovery: discoveryOf(started.published, sync, opts.config, clock, zkLogin?.login),
  }));
  await api.listen({ host: v['rest.bind-address'], port: v['rest.port'] });
  if (security.tokens) started.tokenWatch = watchTokenFile(security.tokens, { logger: logger.child({ component: 'security' }), audit });
  await sync.start();
  detector?.start();
  await started.published.start(api.server.address() as AddressInfo, security.tls !== undefined, clock.now(), sync.view());
  history?.start();
  return { sync, api };
}

/** Stops what was started, the published address first (nobody should be sent to a sidecar that is going), the ZooKeeper session and its login last. */
async function stopStarted(s: Started, failed: (what: string, e: Error) => void): Promise<void> {
  const step = async (what: string, stop: () => Promise<unknown> | undefined): Promise<void> => {
    try {
      await stop();
    } catch (e) {
      failed(what, e instanceof Error ? e : new Error(String(e)));
    }
  };
  await step('address', () => s.published.stop());
  s.history?.close();
  s.tokenWatch?.close();
  await step('detector stop', () => s.detector?.stop());
  await step('sync stop', () => s.sync?.stop());
  await step('api close', () => s.api?.close());
  if (s.ownsStore) await step('store close', () => s.store.close());
  await step('zookeeper close', () => s.zookeeper?.close());
  await step('kerberos logout', () => s.zkLogin?.login.stop());
}

/** The console's chart and links: the history ring, and what YARN reports for links (docs/console.md). */
function consoleData(sync: SyncHandle, clock: Clock, history: History | undefined): ConsoleData {
  const yarn = sync.yarn;
  const links = new LinkReader(
    {
      rmAddress: () => sync.rmWebAddress?.(),
      applicationId: () => sync.view().applicationId,
      ...(yarn ? { application: (id: string) => yarn.rm.application(id), containers: () => yarn.proxy.containers() } : {}),
    },
    clock,
  );
  return { ...(history ? { history } : {}), links: () => links.links() };
}

/**
 * GET /discovery/prometheus: the published sidecars, a crashed one kept while the RM runs its
 * attempt. The RM is the engine's, or for an API-only sidecar (the admin host docs/deploy.md
 * suggests for Prometheus) the one `yarn.resourcemanager.webapp.address` names, if any: without
 * an RM to ask, the published list as it is.
 */
function discoveryOf(published: PublishedAddress, sync: SyncHandle, config: LoadedConfig, clock: Clock, login: KerberosLogin | undefined): DiscoveryPort {
  const v = config.values;
  const addresses = v['yarn.resourcemanager.webapp.address'].trim();
  // A secured RM needs a login, which an API-only sidecar makes only for ZooKeeper's SASL.
  const secured = kerberosSettings(v).kind === 'keytab';
  const rm: ResourceManagerReader | undefined =
    sync.yarn?.rm ??
    (addresses && (!secured || login)
      ? new ResourceManagerClient({
          addresses,
          timeoutMs: v['cluster.resource-blocklist.yarn.request-timeout'],
          clock,
          ...(v['yarn.resourcemanager.webapp.user'] ? { user: v['yarn.resourcemanager.webapp.user'] } : {}),
          ...(login ? { auth: login } : {}),
          ...(v['cluster.resource-blocklist.yarn.ssl.ca-file'] ? { httpsAgent: createYarnHttpsAgent(v['cluster.resource-blocklist.yarn.ssl.ca-file']) } : {}),
        })
      : undefined);
  if (!rm) return published;
  return new RunningTargets(published, applicationStates(rm), () => clock.now());
}
