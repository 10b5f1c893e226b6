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
import { startJavaLauncher } from './java-launcher';
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

/** Why the real YARN cannot run here, or undefined when it can. */
export function realYarnUnavailableReason(): string | undefined {
  const j = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (j.error || j.status !== 0) return 'no java on PATH (scripts/ensure-java.sh installs one)';
  for (const f of ['test-classpath.txt', 'test-classes', 'classes']) {
    if (!fs.existsSync(path.join(target(), f))) return `am-proxy/interceptor/target/${f} is missing (npm test builds it: scripts/build-am-proxy.sh)`;
  }
  return undefined;
}

/** For a suite's before(): skip with the reason outside CI; in CI fail instead. */
export function requireRealYarn(ctx: Mocha.Context): void {
  const why = realYarnUnavailableReason();
  if (!why) return;
  if (isCI) throw new Error(`real-YARN suites cannot run in CI: ${why}`);
  console.log(`      (skipped: ${why})`);
  ctx.skip();
}

let started: Promise<RealYarn> | undefined;

/** The shared cluster (started on first use). */
export function realYarn(): Promise<RealYarn> {
  started ??= launch();
  return started;
}

async function launch(): Promise<RealYarn> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-real-yarn-'));
  const hosts = path.join(workDir, 'hosts');
  // The JVM resolves names from this file only (jdk.net.hosts.file): the NodeManagers get distinct
  // host names without touching /etc/hosts; the machine's own name must resolve too.
  fs.writeFileSync(
    hosts,
    ['127.0.0.1 localhost', `127.0.0.1 ${os.hostname()}`, '127.0.0.2 nm1.blocklist.test', '127.0.0.3 nm2.blocklist.test', '127.0.0.4 nm3.blocklist.test', ''].join('\n'),
  );
  const t = target();
  const cp = [path.join(t, 'classes'), path.join(t, 'test-classes'), fs.readFileSync(path.join(t, 'test-classpath.txt'), 'utf8').trim()].join(path.delimiter);
  const log = path.join(workDir, 'launcher.log');
  const work = path.join(workDir, 'yarn');
  fs.mkdirSync(work);
  const ready = await startJavaLauncher<Omit<RealYarn, 'workDir' | 'log'>>({
    what: 'the YARN launcher',
    // test.build.data: MiniYARNCluster's own work dir (default target/test/data under the cwd);
    // java.io.tmpdir: where Jetty unpacks each web app (four dirs in /tmp per run, left behind).
    args: ['-Xmx768m', '-XX:TieredStopAtLevel=1', `-Djdk.net.hosts.file=${hosts}`, `-Dtest.build.data=${path.join(workDir, 'test-data')}`, `-Djava.io.tmpdir=${workDir}`, '-cp', cp, 'io.github.flinkyarnblocklist.launcher.YarnLauncher', work, hosts, '3'],
    dir: workDir,
    log,
    timeoutMs: 180_000,
  });
  return { ...ready, workDir, log };
}

export async function control<T>(y: RealYarn, method: 'GET' | 'POST', p: string): Promise<T> {
  const res = await fetch(y.control + p, { method });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`control ${method} ${p}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

export type AppName = keyof RealYarn['applications'];

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
