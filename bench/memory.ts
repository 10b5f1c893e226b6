/**
 * 5. Memory: RSS of a sidecar (its own process, so nothing else shares the figure) holding 1k,
 * 10k and 100k items, synced with the simulator and after serving one GET /blocklist of them all.
 * Goal: linear with a small constant and ≤ 250 MB at 100k, right after the listing and once the
 * listing's cached serialisation has been released (rest.listing.cache-retention). Then a churn soak (block + unblock of
 * fresh hosts through the API) on a 10k-item sidecar: heap after GC and RSS at the end vs after a
 * warm-up. Goal: no growth (≤ 1.1×).
 * The parent fills each SQLite file and runs a fresh simulator per child.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startSimulator } from '../src/sim/server';
import { SqliteStore } from '../src/store/sqlite/sqlite-store';
import { encodeItem } from '../src/store/codec';
import { benchDir } from './lib/limits';
import { nodeItem, outsideHost } from './lib/items';
import { MemoryReport, MemorySample } from './memory-child';
import { SectionResult, emptyResult, rssBudgetRow } from './lib/report';

export interface MemorySizes {
  items: number[];
  /** Items behind the soak's sidecar. */
  soakItems: number;
  soakSeconds: number;
}

const SECTION = 'memory';
const MB = 1024 * 1024;

async function child(items: number, soakSeconds: number, waitRelease = false): Promise<MemoryReport> {
  const dir = benchDir('mem');
  const file = path.join(dir, 'blocklist.db');
  const sim = await startSimulator({ port: 0, nodes: 50, containers: 100, seed: 7, tickMs: 0 });
  try {
    if (items > 0) {
      const store = new SqliteStore(file);
      const t = Date.now();
      const chunk = 10_000;
      for (let i = 0; i < items; i += chunk) {
        const reqs = [];
        for (let j = i; j < Math.min(items, i + chunk); j++) reqs.push({ item: nodeItem(outsideHost(j, 'mem'), t), allowMerge: false });
        await store.addMany(reqs);
      }
      await store.close();
    }
    const script = path.join(__dirname, 'memory-child.js');
    return await new Promise<MemoryReport>((resolve, reject) => {
      const p = spawn(process.execPath, ['--expose-gc', script, file, sim.url, String(soakSeconds), waitRelease ? '1' : '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      // Bounded: a child that hangs is killed (by its own pid) and reported.
      const timer = setTimeout(() => p.kill('SIGKILL'), 180_000 + soakSeconds * 2000);
      p.on('exit', (code) => {
        clearTimeout(timer);
        if (code !== 0) return reject(new Error(`memory child (${items} items) exited ${code}: ${stderr.slice(-500)}`));
        try {
          resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as MemoryReport);
        } catch (e) {
          reject(new Error(`memory child (${items} items) printed no report: ${(e as Error).message}; stderr: ${stderr.slice(-300)}`));
        }
      });
    });
  } finally {
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What RSS is made of, as process.memoryUsage() says (after GC). */
const breakdown = (m: MemorySample): string => `heap ${(m.heapUsed / MB).toFixed(0)} MB, external ${(m.external / MB).toFixed(0)} MB of which buffers ${(m.arrayBuffers / MB).toFixed(0)} MB`;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};

export async function benchMemory(s: MemorySizes): Promise<SectionResult> {
  const out = emptyResult();
  const empty = await child(0, 0);
  const base = empty.afterList.rss;
  const bySize: MemoryReport[] = [];
  for (const n of s.items) {
    const big = n >= 100_000;
    const r = await child(n, 0, big);
    bySize.push(r);
    const last = n === Math.max(...s.items);
    const figure = `sidecar RSS with ${n.toLocaleString('en')} items (synced, right after GET /blocklist; ${breakdown(r.afterList)})`;
    out.rows.push(
      big
        ? rssBudgetRow(SECTION, figure, r.afterList.rss / MB)
        : {
            section: SECTION,
            figure,
            value: r.afterList.rss / MB,
            unit: 'MB',
            limit: base / MB,
            limitUnit: 'MB',
            limitWhat: 'RSS of the same sidecar with 0 items',
            ratio: r.afterList.rss / base,
            goal: '–',
            met: undefined,
            ...(last ? { note: 'largest size in this run' } : {}),
          },
    );
    if (r.afterRelease) {
      const rel = r.afterRelease;
      out.rows.push(rssBudgetRow(SECTION, `sidecar RSS with ${n.toLocaleString('en')} items, ${(r.retentionMs / 1000).toFixed(0)} s after GET /blocklist (rest.listing.cache-retention: its serialisation released; ${breakdown(rel)})`, rel.rss / MB));
    }
  }
  // A per-item figure needs enough items for their memory to stand out of RSS's page-level noise
  // (a few MB either way between two processes): below that it is noise, and is said to be.
  const MIN_ITEMS_FOR_PER_ITEM = 5_000;
  const lastTwo = bySize.slice(-2);
  if (lastTwo.length === 2 && lastTwo[1].items - lastTwo[0].items < MIN_ITEMS_FOR_PER_ITEM) {
    out.skipped.push({ section: SECTION, figure: 'RSS per item', reason: `only ${lastTwo[1].items - lastTwo[0].items} items between the two sizes (needs ${MIN_ITEMS_FOR_PER_ITEM} to rise above RSS noise)` });
  } else if (bySize.length >= 2) {
    const a = bySize[bySize.length - 2];
    const b = bySize[bySize.length - 1];
    const perItem = (b.afterList.rss - a.afterList.rss) / (b.items - a.items);
    const perItemIdle = (b.idle.rss - a.idle.rss) / (b.items - a.items);
    const encoded = encodeItem(nodeItem(outsideHost(12345, 'mem'), Date.now())).length;
    out.rows.push({
      section: SECTION,
      figure: `RSS per item, ${a.items.toLocaleString('en')} → ${b.items.toLocaleString('en')} items (idle: ${perItemIdle.toFixed(0)} B)`,
      value: perItem,
      unit: 'B',
      limit: encoded,
      limitUnit: 'B',
      limitWhat: "one item's stored JSON",
      ratio: perItem / encoded,
      goal: '–',
      met: undefined,
    });
  }
  if (s.soakSeconds > 0) {
    const r = await child(s.soakItems, s.soakSeconds);
    // Compare the end with the state after a warm-up (the first fifth: JIT, pools, caches).
    const skip = Math.max(1, Math.floor(r.soak.length / 5));
    const early = r.soak.slice(skip, skip + Math.max(1, Math.floor(r.soak.length / 5)));
    const late = r.soak.slice(-Math.max(1, Math.floor(r.soak.length / 5)));
    for (const [what, key] of [
      ['heap used after GC', 'heapUsed'],
      ['RSS', 'rss'],
    ] as const) {
      const e = median(early.map((x: MemorySample) => x[key])) / MB;
      const l = median(late.map((x: MemorySample) => x[key])) / MB;
      out.rows.push({
        section: SECTION,
        figure: `churn soak ${s.soakSeconds} s on ${s.soakItems.toLocaleString('en')} items (${r.soakOps} block/unblock calls): ${what} at the end`,
        value: l,
        unit: 'MB',
        limit: e,
        limitUnit: 'MB',
        limitWhat: 'the same after warm-up',
        ratio: l / e,
        goal: '≤ 1.1× (no growth)',
        met: l / e <= 1.1,
      });
    }
  }
  out.notes.push(`Memory: each size in its own process (node --expose-gc${empty.optimizeForSize ? ' --optimize-for-size, as `blocklist sidecar` runs' : ''}, two GCs before each reading); empty sidecar ${(base / MB).toFixed(0)} MB RSS; RSS after GET /blocklist keeps the pages the response needed (idle figures: ${bySize.map((r) => `${r.items}: ${(r.idle.rss / MB).toFixed(0)} MB`).join(', ')}).`);
  return out;
}
