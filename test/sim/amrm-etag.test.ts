/**
 * The simulator's AMRM face versions the blacklist (docs/amrm-proxy.openapi.yaml): GET answers a
 * strong ETag and a 304 without a body to If-None-Match naming it; every change of any owner's set
 * moves the tag, an update that changes nothing does not; POST names the version it changed and
 * the one it made (in full, or alone with `Prefer: return=minimal`); a new attempt that starts
 * empty and a restarted simulator — same seed, same writes — never answer a tag seen before.
 * Real HTTP on loopback.
 */
import { strict as assert } from 'node:assert';
import axios from 'axios';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { ifNoneMatchFails, prefersMinimal } from '../../src/sim/amrm-routes';

const http = axios.create({ validateStatus: () => true });
const h = (i: number): string => `node${String(i).padStart(4, '0')}.sim.local`;
const STRONG = /^"[0-9a-f]{16}-\d+"$/;

describe('sim/amrm: the blacklist is versioned by an ETag (If-None-Match → 304)', () => {
  const sims: RunningSimulator[] = [];
  const start = async (): Promise<RunningSimulator> => {
    const sim = await startSimulator({ port: 0, nodes: 8, containers: 4, seed: 3, tickMs: 0 });
    sims.push(sim);
    return sim;
  };
  afterEach(async () => {
    for (const s of sims.splice(0)) await s.close();
  });

  const get = (sim: RunningSimulator, tag?: string) => http.get(`${sim.url}/amrm/v1/blacklist`, { headers: tag ? { 'If-None-Match': tag } : {} });
  const post = (sim: RunningSimulator, body: unknown, minimal = false) => http.post(`${sim.url}/amrm/v1/blacklist`, body, { headers: minimal ? { Prefer: 'return=minimal' } : {} });

  it('GET answers a strong ETag; the same tag in If-None-Match → 304 and no body; another owner\'s write moves it', async () => {
    const sim = await start();
    assert.equal((await post(sim, { blacklistAdditions: [h(1)] })).status, 200);
    const first = await get(sim);
    const tag = first.headers.etag as string;
    assert.match(tag, STRONG);
    assert.equal(first.headers['cache-control'], 'no-cache');
    assert.deepEqual(first.data, { blacklist: [h(1)], owners: { blocklist: [h(1)] } }, 'the body is the list, unchanged in shape');
    const again = await get(sim, tag);
    assert.equal(again.status, 304);
    assert.equal(again.data, '');
    assert.equal(again.headers.etag, tag);
    assert.equal((await get(sim, `"other", W/${tag}`)).status, 304, 'a list, weak comparison');
    assert.equal((await get(sim, '*')).status, 304);
    assert.equal((await get(sim, '"x-1"')).status, 200);
    // Flink's own blocklist (owner "am") writes: the sidecar's tag is stale, its next read is full.
    assert.equal((await http.put(`${sim.url}/sim/v1/blacklist/owners/am`, { hosts: [h(2)] })).status, 200);
    const after = await get(sim, tag);
    assert.equal(after.status, 200);
    assert.notEqual(after.headers.etag, tag);
    assert.deepEqual(after.data.owners, { am: [h(2)], blocklist: [h(1)] });
    const counters = (await http.get(`${sim.url}/sim/v1/counters`)).data;
    assert.equal(counters.blacklistReads, 6);
    assert.equal(counters.blacklistReadsNotModified, 3);
  });

  it('POST names the version it changed and the one it made; an update that changes nothing keeps the tag; refused ones too', async () => {
    const sim = await start();
    const t0 = (await get(sim)).headers.etag as string;
    const full = await post(sim, { blacklistAdditions: [h(1), h(2)] });
    assert.equal(full.status, 200);
    assert.deepEqual(full.data, { blacklist: [h(1), h(2)], owners: { blocklist: [h(1), h(2)] }, etag: full.headers.etag, previousEtag: t0 });
    const t1 = full.headers.etag as string;
    assert.notEqual(t1, t0);
    const minimal = await post(sim, { blacklistRemovals: [h(2)] }, true);
    assert.equal(minimal.headers['preference-applied'], 'return=minimal');
    assert.deepEqual(Object.keys(minimal.data).sort(), ['etag', 'previousEtag']);
    assert.equal(minimal.data.previousEtag, t1);
    const t2 = minimal.data.etag as string;
    const noop = await post(sim, { blacklistAdditions: [h(1)], blacklistRemovals: [h(5)] }, true);
    assert.deepEqual(noop.data, { etag: t2, previousEtag: t2 });
    assert.equal((await post(sim, { blacklistAdditions: ['*'] })).status, 400);
    assert.equal((await get(sim, t2)).status, 304, 'nothing changed');
    // Another owner between two of ours: our next update names a previous version we never read.
    await post(sim, { owner: 'speculation', blacklistAdditions: [h(3)] }, true);
    const ours = await post(sim, { blacklistAdditions: [h(4)] }, true);
    assert.notEqual(ours.data.previousEtag, t2);
  });

  it('a new attempt whose list starts empty moves the tag; a restarted simulator (same seed, same writes) never repeats one', async () => {
    const a = await start();
    await post(a, { blacklistAdditions: [h(1)] });
    const before = (await get(a)).headers.etag as string;
    assert.equal((await http.post(`${a.url}/sim/v1/attempts`, { blacklist: 'empty' })).status, 200);
    const fresh = await get(a, before);
    assert.equal(fresh.status, 200);
    assert.deepEqual(fresh.data, { blacklist: [], owners: {} });
    const seen = new Set([before, fresh.headers.etag as string]);
    await a.close();
    sims.splice(0);
    for (let i = 0; i < 2; i++) {
      const b = await start();
      const t = [(await get(b)).headers.etag as string];
      t.push((await post(b, { blacklistAdditions: [h(1)] }, true)).data.etag as string);
      for (const x of t) {
        assert.ok(!seen.has(x), `tag ${x} was answered before by another simulator`);
        seen.add(x);
      }
      assert.equal((await get(b, before)).status, 200, "an earlier proxy's tag is never current");
    }
  });

  it('If-None-Match and Prefer are read as RFC 9110 and RFC 7240 write them', () => {
    assert.ok(ifNoneMatchFails('"a-1"', '"a-1"'));
    assert.ok(ifNoneMatchFails(' "b" ,W/"a-1"', '"a-1"'));
    assert.ok(ifNoneMatchFails('*', '"a-1"'));
    assert.ok(!ifNoneMatchFails(undefined, '"a-1"'));
    assert.ok(!ifNoneMatchFails('"a-2"', '"a-1"'));
    assert.ok(prefersMinimal('respond-async, return=minimal; x=1'));
    assert.ok(prefersMinimal(['Return = Minimal']));
    assert.ok(!prefersMinimal('return=representation'));
    assert.ok(!prefersMinimal(undefined));
  });
});
