/**
 * Big reads (issue: "big reads starve the process"): GET /blocklist of many items is served from a
 * serialisation cached per store version, streamed a slice per event-loop turn; a bound on
 * concurrent full listings answers 503 + Retry-After past it; `?limit=&after=` pages in a stable
 * order. Bounded: 30 listings of 20,000 items against a sidecar process, loopback only.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { newItem } from '../../src/model/merge';
import { MARK_BLOCKED } from '../../src/model/item';
import { startSimulator } from '../../src/sim/server';
import { TestSidecar, startTestSidecar, tempDir } from '../support/sidecar';
import { fillStore, listingLoad, p99 } from '../../bench/listing';
import { spawnSidecarProcess } from '../../bench/lib/sidecar-process';
import { count, printFigures } from '../fuzz/figures';

const item = (id: string, at: number, end?: number) =>
  newItem({ id, kind: 'node', node: id, action: MARK_BLOCKED, end: end ? { type: 'at', at: end } : { type: 'permanent' }, cause: `c-${id}`, scope: 'cluster', allowMerge: false }, at, { by: 't', from: 't' });

async function get(base: string, p: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(base + p, { signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** A GET whose response is not read: the server's stream stays in flight (socket backpressure). */
function stalled(base: string, p: string): Promise<{ res: http.IncomingMessage; req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const req = http.get(base + p, (res) => {
      res.pause();
      resolve({ res, req });
    });
    req.on('error', reject);
  });
}

function readAll(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.resume();
  });
}

describe('faults: big reads (cached, streamed, bounded, paged listings)', function () {
  this.timeout(120_000);
  let s: TestSidecar | undefined;

  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  after(() => printFigures('big reads', ['listings under load', 'healthz p99 under 30 listings of 20k items (ms)', 'metrics p99 under 30 listings of 20k items (ms)', 'slowest of 30 listings of 20k items (ms)', 'listings refused past the bound']));

  it('pages with ?limit=&after= in id order, with a Link to the next page; a changed store is seen at once; bad paging is a 400', async () => {
    s = await startTestSidecar();
    const t = Date.now();
    const n = 2_345;
    const reqs = Array.from({ length: n }, (_, i) => ({ item: item(`p${String((i * 7919) % n).padStart(5, '0')}.page.invalid`, t, i % 10 === 0 ? t + 3_600_000 : undefined), allowMerge: false }));
    await s.store.addMany(reqs);
    const full = (await get(s.url, '/blocklist')).body as Record<string, { id: string }>;
    const ids = Object.keys(full);
    assert.equal(ids.length, n);
    const seen: string[] = [];
    let next: string | undefined = '/blocklist?limit=700';
    let pages = 0;
    while (next) {
      const r = await get(s.url, next);
      assert.equal(r.status, 200);
      const page = Object.keys(r.body as object);
      assert.ok(page.length <= 700);
      seen.push(...page);
      pages++;
      const link = r.headers.get('link');
      next = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
      if (link) assert.ok(next, link);
    }
    assert.equal(pages, Math.ceil(n / 700));
    assert.deepEqual(seen, [...ids].sort(), 'pages cover every item once, in id order');
    // after= alone pages with the default size; after the last id there is nothing, and no Link.
    const last = seen[seen.length - 1];
    const tail = await get(s.url, `/blocklist?after=${encodeURIComponent(last)}`);
    assert.deepEqual(tail.body, {});
    assert.equal(tail.headers.get('link'), null);
    // A changed store is seen by the next request (the cache is per store version).
    await s.store.remove(seen[0]);
    const first = await get(s.url, '/blocklist?limit=1');
    assert.deepEqual(Object.keys(first.body as object), [seen[1]]);
    for (const bad of ['limit=0', 'limit=abc', 'limit=10001', 'limit=-1', 'after=']) {
      const r = await get(s.url, `/blocklist?${bad}`);
      assert.equal(r.status, 400, bad);
    }
  });

  it('past rest.listing.max-concurrent full listings: 503 + Retry-After; the ones in flight complete; paged requests still answer', async () => {
    s = await startTestSidecar({ define: { 'rest.listing.max-concurrent': '2' } });
    const t = Date.now();
    const n = 30_000; // ~11 MB per body: more than loopback socket buffers hold, so a paused reader stays in flight
    await s.store.addMany(Array.from({ length: n }, (_, i) => ({ item: item(`b${i}.bound.invalid`, t), allowMerge: false })));
    const a = await stalled(s.url, '/blocklist');
    const b = await stalled(s.url, '/blocklist');
    const refused = await get(s.url, '/blocklist');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.match(JSON.stringify(refused.body), /rest\.listing\.max-concurrent: 2.*\?limit=&after=/);
    count('listings refused past the bound');
    assert.equal((await get(s.url, '/blocklist?limit=10')).status, 200);
    assert.equal((await get(s.url, '/healthz')).status, 200);
    const [ta, tb] = await Promise.all([readAll(a.res), readAll(b.res)]);
    assert.equal(Object.keys(JSON.parse(ta)).length, n);
    assert.equal(Object.keys(JSON.parse(tb)).length, n);
    // Slots are given back when a listing ends, and when its client goes away mid-body.
    const c = await stalled(s.url, '/blocklist');
    c.req.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const again = await get(s.url, '/blocklist');
    assert.equal(again.status, 200);
    assert.equal(Object.keys(again.body as object).length, n);
  });

  it('30 concurrent full listings of 20,000 items: /healthz and /metrics keep answering (sidecar in its own process)', async () => {
    const dir = tempDir('blocklist-bigreads-');
    const file = path.join(dir, 'blocklist.db');
    await fillStore(file, 20_000, 'hz');
    const sim = await startSimulator({ port: 0, nodes: 20, containers: 20, seed: 7, tickMs: 0 });
    const p = await spawnSidecarProcess(file, sim.url);
    try {
      const warm = await get(p.url, '/blocklist?limit=1');
      assert.equal(warm.status, 200);
      const r = await listingLoad(p.url, { listings: 30, timeoutMs: 60_000 });
      count('listings under load', r.listings.length);
      assert.deepEqual(
        r.listings.map((l) => l.status),
        r.listings.map(() => 200),
      );
      const sizes = new Set(r.listings.map((l) => l.bytes));
      assert.equal(sizes.size, 1, 'every listing sent the same body');
      const hz = p99(r.healthzMs);
      const mt = p99(r.metricsMs);
      count('healthz p99 under 30 listings of 20k items (ms)', Math.round(hz));
      count('metrics p99 under 30 listings of 20k items (ms)', Math.round(mt));
      assert.equal(r.healthzFailures, 0);
      assert.ok(r.healthzMs.length >= 3, 'probes ran while the listings did');
      // The goal is 100 ms (docs/benchmarks.md has the figure). A loaded 2-core CI machine
      // stretches every wall time, so the test compares within the run: a listing that held the
      // loop for its whole body made /healthz wait about as long as the listings themselves took;
      // served a slice per turn, the probes answer in a small fraction of that.
      const slowest = Math.max(...r.listings.map((l) => l.ms));
      count('slowest of 30 listings of 20k items (ms)', Math.round(slowest));
      assert.ok(hz < Math.max(100, slowest / 5), `healthz p99 ${hz.toFixed(0)} ms against listings of up to ${slowest.toFixed(0)} ms`);
      assert.ok(mt < Math.max(100, slowest / 5), `metrics p99 ${mt.toFixed(0)} ms against listings of up to ${slowest.toFixed(0)} ms`);
    } finally {
      await p.stop();
      await sim.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
