/**
 * 3. API throughput. The sidecar is `blocklist sidecar` in a process of its own, as an operator
 * runs it (lib/sidecar-process.ts: the CLI's V8 settings, its write thread), and so is the simulator
 * (lib/sim-child.ts: the proxy's work is the AM's, not the sidecar's); the clients run in a worker
 * thread of the bench's process.
 *  - Sustained PUT (new item) and PUT (merge that changes the item) per second with 8 and 32
 *    concurrent keep-alive clients (a worker thread), against the full sidecar: SQLite store, the
 *    sync engine pushing every change to the simulator, audit, metrics. Limit: the store's own
 *    durable insert rate, measured alone in this run (SqliteStore.add back to back, fresh file).
 *    Goal (issue 15): new items ≥ 1.0× of it at 32 clients (concurrent writes share a group commit,
 *    so they can beat one-at-a-time inserts) and ≥ 0.5× below that; merges ≥ 0.5×.
 * (GET /blocklist against JSON.stringify moved to the listing section, bench/listing.ts.)
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { putNode } from './lib/harness';
import { startSimChild } from './lib/sim-child';
import { SidecarProcess, spawnSidecarProcess } from './lib/sidecar-process';
import { LoadJob, LoadResult } from './lib/load-worker';
import { nodeItem, outsideHost } from './lib/items';
import { benchDir, storeWrites } from './lib/limits';
import { SqliteStore } from '../src/store/sqlite/sqlite-store';
import { Row, SectionResult, emptyResult } from './lib/report';
import { now, sleep } from './lib/stats';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';

export interface ThroughputSizes {
  concurrency: number[];
  durationMs: number;
  /** Store inserts measured alone for the limit. */
  storeInserts: number;
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

/**
 * What the load generator itself can do: the same clients for `ms` against a server on this
 * process's loop that reads each body and answers 201 at once. A sidecar figure near this one
 * would be the client's limit, not the sidecar's.
 */
async function generatorCeiling(concurrency: number, ms: number): Promise<number> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = '{"outcome":"created"}';
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const r = await runLoad({ url: `http://127.0.0.1:${port}`, concurrency, durationMs: ms, mode: 'new', mergeHosts: [], prefix: 'ceiling' });
    return (r.ok * 1000) / r.elapsedMs;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Until the sidecar's first pass has reached the simulator (GET /status says when). */
async function synced(url: string): Promise<void> {
  const end = now() + 10_000;
  for (;;) {
    const res = await fetch(`${url}/status`).catch(() => undefined);
    const body = res?.ok ? ((await res.json()) as { lastSuccessfulSync?: number }) : undefined;
    if (body?.lastSuccessfulSync !== undefined) return;
    if (now() > end) throw new Error('timed out after 10000 ms waiting for the first sync');
    await sleep(20);
  }
}

/** The process's CPU time so far (user + system, ms), from /proc; undefined where it is missing. */
function cpuMs(pid: number): number | undefined {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

export async function benchThroughput(s: ThroughputSizes): Promise<SectionResult> {
  const out = emptyResult();
  const rates: number[] = [];
  const ceilings: string[] = [];
  /** The sidecar process's CPU (all its threads) per acknowledged request, per run. */
  const cpus: string[] = [];
  for (const concurrency of s.concurrency) ceilings.push(`${concurrency} clients ${(await generatorCeiling(concurrency, Math.min(2000, s.durationMs))).toFixed(0)}/s`);
  for (const mode of ['new', 'merge'] as const) {
    for (const concurrency of s.concurrency) {
      const sim = await startSimChild({ nodes: 50, containers: 100 });
      const dir = benchDir('throughput');
      let p: SidecarProcess | undefined;
      try {
        p = await spawnSidecarProcess(path.join(dir, 'blocklist.db'), sim.url);
        const url = p.url;
        await synced(url);
        const mergeHosts: string[] = [];
        if (mode === 'merge') {
          for (let i = 0; i < concurrency * 4; i++) mergeHosts.push(outsideHost(i, 'm'));
          for (const h of mergeHosts) await putNode(url, h, { action: 'MARK_BLOCKED', cause: 'bench throughput' }, [201]);
        }
        // fsync latency on a shared disk drifts by the minute: the limit is the store's rate just
        // before and just after this run, averaged.
        const before = await storeRate(s.durationMs / 2, s.storeInserts);
        const pid = p.child.pid as number;
        const cpu0 = cpuMs(pid);
        const r = await runLoad({ url, concurrency, durationMs: s.durationMs, mode, mergeHosts, prefix: `t${concurrency}` });
        const cpu1 = cpuMs(pid);
        if (cpu0 !== undefined && cpu1 !== undefined && r.ok > 0) cpus.push(`${mode} × ${concurrency} ${(((cpu1 - cpu0) * 1000) / r.ok).toFixed(0)} µs (the generator's thread ${((r.busyMs * 1000) / r.ok).toFixed(0)} µs)`);
        const rate = (before + (await storeRate(s.durationMs / 2, s.storeInserts))) / 2;
        rates.push(rate);
        if (r.ok === 0) throw new Error(`throughput ${mode}×${concurrency}: no request succeeded (${r.firstError ?? 'no error recorded'})`);
        const perSecond = (r.ok * 1000) / r.elapsedMs;
        const goal = mode === 'new' && concurrency >= 32 ? 1 : 0.5;
        const row: Row = {
          section: SECTION,
          figure: `PUT (${mode === 'new' ? 'new item, 201' : 'merge, 202'}) × ${concurrency} clients, per second`,
          value: perSecond,
          unit: '/s',
          limit: rate,
          limitUnit: '/s',
          limitWhat: 'SqliteStore.add alone, durable',
          ratio: perSecond / rate,
          goal: `≥ ${goal.toFixed(1)}×`,
          met: perSecond / rate >= goal,
          ...(r.failed ? { note: `${r.failed} failed (${r.firstError ?? ''})` } : {}),
        };
        out.rows.push(row);
      } finally {
        await p?.stop();
        await sim.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }

  out.notes.push(`Throughput: ${s.durationMs / 1000} s per run, clients in a worker thread (one keep-alive socket each, lib/raw-http.ts; the same clients against a server that answers at once: ${ceilings.join(', ')}); the store's durable insert rate alone, measured for ${s.durationMs / 2000} s before and after each run: ${rates.map((r) => r.toFixed(0)).join(', ')}/s; rate limit off (rest.rate-limit.max-mutations 0), log level error (an audit line per write at info is the logger's cost on top). The sidecar process's CPU, all threads, per acknowledged request: ${cpus.join(', ')}.`);
  return out;
}
