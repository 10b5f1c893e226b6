/**
 * 6. Big reads and memory under real use, against a sidecar in a process of its own (so its event
 * loop and RSS are its own; the clients and the simulator live elsewhere):
 *  - /healthz and /metrics latency (p99) while `listings` concurrent full GET /blocklist of
 *    `items` items run. Goal ≤ 100 ms.
 *  - Peak RSS (the kernel's high-water mark, VmHWM, no forced GC) of a sidecar that starts empty,
 *    takes a bulk load of `items` items through POST /blocklist and then serves `memListings`
 *    concurrent full listings. Goal ≤ 250 MB.
 * The fault test test/faults/big-reads.test.ts drives the same code with bounded sizes.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SqliteStore } from '../src/store/sqlite-store';
import { nodeItem, outsideHost } from './lib/items';
import { now, percentile, sleep } from './lib/stats';

export interface SidecarProcess {
  url: string;
  child: ChildProcess;
  /** Peak resident set size so far (VmHWM), bytes; undefined where /proc is missing. */
  peakRss(): number | undefined;
  rss(): number | undefined;
  stop(): Promise<void>;
}

const cliMain = path.join(__dirname, '..', 'src', 'cli', 'main.js');

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
  const child = spawn(process.execPath, [...(process.env.BLOCKLIST_BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BLOCKLIST_BENCH_PROF}`] : []), cliMain, 'sidecar', ...Object.entries(defs).map(([k, v]) => `-D${k}=${v}`)], {
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
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sidecar exited with ${code}: ${out.slice(-500)}`));
    });
  });
}

/** Fills a SQLite file with `n` permanent node items (hosts no simulated node has). */
export async function fillStore(file: string, n: number, prefix = 'big'): Promise<void> {
  const store = new SqliteStore(file);
  try {
    const t = Date.now();
    for (let i = 0; i < n; i += 10_000) {
      const reqs = [];
      for (let j = i; j < Math.min(n, i + 10_000); j++) reqs.push({ item: nodeItem(outsideHost(j, prefix), t), allowMerge: false });
      await store.addMany(reqs);
    }
  } finally {
    await store.close();
  }
}

/**
 * The listing clients run in a worker thread: reading 30 × 39 MB keeps an event loop busy, and
 * the probes of /healthz must not wait behind the clients' own work (that would time the client).
 */
const DRAIN_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
async function drain(url, timeoutMs) {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    let bytes = 0;
    if (res.body) for await (const c of res.body) bytes += c.byteLength;
    return { status: res.status, bytes, ms: performance.now() - t0 };
  } catch (e) {
    return { status: 0, bytes: 0, ms: performance.now() - t0, error: String(e && e.message || e) };
  }
}
Promise.all(Array.from({ length: workerData.n }, () => drain(workerData.url, workerData.timeoutMs))).then((r) => parentPort.postMessage(r));
`;

function drainInWorker(url: string, n: number, timeoutMs: number): Promise<{ status: number; bytes: number; ms: number }[]> {
  return new Promise((resolve, reject) => {
    const w = new Worker(DRAIN_WORKER, { eval: true, workerData: { url, n, timeoutMs } });
    w.once('message', (m: { status: number; bytes: number; ms: number }[]) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

export interface ListingLoadResult {
  listings: { status: number; bytes: number; ms: number }[];
  healthzMs: number[];
  metricsMs: number[];
  healthzFailures: number;
}

/**
 * `listings` concurrent full GET /blocklist; meanwhile /healthz and /metrics are asked in turn,
 * one at a time, every `probeEveryMs`, until every listing has ended. Bounded by `timeoutMs`.
 */
export async function listingLoad(url: string, o: { listings: number; probeEveryMs?: number; timeoutMs?: number }): Promise<ListingLoadResult> {
  const timeoutMs = o.timeoutMs ?? 120_000;
  let done = false;
  const healthzMs: number[] = [];
  const metricsMs: number[] = [];
  let healthzFailures = 0;
  const probe = (async () => {
    // Let the listings start first: the figure is about answering *while* they run.
    await sleep(20);
    for (let i = 0; !done; i++) {
      const which = i % 2 === 0 ? '/healthz' : '/metrics';
      const t0 = now();
      try {
        const r = await fetch(url + which, { signal: AbortSignal.timeout(timeoutMs) });
        await r.arrayBuffer();
        if (r.status !== 200) healthzFailures++;
      } catch {
        healthzFailures++;
      }
      (which === '/healthz' ? healthzMs : metricsMs).push(now() - t0);
      await sleep(o.probeEveryMs ?? 10);
    }
  })();
  try {
    const listings = await drainInWorker(`${url}/blocklist`, o.listings, timeoutMs);
    return { listings, healthzMs, metricsMs, healthzFailures };
  } finally {
    done = true;
    await probe;
  }
}

/** POSTs `n` new node items in batches of `batch` (the bulk load of a big import). */
export async function bulkLoad(url: string, n: number, batch = 1000, prefix = 'bulk'): Promise<void> {
  for (let i = 0; i < n; i += batch) {
    const body = [];
    for (let j = i; j < Math.min(n, i + batch); j++) body.push({ id: outsideHost(j, prefix), action: 'MARK_BLOCKED', cause: 'bulk load' });
    const res = await fetch(`${url}/blocklist`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`bulk load: POST /blocklist ${res.status}: ${text.slice(0, 300)}`);
  }
}

export const p99 = (xs: number[]): number => percentile(xs, 99);

export interface BulkMemoryResult {
  /** VmHWM after the bulk load, and after the listings (the run's peak). */
  peakAfterLoad: number;
  peak: number;
  /** VmRSS at the end (no forced GC). */
  rssEnd: number;
  loadMs: number;
  listingBytes: number;
}

/**
 * The memory figure of real use: an empty sidecar process takes `items` new items through
 * POST /blocklist (batches of 1,000), then serves `listings` concurrent full listings. Peak RSS
 * is the kernel's high-water mark of the process; nothing forces a GC.
 */
export async function bulkLoadMemory(dir: string, simUrl: string, items: number, listings: number): Promise<BulkMemoryResult> {
  const p = await spawnSidecarProcess(path.join(dir, 'bulk.db'), simUrl);
  try {
    const t0 = now();
    await bulkLoad(p.url, items);
    const loadMs = now() - t0;
    const peakAfterLoad = p.peakRss() ?? NaN;
    const r = await drainInWorker(`${p.url}/blocklist`, listings, 300_000);
    const bad = r.filter((x) => x.status !== 200);
    if (bad.length) throw new Error(`bulk memory: ${bad.length} of ${listings} listings answered ${bad[0].status}`);
    return { peakAfterLoad, peak: p.peakRss() ?? NaN, rssEnd: p.rss() ?? NaN, loadMs, listingBytes: r[0]?.bytes ?? 0 };
  } finally {
    await p.stop();
  }
}
