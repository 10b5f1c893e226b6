/**
 * The sync engine in-process over the simulator's cluster (src/sim/in-process.ts: the one YARN
 * model of the project, served through the engine's own ports), with a FakeClock driving every
 * timer the engine arms (poll, deadlines, retries).
 */
import { Writable } from 'node:stream';
import winston from 'winston';
import { FakeClock } from '../../src/core/clock';
import { Logger, silentLogger } from '../../src/core/logger';
import { BlockedItem } from '../../src/model/item';
import { SyncEngine, SyncSettings } from '../../src/sync/engine';
import { createMetrics, Metrics } from '../../src/metrics/metrics';
import { SimCluster } from '../../src/sim/cluster';
import { InProcessYarn, inProcessFlink, inProcessYarn } from '../../src/sim/in-process';
import { FlinkVersion, SimFlink } from '../../src/sim/flink-jobs';
import { FlinkRuntimeOptions, SimFlinkRuntime } from '../../src/sim/flink-runtime';
import { AuditSink } from '../../src/model/audit';
import { ItemSyncStatus, SidecarStatus, itemSyncStatus, sidecarStatus } from '../../src/api/status-presenter';
import { AmrmProxy } from '../../src/yarn/types';
import { FlakyStore, TEST_SETTINGS } from './fakes';

export const T0 = 1_652_313_600_000;

/** The proxy port with every write recorded (what a test asserts was sent, in order). */
export interface RecordedProxy extends AmrmProxy {
  readonly updates: { additions: string[]; removals: string[] }[];
  readonly releaseCalls: string[][];
}

export function recording(proxy: AmrmProxy): RecordedProxy {
  const updates: { additions: string[]; removals: string[] }[] = [];
  const releaseCalls: string[][] = [];
  return {
    updates,
    releaseCalls,
    attempt: () => proxy.attempt(),
    blacklist: () => proxy.blacklist(),
    // The conditional read and the versions of a push pass through, so the engine's tests run the
    // path a versioned proxy takes (an unversioned one has no blacklistSince, as before).
    ...(proxy.blacklistSince ? { blacklistSince: (known) => proxy.blacklistSince!(known) } : {}),
    containers: () => proxy.containers(),
    completedContainers: (after) => proxy.completedContainers(after),
    async updateBlacklist(change, owner) {
      const write = await proxy.updateBlacklist(change, owner);
      updates.push({ additions: [...change.additions], removals: [...change.removals] });
      return write;
    },
    async release(ids) {
      releaseCalls.push([...ids]);
      return proxy.release(ids);
    },
  };
}

export interface Rig {
  clock: FakeClock;
  cluster: SimCluster;
  /** The simulated JobManager (with o.flink), and a switch that makes it unreachable. */
  flink?: { sim: SimFlink; runtime: SimFlinkRuntime; down: boolean };
  yarn: InProcessYarn;
  proxy: RecordedProxy;
  store: FlakyStore;
  engine: SyncEngine;
  metrics: Metrics;
  /** The i-th node's host (1-based). */
  host(i: number): string;
  /** What the AM's client holds (the proxy's GET /blacklist). */
  blacklist(): string[];
  /** Live task managers on a host, sorted. */
  tmsOn(host: string): string[];
  item(id: string): ItemSyncStatus | undefined;
  status(): SidecarStatus;
  /** Moves the fake time and waits until every pass it caused has finished. */
  step(ms: number): Promise<void>;
  /** Writes an item through the store and kicks, as the REST API does. */
  block(item: BlockedItem): Promise<void>;
  unblock(id: string): Promise<void>;
  restart(): Promise<SyncEngine>;
}

export interface RigOptions {
  settings?: Partial<SyncSettings>;
  nodes?: number;
  start?: boolean;
  store?: FlakyStore;
  logger?: Logger;
  /** Runs on the cluster before the engine starts. */
  before?: (cluster: SimCluster) => void;
  /** Stands another proxy in front of the simulator's (one that lists more, or names less). */
  proxy?: (simulated: AmrmProxy, cluster: SimCluster) => AmrmProxy;
  /** A simulated Flink the engine reads (its runtime's options; `version`, `canPost` of the client). */
  flink?: FlinkRuntimeOptions & { version?: FlinkVersion; canPost?: boolean };
  audit?: AuditSink;
}

const rigs: Rig[] = [];

function withFlink(cluster: SimCluster, clock: FakeClock, o: FlinkRuntimeOptions & { version?: FlinkVersion }): { sim: SimFlink; runtime: SimFlinkRuntime; down: boolean } {
  const { version, ...runtime } = o;
  const sim = new SimFlink(cluster, clock, version ?? '2.0');
  sim.runtime = new SimFlinkRuntime(cluster, runtime);
  return { sim, runtime: sim.runtime, down: false };
}

export async function rig(o: RigOptions = {}): Promise<Rig> {
  const clock = new FakeClock(T0);
  const cluster = new SimCluster({ nodes: o.nodes ?? 10, containers: 0, slotsPerNode: 32, seed: 3, clock });
  o.before?.(cluster);
  const yarn = inProcessYarn(cluster);
  const proxy = recording(o.proxy ? o.proxy(yarn.proxy, cluster) : yarn.proxy);
  const store = o.store ?? new FlakyStore();
  const metrics = createMetrics();
  const settings = { ...TEST_SETTINGS, ...o.settings };
  const flink = o.flink ? withFlink(cluster, clock, o.flink) : undefined;
  const connect = flink ? () => inProcessFlink(flink.sim, { canPost: o.flink?.canPost ?? true, down: () => flink.down }) : undefined;
  const mk = (m: Metrics, logger: Logger) =>
    new SyncEngine({ store, rm: yarn.rm, proxy, clock, logger, settings, metrics: m, applicationId: cluster.applicationId, ...(connect ? { flink: connect } : {}), ...(o.audit ? { audit: o.audit } : {}) });
  const r: Rig = {
    clock,
    cluster,
    ...(flink ? { flink } : {}),
    yarn,
    proxy,
    store,
    metrics,
    engine: mk(metrics, o.logger ?? silentLogger),
    host: (i) => cluster.nodes[i - 1].host,
    blacklist: () => cluster.clientBlacklistView(),
    tmsOn: (host) => [...(cluster.node(host)?.containers ?? [])].filter((id) => !cluster.container(id)?.isAm).sort(),
    item: (id) => itemSyncStatus(r.engine.view(), id, clock.now()),
    status: () => sidecarStatus(r.engine.view(), clock.now()),
    async step(ms) {
      clock.advance(ms);
      await r.engine.idle();
    },
    async block(item) {
      await store.put(item);
      r.engine.kick('test block');
      await r.engine.idle();
    },
    async unblock(id) {
      await store.remove(id);
      r.engine.kick('test unblock');
      await r.engine.idle();
    },
    async restart() {
      await r.engine.stop();
      r.engine = mk(createMetrics(), silentLogger);
      await r.engine.start();
      return r.engine;
    },
  };
  rigs.push(r);
  if (o.start !== false) await r.engine.start();
  return r;
}

export async function closeRigs(): Promise<void> {
  for (const r of rigs.splice(0)) {
    await r.engine.stop();
    await r.store.close();
  }
}

/** A logger whose messages land in `lines`. */
export function captureLogger(lines: string[]): Logger {
  const stream = new Writable({
    objectMode: true,
    write(info: { level: string; message: string }, _enc, cb) {
      lines.push(`${info.level} ${info.message}`);
      cb();
    },
  });
  return winston.createLogger({ level: 'debug', transports: [new winston.transports.Stream({ stream })] });
}
