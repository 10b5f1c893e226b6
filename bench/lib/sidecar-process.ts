/**
 * `blocklist sidecar` in a process of its own, as an operator runs it (the CLI's start: its V8
 * settings, its logger, its write thread), wired to a simulator: the sections that measure the
 * sidecar's own event loop, CPU or memory use it, so the clients and the simulator live elsewhere.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sleep } from './stats';

export interface SidecarProcess {
  url: string;
  child: ChildProcess;
  /** Peak resident set size so far (VmHWM), bytes; undefined where /proc is missing. */
  peakRss(): number | undefined;
  rss(): number | undefined;
  stop(): Promise<void>;
}

const cliMain = path.join(__dirname, '..', '..', 'src', 'cli', 'main.js');

function procStatus(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** `blocklist sidecar` on a SQLite file, wired to a simulator, as its own process. */
export function spawnSidecarProcess(file: string, simUrl: string, define: Record<string, string> = {}): Promise<SidecarProcess> {
  const addr = simUrl.replace(/^http:\/\//, '');
  const defs: Record<string, string> = {
    'rest.port': '0',
    'cluster.resource-blocklist.store.sqlite.path': file,
    'yarn.resourcemanager.webapp.address': addr,
    'cluster.resource-blocklist.amrm-proxy.address': simUrl,
    'rest.rate-limit.max-mutations': '0',
    'rest.server.max-content-length': String(8 * 1024 * 1024),
    'cluster.resource-blocklist.max-blocked-fraction': '1',
    'cluster.resource-blocklist.expiry.cron': '0 0 1 1 *',
    'log.level': 'error',
    ...define,
  };
  // BLOCKLIST_BENCH_NODE_ARGS: node flags for the sidecar process when profiling (e.g. --cpu-prof, --trace-gc).
  const nodeArgs = (process.env.BLOCKLIST_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, cliMain, 'sidecar', ...Object.entries(defs).map(([k, v]) => `-D${k}=${v}`)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BLOCKLIST_CONFIG_FILE: '', CONTAINER_ID: '' },
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sidecar did not start: ${out.slice(-500)}`));
    }, 60_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /sidecar listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      const pid = child.pid as number;
      resolve({
        url: m[1],
        child,
        peakRss: () => procStatus(pid, 'VmHWM'),
        rss: () => procStatus(pid, 'VmRSS'),
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            await Promise.race([exited, sleep(6000)]);
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          }
          await exited;
        },
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    const log = process.env.BLOCKLIST_BENCH_CHILD_LOG;
    if (log) {
      child.stdout?.on('data', (d: Buffer) => fs.appendFileSync(log, d));
      child.stderr?.on('data', (d: Buffer) => fs.appendFileSync(log, d));
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sidecar exited with ${code}: ${out.slice(-500)}`));
    });
  });
}

