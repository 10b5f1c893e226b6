/**
 * Unmodified Flink on a real YARN, with the sidecar where users run it, for test/real/ (and the
 * benches that need it): am-proxy's FlinkYarnRig (built by scripts/build-am-proxy.sh) runs a
 * MiniYARNCluster whose three NodeManagers (nm1/nm2/nm3.blocklist.test on 127.0.0.2-4) run the
 * blocklist interceptor, and deploys a Flink session by Flink's own YarnClusterDescriptor with the
 * keys of docs/deploy.md (`deployKeys`: deploy/flink/config.yaml, shipping the tarball `npm run dist`
 * builds, with a ZooKeeper store), so the sidecar starts inside Flink's AM container. A
 * never-ending streaming job runs there, one TaskManager per NodeManager. One rig per Flink line,
 * started on first use and shared by every file of the run; it stops when the test process exits.
 *
 * What YARN holds is read inside the RM (`flinkApp`: the scheduler's blacklist for Flink's current
 * attempt, its containers), what Flink holds from its REST API (`flinkJob`), never from the sidecar.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import YAML from 'yaml';
import { silentLogger } from '../../src/core/logger';
import { ZkSession } from '../../src/store/zookeeper/session';
import { SidecarRecord, SidecarRegistry, sidecarOf } from '../../src/store/zookeeper/sidecar-registry';
import { zookeeperSessionOptions } from '../../src/store/zookeeper/zookeeper-store';
import { startJavaLauncherWithStop } from './java-launcher';
import { repoRoot } from './paths';
import { until } from './real-yarn';
import { releaseTarball } from './release';
import { ZkCluster, zookeeperUnavailableReason } from './zookeeper';

const isCI = process.env.CI === 'true';
/** The rig built against each Flink line (one source, two Maven modules). */
export const FLINK_YARN_RIGS = { '2.3': 'flink-yarn-rig', '1.20': 'flink-yarn-rig-1.20' } as const;
export type FlinkYarnLine = keyof typeof FLINK_YARN_RIGS;
const target = (line: FlinkYarnLine): string => path.join(repoRoot, 'am-proxy', FLINK_YARN_RIGS[line], 'target');

export interface FlinkYarnRig {
  line: FlinkYarnLine;
  rmWebapp: string;
  control: string;
  nodes: string[];
  applicationId: string;
  streamJobId: string;
  flinkVersion: string;
  hadoopVersion: string;
  /** The YARN cluster up, Flink's session deployed (its REST answering), the job with a TaskManager on every node: ms from the JVM's start. */
  yarnMs: number;
  deployMs: number;
  startupMs: number;
  /** The store the attempts share, as the CLI's --store names it (a ZooKeeper of the rig's own). */
  store: string;
  /** That ZooKeeper's quorum and this rig's root in it (where the sidecars publish their addresses). */
  zkQuorum: string;
  zkRoot: string;
  /** The release tarball Flink ships (its .sha256 checked), its size, and how long `npm run dist` took to hand it over (~0 when up to date). */
  tarball: string;
  tarballBytes: number;
  distMs: number;
  amrmProxyPort: number;
  workDir: string;
  log: string;
  /** Ends the rig's JVM (and with it every container) and waits for its exit. */
  stop(): Promise<void>;
}

export interface FlinkContainer {
  containerId: string;
  host: string;
  /** The NodeManager launched it and its process is alive. */
  running: boolean;
}

/** What the RM holds for Flink's application (read inside the RM by the rig). */
export interface FlinkApp {
  applicationId: string;
  state: string;
  appAttemptId: string | null;
  attemptState: string | null;
  schedulerBlacklist: string[];
  amContainer: FlinkContainer | null;
  taskManagers: FlinkContainer[];
  /** Flink's REST endpoint as registered with YARN, by loopback address. */
  flinkRest: string | null;
}

export function flinkYarnUnavailableReason(line: FlinkYarnLine): string | undefined {
  const j = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (j.error || j.status !== 0) return 'no java on PATH (scripts/ensure-java.sh installs one)';
  for (const f of ['runtime-classpath.txt', 'classes']) {
    if (!fs.existsSync(path.join(target(line), f))) return `am-proxy/${FLINK_YARN_RIGS[line]}/target/${f} is missing (npm test builds it: scripts/build-am-proxy.sh)`;
  }
  if (!fs.existsSync(FLINK_DEPLOY_KEYS_FILE)) return `${FLINK_DEPLOY_KEYS_FILE} is missing`;
  return zookeeperUnavailableReason();
}

export function requireFlinkYarn(ctx: Mocha.Context, line: FlinkYarnLine): void {
  const why = flinkYarnUnavailableReason(line);
  if (!why) return;
  if (isCI) throw new Error(`Flink-on-YARN suites cannot run in CI: ${why}`);
  console.log(`      (skipped: ${why})`);
  ctx.skip();
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A port free now and below Linux's ephemeral range (32768-60999): it is bound seconds later by
 * another process (the NodeManagers, the sidecar in the AM), and a port picked from the ephemeral
 * range was meanwhile handed to the rig's own listener on port 0 (the sidecar then met EADDRINUSE).
 */
async function fixedPort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port in 20000-31999');
}

export interface DeployPlace {
  /** The NodeManagers' yarn.nodemanager.amrmproxy.address port. */
  amrmProxyPort: number;
  /** The release tarball (npm run dist). */
  tarball: string;
  /** The cluster's ZooKeeper quorum and this rig's root in it. */
  zkQuorum: string;
  zkRoot: string;
}

/** The Flink keys a user adds (docs/deploy.md step 3): deploy/flink/config.yaml, as shipped. */
export const FLINK_DEPLOY_KEYS_FILE = path.join(repoRoot, 'deploy', 'flink', 'config.yaml');

/**
 * deploy/flink/config.yaml with its <…> placeholders filled in for this cluster (the tarball's path,
 * the AMRMProxy's port, the ZooKeeper quorum), then the rig's own few keys on top.
 */
export function deployKeys(p: DeployPlace): Record<string, string> {
  const doc = YAML.parse(fs.readFileSync(FLINK_DEPLOY_KEYS_FILE, 'utf8')) as Record<string, unknown>;
  const keys: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc)) {
    let value = String(v);
    if (k === 'yarn.ship-archives') {
      if (path.basename(value) !== path.basename(p.tarball)) throw new Error(`${FLINK_DEPLOY_KEYS_FILE}: ${k} names ${path.basename(value)}, npm run dist built ${path.basename(p.tarball)}`);
      value = p.tarball;
    }
    value = value.replace('<8049>', String(p.amrmProxyPort)).replace(/<zk1:2181[^>]*>/, p.zkQuorum);
    if (/<[^>]+>/.test(value)) throw new Error(`${FLINK_DEPLOY_KEYS_FILE}: the rig fills no placeholder in ${k}: ${value}`);
    keys[k] = value;
  }
  const env = 'containerized.master.env.';
  return {
    ...keys,
    // The rig's own (sidecar keys as docs/deploy.md step 3 says to give them): one root per rig in
    // the shared ZooKeeper, two of the three nodes blocked at once (the default 0.33 allows one
    // here), and a full resync every 2 s (default 5 min) so a check can wait for one. The sidecar's
    // port is the profile's (any free one); the test finds it where the sidecar publishes it.
    [`${env}BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_ROOT`]: p.zkRoot,
    [`${env}BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_MAX_BLOCKED_FRACTION`]: '0.7',
    [`${env}BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_FULL_RESYNC_INTERVAL`]: '2 s',
  };
}

const started = new Map<FlinkYarnLine, Promise<FlinkYarnRig>>();
let zookeeper: Promise<ZkCluster> | undefined;

/** One standalone ZooKeeper for the rigs of a run (the cluster's store; each rig has its own root). */
function sharedZookeeper(): Promise<ZkCluster> {
  zookeeper ??= ZkCluster.start(1);
  return zookeeper;
}

/** The rig of one Flink line, started on first use and shared by every file. */
export function flinkYarn(line: FlinkYarnLine): Promise<FlinkYarnRig> {
  let p = started.get(line);
  if (!p) {
    p = launch(line);
    started.set(line, p);
  }
  return p;
}

/**
 * Stops the line's rig now (its JVM ends its containers with it) so the next line's does not run
 * beside it on 2 cores; a later flinkYarn(line) starts a fresh one.
 */
export async function stopFlinkYarn(line: FlinkYarnLine): Promise<void> {
  const p = started.get(line);
  started.delete(line);
  const rig = await p?.catch(() => undefined);
  if (rig) await rig.stop();
}

async function launch(line: FlinkYarnLine): Promise<FlinkYarnRig> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `blocklist-flink-yarn-${line}-`));
  const hosts = path.join(workDir, 'hosts');
  fs.writeFileSync(
    hosts,
    ['127.0.0.1 localhost', `127.0.0.1 ${os.hostname()}`, '127.0.0.2 nm1.blocklist.test', '127.0.0.3 nm2.blocklist.test', '127.0.0.4 nm3.blocklist.test', ''].join('\n'),
  );
  const work = path.join(workDir, 'yarn');
  fs.mkdirSync(work);
  const t0 = Date.now();
  const tarball = releaseTarball();
  const distMs = Date.now() - t0;
  const tarballBytes = checkedTarball(tarball);
  const zk = await sharedZookeeper();
  const place: DeployPlace = {
    amrmProxyPort: await fixedPort(),
    tarball,
    zkQuorum: zk.connectString(),
    zkRoot: `/flink-yarn-${line.replace('.', '-')}`,
  };
  const t = target(line);
  const cp = [path.join(t, 'classes'), fs.readFileSync(path.join(t, 'runtime-classpath.txt'), 'utf8').trim()].join(path.delimiter);
  const log = path.join(workDir, 'rig.log');
  const keys = Object.entries({ ...deployKeys(place), ...nodeHostsKeys(workDir, hosts) }).map(([k, v]) => `${k}=${v}`);
  const { ready, stop } = await startJavaLauncherWithStop<Omit<FlinkYarnRig, 'line' | 'store' | 'zkQuorum' | 'zkRoot' | 'tarball' | 'tarballBytes' | 'distMs' | 'amrmProxyPort' | 'workDir' | 'log' | 'stop'>>({
    what: `the Flink ${line} on YARN rig`,
    args: ['-Xmx768m', '-XX:TieredStopAtLevel=1', `-Djdk.net.hosts.file=${hosts}`, `-Dtest.build.data=${path.join(workDir, 'test-data')}`, `-Djava.io.tmpdir=${workDir}`, '-cp', cp, 'io.github.flinkyarnblocklist.flinkyarn.FlinkYarnRig', work, hosts, String(place.amrmProxyPort), ...keys],
    dir: workDir,
    log,
    timeoutMs: 300_000,
    // The cluster's client configuration, as a NodeManager host has it: the NodeManagers hand
    // HADOOP_CONF_DIR on to their containers (yarn.nodemanager.env-whitelist), where the sidecar reads the RM's address.
    env: { ...process.env, HADOOP_CONF_DIR: path.join(work, 'hadoop-conf') },
  });
  return {
    ...ready, line, store: `zookeeper:${place.zkQuorum}${place.zkRoot}`, zkQuorum: place.zkQuorum, zkRoot: place.zkRoot, tarball, tarballBytes, distMs,
    amrmProxyPort: place.amrmProxyPort, workDir, log, stop,
  };
}

/**
 * The rig's hosts file for the sidecar's Node.js, as -Djdk.net.hosts.file is for the rig's JVMs: the
 * three NodeManagers' names (nm1-3.blocklist.test) exist only there, and the sidecar reads Flink's
 * REST API at the address the RM reports, `<NM host>:<port>`. On a cluster DNS names the hosts; here
 * the AM container's NODE_OPTIONS preloads a resolver for those names (nothing else changes: the
 * sidecar's own flags stay launch-in-am.sh's).
 */
function nodeHostsKeys(workDir: string, hostsFile: string): Record<string, string> {
  const shim = path.join(workDir, 'node-hosts.cjs');
  fs.writeFileSync(shim, NODE_HOSTS_SHIM);
  const env = 'containerized.master.env.';
  return { [`${env}NODE_OPTIONS`]: `--require=${shim}`, [`${env}BLOCKLIST_RIG_HOSTS_FILE`]: hostsFile };
}

const NODE_HOSTS_SHIM = `'use strict';
// Written by test/support/flink-yarn.ts: dns.lookup answers the rig's host names from its hosts file.
const fs = require('node:fs');
const dns = require('node:dns');
const table = new Map();
for (const line of fs.readFileSync(process.env.BLOCKLIST_RIG_HOSTS_FILE || '/dev/null', 'utf8').split('\\n')) {
  const [ip, ...names] = line.trim().split(/\\s+/);
  if (ip && !ip.startsWith('#')) for (const n of names) table.set(n.toLowerCase(), ip);
}
const original = dns.lookup;
dns.lookup = function lookup(hostname, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  const opts = typeof options === 'object' && options !== null ? options : {};
  const ip = typeof hostname === 'string' ? table.get(hostname.toLowerCase()) : undefined;
  if (ip === undefined || typeof cb !== 'function') return original.apply(this, arguments);
  process.nextTick(() => (opts.all ? cb(null, [{ address: ip, family: 4 }]) : cb(null, ip, 4)));
  return {};
};
`;

/** docs/deploy.md step 1's `sha256sum -c` of the tarball beside its .sha256; its size in bytes. */
function checkedTarball(tarball: string): number {
  const r = spawnSync('sha256sum', ['-c', `${path.basename(tarball)}.sha256`], { cwd: path.dirname(tarball), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sha256sum -c ${tarball}.sha256: ${r.stdout}${r.stderr}`);
  return fs.statSync(tarball).size;
}

/**
 * The sidecar of Flink's application where it publishes itself (docs/deploy.md, "Finding a job's
 * sidecar"): the ephemeral znode <root>/sidecars/<appattempt id>, read as `blocklist --app` reads it.
 * With `attempt`, waits for that attempt's sidecar (the znode of the one before lasts until its
 * ZooKeeper session expires).
 */
export async function publishedSidecar(rig: FlinkYarnRig, attempt?: string, timeoutMs = 60_000): Promise<SidecarRecord> {
  const session = new ZkSession(zookeeperSessionOptions({ quorum: rig.zkQuorum, sessionTimeoutMs: 10_000, operationTimeoutMs: 5_000, connectTimeoutMs: 5_000 }, silentLogger));
  const registry = new SidecarRegistry({ session, basePath: rig.zkRoot, operationTimeoutMs: 5_000 });
  try {
    return await until(`the sidecar of ${attempt ?? rig.applicationId} published in ZooKeeper`, timeoutMs, async () => {
      const r = sidecarOf(await registry.list(), rig.applicationId);
      return r && (attempt === undefined || r.attempt === attempt) ? r : undefined;
    });
  } finally {
    await session.close();
  }
}

async function control<T>(rig: FlinkYarnRig, method: 'GET' | 'POST', p: string): Promise<T> {
  const res = await fetch(rig.control + p, { method });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`rig control ${method} ${p}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** What the RM holds for the plain AM beside Flink (not opted in), and the hand-offs the interceptor wrote it. */
export interface NeighbourApp {
  applicationId: string | null;
  state?: string;
  attemptState?: string | null;
  schedulerBlacklist?: string[];
  handoffFiles?: string[];
}

/** Starts (once) a plain AM on the same NodeManagers with `ownHost` on its own blacklist. */
export function startNeighbour(rig: FlinkYarnRig, ownHost: string): Promise<NeighbourApp> {
  return control(rig, 'POST', `/neighbour?own=${encodeURIComponent(ownHost)}`);
}

export function neighbourApp(rig: FlinkYarnRig): Promise<NeighbourApp> {
  return control(rig, 'GET', '/neighbour');
}

/** Submits the batch job whose hanging attempt makes Flink's speculative execution block its node. */
export function submitSlowBatch(rig: FlinkYarnRig): Promise<{ jobId: string }> {
  return control(rig, 'POST', '/flink/jobs/slow-batch');
}

export function flinkApp(rig: FlinkYarnRig): Promise<FlinkApp> {
  return control<FlinkApp>(rig, 'GET', '/flink');
}

/** SIGKILLs one of Flink's containers (a TaskManager or the JobManager), as `kill -9` would. */
export function killContainer(rig: FlinkYarnRig, containerId: string): Promise<{ killed: boolean; atMs: number }> {
  return control(rig, 'POST', `/flink/kill?container=${encodeURIComponent(containerId)}`);
}

/** Polls the RM's view until `ok` holds, or fails with the last one. */
export async function waitForFlinkApp(rig: FlinkYarnRig, what: string, ok: (a: FlinkApp) => boolean, timeoutMs = 60_000): Promise<FlinkApp> {
  let last: FlinkApp | undefined;
  try {
    return await until(what, timeoutMs, async () => {
      last = await flinkApp(rig);
      return ok(last) ? last : undefined;
    });
  } catch (e) {
    throw new Error(`${(e as Error).message}; last: ${JSON.stringify(last)}`);
  }
}

// ---- Flink's REST API ----

export interface FlinkSubtask {
  vertex: string;
  subtask: number;
  status: string;
  /** The host the subtask runs on, as Flink reports it (its TaskManager's host name). */
  host: string;
  taskManagerId: string;
}

export interface FlinkJob {
  state: string;
  subtasks: FlinkSubtask[];
}

async function flinkGet<T>(rest: string, p: string): Promise<T> {
  const res = await fetch(rest + p, { headers: { accept: 'application/json' } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`Flink GET ${p}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** The job's state and where each subtask runs (Flink 1.20 and 2.x answer the same fields). */
export async function flinkJob(rest: string, jobId: string): Promise<FlinkJob> {
  const job = await flinkGet<{ state: string; vertices: { id: string; name: string }[] }>(rest, `/jobs/${jobId}`);
  const subtasks: FlinkSubtask[] = [];
  for (const v of job.vertices) {
    const d = await flinkGet<{ subtasks: { subtask: number; status: string; host?: string; endpoint?: string; 'taskmanager-id': string }[] }>(rest, `/jobs/${jobId}/vertices/${v.id}`);
    for (const s of d.subtasks) {
      const where = s.endpoint ?? s.host ?? '';
      subtasks.push({ vertex: v.name, subtask: s.subtask, status: s.status, host: where.replace(/:\d+$/, ''), taskManagerId: s['taskmanager-id'] });
    }
  }
  return { state: job.state, subtasks };
}

/** Every subtask RUNNING (a job RUNNING can still be deploying some). */
export const allRunning = (j: FlinkJob): boolean => j.state === 'RUNNING' && j.subtasks.length > 0 && j.subtasks.every((s) => s.status === 'RUNNING');

/** Polls Flink's REST API (at the address YARN names now) until `ok` holds for the job. */
export async function waitForFlinkJob(rig: FlinkYarnRig, jobId: string, what: string, ok: (j: FlinkJob) => boolean, timeoutMs = 90_000): Promise<FlinkJob> {
  let last: FlinkJob | undefined;
  try {
    return await until(what, timeoutMs, async () => {
      const app = await flinkApp(rig);
      if (!app.flinkRest) return undefined;
      last = await flinkJob(app.flinkRest, jobId);
      return ok(last) ? last : undefined;
    });
  } catch (e) {
    throw new Error(`${(e as Error).message}; last job: ${JSON.stringify(last)}`);
  }
}

// ---- What Flink's JobManager and the sidecar wrote in the AM container ----

/** The AM container's log folder on its NodeManager (Flink's jobmanager.log, the sidecar's log and audit trail). */
export function amLogDir(rig: FlinkYarnRig, am: FlinkContainer): string {
  return path.join(rig.workDir, 'yarn', `nm${rig.nodes.indexOf(am.host) + 1}`, 'log', rig.applicationId, am.containerId);
}

/** The sidecar's audit lines (blocklist-audit.jsonl beside Flink's logs). */
export function amAudit(rig: FlinkYarnRig, am: FlinkContainer): { op?: string; id?: string; outcome?: string; detail?: string; at?: string }[] {
  const f = path.join(amLogDir(rig, am), 'blocklist-audit.jsonl');
  if (!fs.existsSync(f)) return [];
  return fs.readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { op?: string });
}

/** When Flink's JobManager saw each step of a recovery from a lost TaskManager container (wall ms). */
export interface RecoverySteps {
  /** YARN told Flink the container ended ("Worker … is terminated"). */
  terminated?: number;
  /** YARN handed Flink the replacement container(s) ("Received N containers"). */
  received?: number;
  /** The replacement TaskManager registered with Flink's ResourceManager. */
  registered?: number;
}

/** Reads jobmanager.log (the rig's pattern `HH:mm:ss,SSS LEVEL Logger: message`) for the recovery that began at `sinceMs`. */
export function recoverySteps(rig: FlinkYarnRig, am: FlinkContainer, sinceMs: number): RecoverySteps {
  const f = path.join(amLogDir(rig, am), 'jobmanager.log');
  const out: RecoverySteps = {};
  if (!fs.existsSync(f)) return out;
  for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
    const m = /^(\d\d):(\d\d):(\d\d),(\d{3}) /.exec(line);
    if (!m) continue;
    const d = new Date(sinceMs);
    d.setHours(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]));
    const at = d.getTime();
    if (at < sinceMs - 1000) continue;
    if (out.terminated === undefined && /Worker container_\S+ is terminated/.test(line)) out.terminated = at;
    else if (out.terminated !== undefined && out.received === undefined && /Received \d+ containers\./.test(line)) out.received = at;
    else if (out.received !== undefined && out.registered === undefined && /Registering TaskManager with ResourceID/.test(line)) out.registered = at;
  }
  return out;
}
