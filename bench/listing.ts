/**
 * 6. Big reads and memory under real use, against a sidecar in a process of its own (so its event
 * loop and RSS are its own; the clients and the simulator live elsewhere):
 *  - /healthz and /metrics latency (p99) while `listings` concurrent full GET /blocklist of
 *    `items` items run. Goal ≤ 100 ms.
 *  - Peak RSS (the kernel's high-water mark, VmHWM, no forced GC) of a sidecar that starts empty,
 *    takes a bulk load of `items` items through POST /blocklist and then serves `memListings`
 *    concurrent full listings. Goal ≤ 250 MB.
 *  - GET /blocklist of `ratioItems` items (p50) against a bare JSON.stringify of the same body in
 *    the same run. Goal ≤ 1.5×.
 * The fault test test/faults/big-reads.test.ts drives the same code with bounded sizes.
 */
import { Worker } from 'node:worker_threads';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SqliteStore } from '../src/store/sqlite/sqlite-store';
import { nodeItem, outsideHost } from './lib/items';
import { now, percentile, sleep, timeEach, until } from './lib/stats';
import { startRemoteBenchCluster } from './lib/harness';
import { startSimChild } from './lib/sim-child';
import { benchDir } from './lib/limits';
import { Row, SectionResult, emptyResult, latencyGoalRow, rssBudgetRow } from './lib/report';
import { spawnSidecarProcess } from './lib/sidecar-process';

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

/** One POST /blocklist of `n` new items, sent from a worker thread (its JSON and its wait are not the probes'). */
const BATCH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const body = JSON.stringify(Array.from({ length: workerData.n }, (_, i) => ({ id: 'batch-' + String(i).padStart(6, '0') + '.bench.example', action: workerData.action || 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'bulk import', evacuationTimeout: 600 })));
const t0 = performance.now();
fetch(workerData.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(workerData.timeoutMs) })
  .then(async (res) => parentPort.postMessage({ status: res.status, bytes: (await res.arrayBuffer()).byteLength, ms: performance.now() - t0, sent: body.length }))
  .catch((e) => parentPort.postMessage({ status: 0, bytes: 0, ms: performance.now() - t0, sent: body.length, error: String(e && e.message || e) }));
`;

export interface BatchLoadResult {
  status: number;
  ms: number;
  sent: number;
  healthzMs: number[];
}

/** /healthz, one probe at a time every 10 ms, while one batch of `n` new items is written. */
export async function batchLoad(url: string, n: number, timeoutMs = 120_000): Promise<BatchLoadResult> {
  let done = false;
  const healthzMs: number[] = [];
  const probe = (async () => {
    while (!done) {
      const t0 = now();
      try {
        const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
        await r.arrayBuffer();
      } catch {
        // a failed probe still counts its time
      }
      healthzMs.push(now() - t0);
      await sleep(10);
    }
  })();
  try {
    const r = await new Promise<{ status: number; ms: number; sent: number }>((resolve, reject) => {
      const w = new Worker(BATCH_WORKER, { eval: true, workerData: { url: `${url}/blocklist`, n, timeoutMs, action: process.env.BLOCKLIST_BENCH_BATCH_ACTION } });
      w.once('message', (m: { status: number; ms: number; sent: number }) => {
        resolve(m);
        void w.terminate();
      });
      w.once('error', reject);
    });
    // The engine's pass over the new items runs after the answer: keep probing through it.
    await sleep(1000);
    return { ...r, healthzMs };
  } finally {
    done = true;
    await probe;
  }
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

export interface ListingSizes {
  /** Items behind the listings while /healthz is timed, and of the bulk load. */
  items: number;
  /** Concurrent full listings while /healthz and /metrics are timed. */
  listings: number;
  /** Concurrent full listings after the bulk load (memory figure). */
  memListings: number;
  /** Items and requests of the GET vs JSON.stringify ratio. */
  ratioItems: number;
  ratioRequests: number;
  /** Items of the one big POST /blocklist /healthz is timed beside (10,000: the most a batch may hold). */
  batchItems: number;
}

const LISTING = 'listing';
const MiB = 1024 * 1024;

/** GET /blocklist of `items` items (p50) against JSON.stringify of the same body (p50), same run. */
async function listingRatio(items: number, requests: number): Promise<Row> {
  const c = await startRemoteBenchCluster({ sim: { nodes: 50, containers: 100 } });
  try {
    await until(() => c.sidecar.sync.synced(), 10_000, 'the first sync');
    const t = Date.now();
    await c.sidecar.store.addMany(Array.from({ length: items }, (_, i) => ({ item: nodeItem(outsideHost(i, 'l'), t), allowMerge: false })));
    c.sidecar.sync.kick('bench import');
    await until(() => (c.sidecar.sync.view().actual?.size ?? 0) >= items, 60_000, 'the engine to push the imported items', 20);
    const get = async (): Promise<string> => {
      const res = await fetch(`${c.sidecar.url}/blocklist`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET /blocklist: ${res.status} ${text.slice(0, 200)}`);
      return text;
    };
    const body = await get();
    const parsed: unknown = JSON.parse(body);
    const n = Object.keys(parsed as Record<string, unknown>).length;
    if (n !== items) throw new Error(`GET /blocklist returned ${n} items, expected ${items}`);
    await get();
    const getTimes = await timeEach(requests, get);
    for (let i = 0; i < 3; i++) JSON.stringify(parsed);
    const serialise = await timeEach(Math.max(requests, 10), () => JSON.stringify(parsed));
    const g = percentile(getTimes, 50);
    const ser = percentile(serialise, 50);
    return {
      section: LISTING,
      figure: `GET /blocklist, ${items.toLocaleString('en')} items (${(body.length / 1e6).toFixed(1)} MB), p50 of ${requests}`,
      value: g,
      unit: 'ms',
      limit: ser,
      limitUnit: 'ms',
      limitWhat: 'JSON.stringify of the same body',
      ratio: g / ser,
      goal: '≤ 1.5×',
      met: g / ser <= 1.5,
    };
  } finally {
    await c.close();
  }
}

export async function benchListing(s: ListingSizes): Promise<SectionResult> {
  const out = emptyResult();
  out.rows.push(await listingRatio(s.ratioItems, s.ratioRequests));
  const sim = await startSimChild({ nodes: 50, containers: 100 });
  try {
    // /healthz and /metrics while `listings` full listings of `items` items run.
    const dir = benchDir('listing');
    try {
      const file = path.join(dir, 'listing.db');
      await fillStore(file, s.items, 'hz');
      const p = await spawnSidecarProcess(file, sim.url);
      try {
        const warm = await fetch(`${p.url}/blocklist`);
        await warm.arrayBuffer();
        const r = await listingLoad(p.url, { listings: s.listings, timeoutMs: 300_000 });
        const bad = r.listings.filter((l) => l.status !== 200).length;
        for (const [what, xs] of [
          ['/healthz', r.healthzMs],
          ['/metrics', r.metricsMs],
        ] as const) {
          out.rows.push(latencyGoalRow(LISTING, `${what} p99 while ${s.listings} full GET /blocklist of ${s.items.toLocaleString('en')} items run (n=${xs.length})`, p99(xs), bad ? `${bad} listings not 200` : undefined));
        }
        out.notes.push(`Listing load: ${s.listings} listings of ${(r.listings[0]?.bytes ?? 0) / 1e6} MB each, slowest ${Math.max(...r.listings.map((l) => l.ms)).toFixed(0)} ms; clients in a worker thread, probes (/healthz, /metrics alternately, one at a time every 10 ms) on the main thread; sidecar in its own process.`);
      } finally {
        await p.stop();
      }
      // /healthz while the largest batch the API takes is written (and the engine's pass after it).
      const b = await spawnSidecarProcess(path.join(dir, 'batch.db'), sim.url);
      try {
        const r = await batchLoad(b.url, s.batchItems);
        const figure = `/healthz p99 while one POST /blocklist of ${s.batchItems.toLocaleString('en')} new items (${(r.sent / 1e6).toFixed(1)} MB, answered in ${(r.ms / 1000).toFixed(1)} s) is written and pushed (n=${r.healthzMs.length}, max ${Math.max(...r.healthzMs).toFixed(0)} ms)`;
        out.rows.push(latencyGoalRow(LISTING, figure, p99(r.healthzMs), r.status !== 200 ? `the batch answered ${r.status}` : undefined));
      } finally {
        await b.stop();
      }
      // Peak RSS of real use: bulk load through the API, then concurrent listings.
      const m = await bulkLoadMemory(dir, sim.url, s.items, s.memListings);
      out.rows.push(
        rssBudgetRow(
          LISTING,
          `peak RSS: bulk load of ${s.items.toLocaleString('en')} items (POST /blocklist × ${Math.ceil(s.items / 1000)}) then ${s.memListings} concurrent full listings (after the load: ${(m.peakAfterLoad / MiB).toFixed(0)} MB; at the end ${(m.rssEnd / MiB).toFixed(0)} MB)`,
          m.peak / MiB,
        ),
      );
      out.notes.push(`Peak RSS is the kernel's high-water mark of the sidecar process (VmHWM in /proc/<pid>/status); no GC is forced. Bulk load took ${(m.loadMs / 1000).toFixed(1)} s.`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await sim.close();
  }
  return out;
}
