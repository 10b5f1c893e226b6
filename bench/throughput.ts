/**
 * 3. API throughput. The simulator runs in a process of its own here (lib/sim-child.ts): the
 * proxy's work is the AM's, not the sidecar's.
 *  - Sustained PUT (new item) and PUT (merge that changes the item) per second with 8 and 32
 *    concurrent keep-alive clients (a worker thread), against the full sidecar: SQLite store, the
 *    sync engine pushing every change to the simulator, audit, metrics. Limit: the store's own
 *    durable insert rate, measured alone in this run (SqliteStore.add back to back, fresh file).
 *    Goal: ≥ 0.5 of it.
 *  - GET /blocklist with 10,000 items vs serialising the same body alone (JSON.stringify of the
 *    response the API sent, so the two produce the same bytes). Goal: ≤ 3×.
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { RemoteBenchCluster, startRemoteBenchCluster, putNode } from './lib/harness';
import { LoadJob, LoadResult } from './lib/load-worker';
import { nodeItem, outsideHost } from './lib/items';
import { benchDir, storeWrites } from './lib/limits';
import { SqliteStore } from '../src/store/sqlite-store';
import { Row, SectionResult, emptyResult } from './lib/report';
import { now, percentile, timeEach, until } from './lib/stats';
import * as fs from 'node:fs';

export interface ThroughputSizes {
  concurrency: number[];
  durationMs: number;
  /** Store inserts measured alone for the limit. */
  storeInserts: number;
  /** Items behind GET /blocklist. */
  listItems: number;
  listRequests: number;
}

const SECTION = 'throughput';

function runLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(path.join(__dirname, 'lib', 'load-worker.js'), { workerData: job });
    w.once('message', (m: LoadResult) => resolve(m));
    w.once('error', reject);
    w.once('exit', (code) => {
      if (code !== 0) reject(new Error(`load worker exited with ${code}`));
    });
  });
}

/** Durable inserts per second of a SqliteStore alone (fresh file, back to back) for about `ms`, at least `min` inserts. */
async function storeRate(ms: number, min: number): Promise<number> {
  const dir = benchDir('rate');
  const store = new SqliteStore(path.join(dir, 'rate.db'));
  try {
    await storeWrites(store, 20, 'warm');
    const t0 = now();
    let n = 0;
    while (n < min || now() - t0 < ms) {
      await store.add({ item: nodeItem(`r${n}.limit.invalid`, Date.now()), allowMerge: false });
      n++;
    }
    return (n * 1000) / (now() - t0);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function synced(c: RemoteBenchCluster): Promise<void> {
  await until(() => c.sidecar.sync.synced(), 10_000, 'the first sync');
}

export async function benchThroughput(s: ThroughputSizes): Promise<SectionResult> {
  const out = emptyResult();
  const rates: number[] = [];
  for (const mode of ['new', 'merge'] as const) {
    for (const concurrency of s.concurrency) {
      const c = await startRemoteBenchCluster({ sim: { nodes: 50, containers: 100 } });
      try {
        await synced(c);
        const mergeHosts: string[] = [];
        if (mode === 'merge') {
          for (let i = 0; i < concurrency * 4; i++) mergeHosts.push(outsideHost(i, 'm'));
          for (const h of mergeHosts) await putNode(c.sidecar.url, h, { action: 'MARK_BLOCKED', cause: 'bench throughput' }, [201]);
        }
        // fsync latency on a shared disk drifts by the minute: the limit is the store's rate just
        // before and just after this run, averaged.
        const before = await storeRate(s.durationMs / 2, s.storeInserts);
        const r = await runLoad({ url: c.sidecar.url, concurrency, durationMs: s.durationMs, mode, mergeHosts, prefix: `t${concurrency}` });
        const rate = (before + (await storeRate(s.durationMs / 2, s.storeInserts))) / 2;
        rates.push(rate);
        if (r.ok === 0) throw new Error(`throughput ${mode}×${concurrency}: no request succeeded (${r.firstError ?? 'no error recorded'})`);
        const perSecond = (r.ok * 1000) / r.elapsedMs;
        const row: Row = {
          section: SECTION,
          figure: `PUT (${mode === 'new' ? 'new item, 201' : 'merge, 202'}) × ${concurrency} clients, per second`,
          value: perSecond,
          unit: '/s',
          limit: rate,
          limitUnit: '/s',
          limitWhat: 'SqliteStore.add alone, durable',
          ratio: perSecond / rate,
          goal: '≥ 0.5×',
          met: perSecond / rate >= 0.5,
          ...(r.failed ? { note: `${r.failed} failed (${r.firstError ?? ''})` } : {}),
        };
        out.rows.push(row);
      } finally {
        await c.close();
      }
    }
  }

  // GET /blocklist of listItems items.
  const c = await startRemoteBenchCluster({ sim: { nodes: 50, containers: 100 } });
  try {
    await synced(c);
    const t = Date.now();
    const reqs = Array.from({ length: s.listItems }, (_, i) => ({ item: nodeItem(outsideHost(i, 'l'), t), allowMerge: false }));
    await c.sidecar.store.addMany(reqs);
    // Let the engine take the items in (as it would after any bulk import) so the list shows sync state.
    c.sidecar.sync.kick('bench import');
    await until(() => c.sidecar.sync.status().blacklist.actual.length >= s.listItems, 60_000, 'the engine to push the imported items', 20);
    const get = async (): Promise<string> => {
      const res = await fetch(`${c.sidecar.url}/blocklist`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET /blocklist: ${res.status} ${text.slice(0, 200)}`);
      return text;
    };
    const body = await get();
    const parsed: unknown = JSON.parse(body);
    const n = Object.keys(parsed as Record<string, unknown>).length;
    if (n !== s.listItems) throw new Error(`GET /blocklist returned ${n} items, expected ${s.listItems}`);
    await get();
    const getTimes = await timeEach(s.listRequests, get);
    for (let i = 0; i < 3; i++) JSON.stringify(parsed);
    const serialise = await timeEach(Math.max(s.listRequests, 10), () => JSON.stringify(parsed));
    const g = percentile(getTimes, 50);
    const ser = percentile(serialise, 50);
    out.rows.push({
      section: SECTION,
      figure: `GET /blocklist, ${s.listItems.toLocaleString('en')} items (${(body.length / 1e6).toFixed(1)} MB), p50 of ${s.listRequests}`,
      value: g,
      unit: 'ms',
      limit: ser,
      limitUnit: 'ms',
      limitWhat: 'JSON.stringify of the same body',
      ratio: g / ser,
      goal: '≤ 3×',
      met: g / ser <= 3,
    });
  } finally {
    await c.close();
  }
  out.notes.push(`Throughput: ${s.durationMs / 1000} s per run, clients in a worker thread (Node fetch, keep-alive); the store's durable insert rate alone, measured for ${s.durationMs / 2000} s before and after each run: ${rates.map((r) => r.toFixed(0)).join(', ')}/s; rate limit off (rest.rate-limit.max-mutations 0).`);
  return out;
}
