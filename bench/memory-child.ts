/**
 * One sidecar in a process of its own, for clean RSS figures (memory.ts spawns it with
 * --expose-gc). It opens a SQLite file the parent filled, syncs with the parent's simulator,
 * serves one GET /blocklist, optionally waits until the listing's cached serialisation is released
 * (rest.listing.cache-retention), then optionally churns (block + unblock of fresh hosts through
 * its own API) for a while, sampling memory after a full GC. Prints one JSON line (MemoryReport)
 * on stdout. V8 runs with the flags `blocklist sidecar` sets (applyMemoryMode), so the figures are
 * those of the sidecar as deployed.
 *
 *   node --expose-gc dist/bench/memory-child.js <sqlite-file> <simulator-url> <soak-seconds> [wait-release: 0|1]
 */
import { sidecarConfigForSimulator } from '../src/quickstart/local-cluster';
import { silentLogger } from '../src/core/logger';
import { startSidecar } from '../src/sidecar/sidecar';
import { applyMemoryMode } from '../src/sidecar/v8-settings';
import { BENCH_DEFINES, deleteNode, putNode } from './lib/harness';
import { now, sleep, until } from './lib/stats';

export interface MemorySample {
  atMs: number;
  rss: number;
  heapUsed: number;
  /** Memory of C++ objects bound to JS objects, Buffers' bytes included (process.memoryUsage). */
  external: number;
  /** ArrayBuffer and Buffer bytes (part of external): the listing's serialisation lives here. */
  arrayBuffers: number;
}

export interface MemoryReport {
  items: number;
  /** After the first sync, GC'd. */
  idle: MemorySample;
  /** After one GET /blocklist of every item, GC'd (RSS keeps the pages the response needed). */
  afterList: MemorySample;
  /** After the listing cache's retention has passed with nothing listed (when asked for). */
  afterRelease?: MemorySample;
  /** rest.listing.cache-retention as configured (ms). */
  retentionMs: number;
  /** Whether V8 ran with --optimize-for-size (as `blocklist sidecar` does by default). */
  optimizeForSize: boolean;
  listBytes: number;
  soak: MemorySample[];
  soakOps: number;
}

function sample(t0: number): MemorySample {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
  const m = process.memoryUsage();
  return { atMs: now() - t0, rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

async function main(): Promise<void> {
  const [file, simUrl, soakArg, waitArg] = process.argv.slice(2);
  const soakSeconds = Number(soakArg ?? '0');
  if (!file || !simUrl || !Number.isFinite(soakSeconds)) throw new Error('usage: memory-child <sqlite-file> <simulator-url> <soak-seconds> [wait-release]');
  const config = sidecarConfigForSimulator(simUrl, file, BENCH_DEFINES);
  const optimizeForSize = applyMemoryMode(config);
  const retentionMs = config.values['rest.listing.cache-retention'];
  const sidecar = await startSidecar({ config, logger: silentLogger, env: {} });
  try {
    await until(() => sidecar.sync.synced(), 120_000, 'the first sync', 10);
    const items = (await sidecar.store.list()).length;
    const t0 = now();
    const idle = sample(t0);
    const res = await fetch(`${sidecar.url}/blocklist`);
    if (res.status !== 200 || !res.body) throw new Error(`GET /blocklist: ${res.status}`);
    // Count the body as it streams by: the client runs in this process too, and holding the whole
    // 38 MB answer (as res.text() did) charged the client's buffer to the sidecar's RSS.
    let listBytes = 0;
    for await (const chunk of res.body) listBytes += (chunk as Uint8Array).byteLength;
    const afterList = sample(t0);
    let afterRelease: MemorySample | undefined;
    if (waitArg === '1') {
      // Nothing else happens meanwhile: the engine's poll only.
      await sleep(retentionMs + 1000);
      afterRelease = sample(t0);
    }
    const soak: MemorySample[] = [];
    let soakOps = 0;
    if (soakSeconds > 0) {
      const start = now();
      const end = start + soakSeconds * 1000;
      let nextSample = start;
      let i = 0;
      while (now() < end) {
        const host = `soak${i++}.bench.invalid`;
        await putNode(sidecar.url, host, { action: 'MARK_BLOCKED', cause: 'bench soak' }, [201]);
        await deleteNode(sidecar.url, host);
        soakOps += 2;
        if (now() >= nextSample) {
          soak.push(sample(start));
          nextSample += Math.max(250, (soakSeconds * 1000) / 40);
        }
        // Leave the engine room to push each change, as a steady stream of operators would.
        if (i % 10 === 0) await sleep(1);
      }
      soak.push(sample(start));
    }
    const report: MemoryReport = { items, idle, afterList, ...(afterRelease ? { afterRelease } : {}), retentionMs, optimizeForSize, listBytes, soak, soakOps };
    process.stdout.write(JSON.stringify(report) + '\n');
  } finally {
    await sidecar.close();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
