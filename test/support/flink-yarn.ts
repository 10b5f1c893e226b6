/**
 * Unmodified Flink on a real YARN, with the sidecar where users run it, for test/real/ (and the
 * benches that need it): am-proxy's FlinkYarnRig (built by scripts/build-am-proxy.sh) runs a
 * MiniYARNCluster whose three NodeManagers (nm1/nm2/nm3.blocklist.test on 127.0.0.2-4) run the
 * blocklist interceptor, and deploys a Flink session by Flink's own YarnClusterDescriptor with the
 * keys of docs/deploy.md (`deployKeys`), so the sidecar starts inside Flink's AM container. A
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
import { startJavaLauncherWithStop } from './java-launcher';
import { repoRoot } from './paths';
import { until } from './real-yarn';

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
  /** The sidecar in Flink's AM container (a fixed loopback port: the test must find it). */
  sidecarUrl: string;
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
  if (!fs.existsSync(path.join(repoRoot, 'dist', 'src', 'cli', 'main.js'))) return 'the sidecar is not built (npm run build)';
  return undefined;
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
  /** Where the sidecar is unpacked, as the AM container sees it. */
  blocklistHome: string;
  /** The cluster's HADOOP_CONF_DIR (yarn-site.xml with the RM's addresses). */
  hadoopConfDir: string;
  /** The sidecar's REST port in the AM, its store file and audit file (durable: shared by the attempts). */
  sidecarPort: number;
  storeFile: string;
  auditFile: string;
}

/**
 * The keys of Flink's config.yaml that put the sidecar in Flink's AM container (docs/deploy.md's
 * Flink side): Flink's AM reaches its own NodeManager's AMRMProxy; Flink's start command is
 * wrapped so the JobManager's container starts the sidecar first; the wrapper is shipped with the
 * job; the sidecar's settings travel as the AM container's environment.
 */
export function deployKeys(p: DeployPlace): Record<string, string> {
  const env = 'containerized.master.env.';
  return {
    'flink.yarn.resourcemanager.scheduler.address': `\${env.NM_HOST}:${p.amrmProxyPort}`,
    'yarn.container-start-command-template': 'bash flink-am-wrapper.sh %java% %jvmmem% %jvmopts% %logging% %class% %args% %redirects%',
    'yarn.ship-files': path.join(p.blocklistHome, 'scripts', 'flink-am-wrapper.sh'),
    // This application opts in to the interceptor (decisions.md, intercept: the AM container's environment).
    [`${env}BLOCKLIST_AMRM_PROXY`]: 'true',
    [`${env}BLOCKLIST_HOME`]: p.blocklistHome,
    [`${env}HADOOP_CONF_DIR`]: p.hadoopConfDir,
    [`${env}BLOCKLIST_REST_PORT`]: String(p.sidecarPort),
    // The AM profile stores in ZooKeeper; the rig has none: a SQLite file shared by the attempts.
    [`${env}BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_TYPE`]: 'sqlite',
    [`${env}BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_SQLITE_PATH`]: p.storeFile,
    [`${env}BLOCKLIST_LOG_AUDIT_FILE`]: p.auditFile,
    // The checks hold two of the three nodes blocked at once; the default 0.33 allows one here.
    // A full resync every 2 s (default 5 min), so a check can wait for one.
    [`${env}BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_FULL_RESYNC_INTERVAL`]: '2 s',
    [`${env}BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_MAX_BLOCKED_FRACTION`]: '0.7',
  };
}

const started = new Map<FlinkYarnLine, Promise<FlinkYarnRig>>();

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
  const durable = path.join(workDir, 'sidecar');
  fs.mkdirSync(work);
  fs.mkdirSync(durable);
  const place: DeployPlace = {
    amrmProxyPort: await fixedPort(),
    blocklistHome: repoRoot,
    hadoopConfDir: path.join(work, 'hadoop-conf'),
    sidecarPort: await fixedPort(),
    storeFile: path.join(durable, 'blocklist.db'),
    auditFile: path.join(durable, 'audit.jsonl'),
  };
  const t = target(line);
  const cp = [path.join(t, 'classes'), fs.readFileSync(path.join(t, 'runtime-classpath.txt'), 'utf8').trim()].join(path.delimiter);
  const log = path.join(workDir, 'rig.log');
  const keys = Object.entries(deployKeys(place)).map(([k, v]) => `${k}=${v}`);
  const { ready, stop } = await startJavaLauncherWithStop<Omit<FlinkYarnRig, 'line' | 'sidecarUrl' | 'amrmProxyPort' | 'workDir' | 'log' | 'stop'>>({
    what: `the Flink ${line} on YARN rig`,
    args: ['-Xmx768m', '-XX:TieredStopAtLevel=1', `-Djdk.net.hosts.file=${hosts}`, `-Dtest.build.data=${path.join(workDir, 'test-data')}`, `-Djava.io.tmpdir=${workDir}`, '-cp', cp, 'io.github.flinkyarnblocklist.flinkyarn.FlinkYarnRig', work, hosts, String(place.amrmProxyPort), ...keys],
    dir: workDir,
    log,
    timeoutMs: 300_000,
  });
  return { ...ready, line, sidecarUrl: `http://127.0.0.1:${place.sidecarPort}`, amrmProxyPort: place.amrmProxyPort, workDir, log, stop };
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
