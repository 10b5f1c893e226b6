/**
 * A JVM launcher from am-proxy/ (the real YARN or Flink of test/real/), started in a temp dir of its
 * own: stderr goes to a log file there, the first stdout line is its JSON answer (ports, ids), and
 * the process and its dir go when the test process exits. A launcher that dies or stays silent
 * fails with the tail of its log, which is where the reason is.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';

export interface JavaLauncher {
  /** What the launcher is, for messages ("the YARN launcher"). */
  what: string;
  /** The java command line after `java`. */
  args: string[];
  /** Its working and temp dir; removed at exit. */
  dir: string;
  log: string;
  timeoutMs: number;
  /** Its environment (default: the test process's). */
  env?: NodeJS.ProcessEnv;
}

export async function startJavaLauncher<T>(l: JavaLauncher): Promise<T> {
  return (await startJavaLauncherWithStop<T>(l)).ready;
}

export interface StartedLauncher<T> {
  /** Its JSON answer. */
  ready: T;
  /** Closes its stdin (the launchers end then, their containers with them) and waits for the JVM's exit; SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/** As startJavaLauncher, for a launcher a suite ends before the run does (a heavy one, not to run beside the next). */
export async function startJavaLauncherWithStop<T>(l: JavaLauncher): Promise<StartedLauncher<T>> {
  // The half of the integration lane that runs beside the cluster half (scripts/test.js) must not
  // start a second cluster on the 2 cores.
  if (process.env.BLOCKLIST_TEST_NO_CLUSTERS === '1') {
    throw new Error(`${l.what}: this file starts a launcher of am-proxy/, so it belongs to the cluster half of the integration lane (CLUSTER_FILES in scripts/test.js)`);
  }
  const proc = spawn('java', l.args, { stdio: ['pipe', 'pipe', fs.openSync(l.log, 'a')], cwd: l.dir, env: l.env ?? process.env });
  process.once('exit', () => {
    proc.stdin?.end();
    proc.kill('SIGTERM');
    // Its work files (Flink unpacks a 24 MB RPC jar per start) go with the run; the JVM, ending,
    // has what it still needs open.
    try {
      fs.rmSync(l.dir, { recursive: true, force: true });
    } catch {
      // best effort: a temp dir
    }
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.stdin?.end();
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  const ready = await new Promise<T>((resolve, reject) => {
    let out = '';
    const fail = (e: Error): void => {
      clearTimeout(timer);
      let tail = '';
      try {
        tail = fs.readFileSync(l.log, 'utf8').split('\n').slice(-30).join('\n');
      } catch {
        tail = '';
      }
      reject(new Error(`${e.message}\n--- ${l.log} (tail) ---\n${tail}`));
    };
    const timer = setTimeout(() => fail(new Error(`${l.what} printed nothing within ${l.timeoutMs / 1000} s`)), l.timeoutMs);
    proc.on('exit', (code) => fail(new Error(`${l.what} exited (${code}) before it was ready`)));
    proc.stdout?.setEncoding('utf8');
    proc.stdout?.on('data', (d: string) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.slice(0, nl)) as T);
      } catch (e) {
        fail(new Error(`${l.what} printed no JSON: ${out.slice(0, 200)} (${(e as Error).message})`));
      }
    });
  });
  return { ready, stop };
}
