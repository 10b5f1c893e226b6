/**
 * A real YARN for the test/real/ suites, started once per mocha run and shared by every file:
 * am-proxy/'s test launcher (YarnLauncher, built by scripts/build-am-proxy.sh) runs a real
 * ResourceManager (MiniYARNCluster) and three real NodeManagers named nm1/nm2/nm3.blocklist.test
 * (127.0.0.2-4 through the JVM's hosts file), each with the AMRMProxy and the blocklist interceptor,
 * plus two applications whose AM runs in a real container. It prints one JSON line when everything
 * runs; its control endpoint shows what the RM scheduler holds. The JVM is stopped when the test
 * process exits (its stdin closes; a kill as the fallback).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StartedLauncher, startJavaLauncherWithStop } from './java-launcher';
import { repoRoot } from './paths';
import { http } from './sidecar';

const isCI = process.env.CI === 'true';
const target = (): string => path.join(repoRoot, 'am-proxy', 'interceptor', 'target');

export interface RealYarn {
  rmWebapp: string;
  control: string;
  nodes: string[];
  /** main and other opt in to the interceptor; plain does not; bare's AM runs without it in its pipeline. */
  applications: { main: string; other: string; plain: string; bare: string };
  amOwnHost: string;
  startupMs: number;
  /** VersionInfo of the NodeManagers' Hadoop. */
  hadoopVersion: string;
  /** Where the NodeManagers loaded the interceptor from (the jar, or a classes directory). */
  interceptorCodeSource: string;
  workDir: string;
  log: string;
}

export interface AppState {
  applicationId: string;
  state: string;
  appAttemptId: string | null;
  attemptState: string | null;
  registered: boolean;
  schedulerBlacklist: string[];
  liveWorkers: number;
  /** `running`: the NodeManager launched it and its process is alive (allocated is not yet launched). */
  workers: { containerId: string; host: string; running: boolean }[];
  proxy: { address: string; secretFile: string; applicationId: string; appAttemptId: string; handoffFile: string; nodeHost: string } | null;
}

/**
 * A Hadoop release the launcher runs on: its module's target dir (launchers compiled against that
 * release, a classpath file) and what its JVM needs. 3.5 is the interceptor module's own; the
 * matrix modules (am-proxy/interceptor/matrix/) put the same interceptor jar into 3.3 and 3.4.
 */
export interface HadoopRelease {
  version: string;
  target: string;
  /** Class directories and jars (relative to target) before the classpath file's (the matrix modules list the jar there). */
  classDirs: string[];
  jvm: string[];
}

/** Guice 4 (the web apps of Hadoop 3.3 and 3.4) defines classes by reflection into java.lang. */
const GUICE4_OPENS = ['java.lang', 'java.util', 'java.lang.reflect', 'java.io', 'java.net', 'java.nio', 'sun.nio.ch', 'java.util.concurrent'].flatMap((p) => ['--add-opens', `java.base/${p}=ALL-UNNAMED`]);

const matrixTarget = (line: string): string => path.join(repoRoot, 'am-proxy', 'interceptor', 'matrix', `hadoop-${line}`, 'target');

/** The version am-proxy/pom.xml builds (the parent's; every module inherits it). */
function amProxyVersion(): string {
  const pom = fs.readFileSync(path.join(repoRoot, 'am-proxy', 'pom.xml'), 'utf8');
  const v = /<artifactId>am-proxy-parent<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(pom)?.[1];
  if (!v) throw new Error('am-proxy/pom.xml names no version of am-proxy-parent');
  return v;
}

/** The interceptor's version (what its GET /amrm/v1/attempt calls interceptorVersion). */
export const INTERCEPTOR_VERSION = amProxyVersion();

/** The interceptor jar as it ships (`mvn package` of am-proxy/interceptor): what every release's NodeManagers load. */
export const INTERCEPTOR_JAR = path.join(target(), `blocklist-amrm-interceptor-${INTERCEPTOR_VERSION}.jar`);

export const HADOOP: Readonly<Record<'3.3' | '3.4' | '3.5', HadoopRelease>> = {
  '3.5': { version: '3.5.0', target: target(), classDirs: ['test-classes', path.basename(INTERCEPTOR_JAR)], jvm: [] },
  '3.4': { version: '3.4.3', target: matrixTarget('3.4'), classDirs: ['test-classes'], jvm: GUICE4_OPENS },
  '3.3': { version: '3.3.6', target: matrixTarget('3.3'), classDirs: ['test-classes'], jvm: GUICE4_OPENS },
};

/** The launcher JVM's classpath for this release: its launchers, the interceptor jar, that release's Hadoop. */
export function releaseClasspath(release: HadoopRelease): string {
  const t = release.target;
  return [...release.classDirs.map((d) => path.join(t, d)), fs.readFileSync(path.join(t, 'test-classpath.txt'), 'utf8').trim()].join(path.delimiter);
}

/** Why the real YARN of this release cannot run here, or undefined when it can. */
export function realYarnUnavailableReason(release: HadoopRelease = HADOOP['3.5']): string | undefined {
  const j = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (j.error || j.status !== 0) return 'no java on PATH (scripts/ensure-java.sh installs one)';
  for (const f of ['test-classpath.txt', ...release.classDirs]) {
    if (!fs.existsSync(path.join(release.target, f))) return `${path.relative(repoRoot, path.join(release.target, f))} is missing (npm test builds it: scripts/build-am-proxy.sh)`;
  }
  return undefined;
}

/** For a suite's before(): skip with the reason outside CI; in CI fail instead. */
export function requireRealYarn(ctx: Mocha.Context, release: HadoopRelease = HADOOP['3.5']): void {
  const why = realYarnUnavailableReason(release);
  if (!why) return;
  if (isCI) throw new Error(`real-YARN suites cannot run in CI: ${why}`);
  console.log(`      (skipped: ${why})`);
  ctx.skip();
}

let started: Promise<RealYarn> | undefined;

/** The shared cluster of Hadoop 3.5 (started on first use, ended with the test process). */
export function realYarn(): Promise<RealYarn> {
  started ??= launch(HADOOP['3.5']).then((l) => l.ready);
  return started;
}

/**
 * A cluster of this release for one suite, which ends it (so two clusters never share the 2 cores
 * for long). `conf`: keys set on the cluster's configuration after the launcher's own (the RM's,
 * which its NodeManagers copy), e.g. `yarn.scheduler.include-port-in-node-name`.
 */
export function startRealYarn(release: HadoopRelease, conf: Readonly<Record<string, string>> = {}): Promise<StartedLauncher<RealYarn>> {
  return launch(release, conf);
}

async function launch(release: HadoopRelease, conf: Readonly<Record<string, string>> = {}): Promise<StartedLauncher<RealYarn>> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-real-yarn-'));
  const hosts = path.join(workDir, 'hosts');
  // The JVM resolves names from this file only (jdk.net.hosts.file): the NodeManagers get distinct
  // host names without touching /etc/hosts; the machine's own name must resolve too.
  fs.writeFileSync(
    hosts,
    ['127.0.0.1 localhost', `127.0.0.1 ${os.hostname()}`, '127.0.0.2 nm1.blocklist.test', '127.0.0.3 nm2.blocklist.test', '127.0.0.4 nm3.blocklist.test', ''].join('\n'),
  );
  const cp = releaseClasspath(release);
  const log = path.join(workDir, 'launcher.log');
  const work = path.join(workDir, 'yarn');
  fs.mkdirSync(work);
  const launcher = await startJavaLauncherWithStop<Omit<RealYarn, 'workDir' | 'log'>>({
    what: `the YARN launcher (Hadoop ${release.version})`,
    // test.build.data: MiniYARNCluster's own work dir (default target/test/data under the cwd);
    // java.io.tmpdir: where Jetty unpacks each web app (four dirs in /tmp per run, left behind).
    args: [...release.jvm, '-Xmx768m', '-XX:TieredStopAtLevel=1', `-Djdk.net.hosts.file=${hosts}`, `-Dtest.build.data=${path.join(workDir, 'test-data')}`, `-Djava.io.tmpdir=${workDir}`, '-cp', cp, 'io.github.flinkyarnblocklist.launcher.YarnLauncher', work, hosts, '3', ...Object.entries(conf).map(([k, v]) => `${k}=${v}`)],
    dir: workDir,
    log,
    timeoutMs: 180_000,
  });
  return { ready: { ...launcher.ready, workDir, log }, stop: launcher.stop };
}

export async function control<T>(y: RealYarn, method: 'GET' | 'POST', p: string): Promise<T> {
  const res = await fetch(y.control + p, { method });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`control ${method} ${p}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

export type AppName = keyof RealYarn['applications'];

/** One node as the RM's scheduler sees it for an app's current attempt (SchedulerAppUtils#isPlaceBlacklisted). */
export interface NodePlacement {
  nodeId: string;
  /** SchedulerNode#getNodeName: what a blacklist entry must equal. */
  nodeName: string;
  /** The scheduler skips this node for the attempt: its name or its rack is on the attempt's blacklist. */
  skipped: boolean;
}

export async function placement(y: RealYarn, app: AppName): Promise<NodePlacement[]> {
  return (await control<{ nodes: NodePlacement[] }>(y, 'GET', `/apps/${app}/placement`)).nodes;
}

export function appState(y: RealYarn, app: AppName): Promise<AppState> {
  return control<AppState>(y, 'GET', `/apps/${app}`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` every 150 ms until it answers something other than undefined (its errors are retried), or fails naming the last error. */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await sleep(150);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `; last error: ${String(last)}` : ''}`);
}

/** Polls until `ok` holds for the app's state (what the RM's scheduler holds), or fails with the last state. */
export async function waitForApp(y: RealYarn, app: AppName, what: string, ok: (s: AppState) => boolean, timeoutMs = 30_000): Promise<AppState> {
  const deadline = Date.now() + timeoutMs;
  let last: AppState | undefined;
  while (Date.now() < deadline) {
    last = await appState(y, app);
    if (ok(last)) return last;
    await sleep(150);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last state: ${JSON.stringify(last)}`);
}

/**
 * A sidecar's keys for the main application: its RM, the interceptor at `proxyAddress` (with a copy
 * of the application's secret, the same for every attempt), a fast poll, and room to block two of
 * the three NodeManagers at once.
 */
export function mainSidecarKeys(y: RealYarn, proxyAddress: string, secretFile: string): Record<string, string> {
  return {
    'yarn.resourcemanager.webapp.address': y.rmWebapp,
    'cluster.resource-blocklist.amrm-proxy.address': proxyAddress,
    'cluster.resource-blocklist.amrm-proxy.secret-file': secretFile,
    'yarn.application.id': y.applications.main,
    'cluster.resource-blocklist.poll-interval': '200 ms',
    'cluster.resource-blocklist.max-blocked-fraction': '0.7',
  };
}

/** The detector reporting what it reads, never blocking; the test drives its passes (the timer makes only the first). */
export const SHADOW_DETECTOR_KEYS: Readonly<Record<string, string>> = {
  'cluster.resource-blocklist.detector.mode': 'shadow',
  'cluster.resource-blocklist.detector.failures-per-host': '10',
  'cluster.resource-blocklist.detector.poll-interval': '1 h',
};

/** A GET of the interceptor's own API at `proxyAddress`, with the application's secret. */
export async function proxyGet<T>(proxyAddress: string, secretFile: string, route: string): Promise<T> {
  const r = await http(proxyAddress, 'GET', `/amrm/v1${route}`, undefined, { authorization: `Bearer ${fs.readFileSync(secretFile, 'utf8').trim()}` });
  if (r.status !== 200) throw new Error(`GET ${route}: ${r.status} ${r.text}`);
  return r.body as T;
}
