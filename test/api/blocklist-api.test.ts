/**
 * The FLIP-224 REST API over real HTTP on a real SQLite store (FLIP-224: https://cwiki.apache.org/confluence/display/FLINK/FLIP-224%3A+Blocklist+Mechanism).
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { newItem } from '../../src/model/merge';
import { STREAM_ABOVE } from '../../src/api/routes/blocklist';
import { http, startTestSidecar, TestSidecar } from '../support/sidecar';

const MB = 'MARK_BLOCKED';
const EVAC = 'MARK_BLOCKED_AND_EVACUATE_TASKS';
const TM = 'node2/container_e01_1652313600000_0001_01_000002';

type Item = Record<string, unknown> & { cause: string; startTimestamp: string; endTimestamp: string; action: string };

describe('REST API: blocklist endpoints (C1, C2)', () => {
  let s: TestSidecar;
  let clock: FakeClock;
  const call = (method: string, p: string, body?: unknown) => http(s.url, method, p, body);
  const put = (id: string, body: Record<string, unknown>) => call('PUT', `/blocklist/nodes/${id}`, body);

  beforeEach(async () => {
    clock = new FakeClock(1_000_000);
    s = await startTestSidecar({ clock });
  });
  afterEach(() => s.close());

  it('PUT of a new node → 201 with the stored item; GET lists it in the FLIP-224 shape', async () => {
    const r = await put('node1', { action: MB, endTimestamp: '1652317200000', cause: 'Hot machine' });
    assert.equal(r.status, 201);
    const item = r.body as Item;
    assert.equal(item.action, MB);
    assert.equal(item.endTimestamp, '1652317200000');
    assert.equal(item.startTimestamp, '1000000');
    assert.equal(item.cause, 'Hot machine');
    const list = (await call('GET', '/blocklist')).body as Record<string, Item>;
    assert.deepEqual(Object.keys(list), ['node1']);
    assert.deepEqual(list.node1.taskManagers, []);
    for (const k of ['action', 'startTimestamp', 'endTimestamp', 'cause', 'taskManagers']) assert.ok(k in list.node1, k);
  });

  it('PUT of an existing id without merge → 409, stored item unchanged', async () => {
    await put('node1', { action: MB, cause: 'a', timeout: 5000 });
    const v = await s.store.version();
    const r = await put('node1', { action: EVAC, cause: 'b' });
    assert.equal(r.status, 409);
    assert.match((r.body as { errors: string[] }).errors[0], /already blocked.*allowMerge/);
    assert.equal((r.body as { code?: string }).code, 'exists', 'a machine-readable code beside the words');
    const got = (await call('GET', '/blocklist/nodes/node1')).body as Item;
    assert.equal(got.cause, 'a');
    assert.equal(got.action, MB);
    assert.equal(await s.store.version(), v);
  });

  it('PUT with allowMerge → 202 and the merged item (EVACUATE wins, max end, causes joined, start kept)', async () => {
    await put('node1', { action: MB, endTimestamp: 2_000_000, cause: 'a,b' });
    clock.advance(500);
    const r = await put('node1', { action: EVAC, endTimestamp: '3000000', cause: 'c,a', allowMerge: 'true' });
    assert.equal(r.status, 202);
    const m = r.body as Item;
    assert.equal(m.action, EVAC);
    assert.equal(m.endTimestamp, '3000000');
    assert.equal(m.cause, 'a,b,c');
    assert.equal(m.startTimestamp, '1000000');
    const r2 = await put('node1', { action: MB, endTimestamp: 2_500_000, cause: 'a', allowMerge: true });
    assert.equal(r2.status, 202);
    assert.equal((r2.body as Item).endTimestamp, '3000000');
    assert.equal((r2.body as Item).action, EVAC);
  });

  it('equal end, different cause → "old,new", end unchanged (FLIP, not Flink\'s replace)', async () => {
    await put('node3', { action: MB, endTimestamp: 2_000_000, cause: 'cause1' });
    const r = await put('node3', { action: MB, endTimestamp: 2_000_000, cause: 'cause2', allowMerge: true });
    assert.equal((r.body as Item).cause, 'cause1,cause2');
    assert.equal((r.body as Item).endTimestamp, '2000000');
  });

  it('an identical merge changes nothing: same bytes, version unchanged, no kick', async () => {
    await put('node1', { action: MB, endTimestamp: 2_000_000, cause: 'a' });
    const before = (await call('GET', '/blocklist')).text;
    const v = await s.store.version();
    clock.advance(10);
    const r = await put('node1', { action: MB, endTimestamp: 2_000_000, cause: 'a', allowMerge: true });
    assert.equal(r.status, 202);
    assert.equal((await call('GET', '/blocklist')).text, before);
    assert.equal(await s.store.version(), v);
    assert.equal(s.audit.records.at(-1)?.outcome, 'unchanged');
  });

  it('both timeout and endTimestamp → 400, nothing stored', async () => {
    const r = await put('node1', { action: MB, cause: 'x', timeout: 1000, endTimestamp: 5_000_000 });
    assert.equal(r.status, 400);
    assert.match(JSON.stringify(r.body), /either timeout or endTimestamp/);
    assert.equal((await call('GET', '/blocklist/nodes/node1')).status, 404);
  });

  it('neither → permanent, written back as exactly 9223372036854775807', async () => {
    const r = await put('node1', { action: MB, cause: 'forever' });
    assert.match(r.text, /"endTimestamp":"9223372036854775807"/);
    const list = (await call('GET', '/blocklist')).text;
    assert.match(list, /"endTimestamp":"9223372036854775807"/);
    // Sending Long.MAX explicitly (as text or as a JSON number) is the same permanent block.
    const r2 = await put('node2', { action: MB, cause: 'x', endTimestamp: '9223372036854775807' });
    assert.match(r2.text, /"endTimestamp":"9223372036854775807"/);
    const r3 = await call('PUT', '/blocklist/nodes/node3', '{"action":"MARK_BLOCKED","cause":"x","endTimestamp":9223372036854775807}');
    assert.equal(r3.status, 201);
    assert.match(r3.text, /"endTimestamp":"9223372036854775807"/);
  });

  it('timeout=T → endTimestamp = now + T under the injected clock', async () => {
    const r = await put('node1', { action: MB, cause: 'x', timeout: '3600000' });
    assert.equal((r.body as Item).endTimestamp, String(1_000_000 + 3_600_000));
  });

  it('numbers and numeric strings are both accepted; output is always strings', async () => {
    const a = await put('n-a', { action: MB, cause: 'x', endTimestamp: 5_000_000 });
    const b = await put('n-b', { action: MB, cause: 'x', endTimestamp: '5000000' });
    assert.equal((a.body as Item).endTimestamp, '5000000');
    assert.equal((b.body as Item).endTimestamp, '5000000');
  });

  for (const [id, why] of [
    ['*', /ANY|\*/],
    ['node1:8041', /port.*'node1'/],
    ['%20', /not a host name|empty/],
    ['bad%0Ahost', /control characters/],
    ['host%2Fcontainer_x', /contains '\/'/],
  ] as const) {
    it(`node id '${decodeURIComponent(id)}' is refused with a clear 400`, async () => {
      const r = await put(id, { action: MB, cause: 'x' });
      assert.equal(r.status, 400);
      assert.match((r.body as { errors: string[] }).errors.join(' '), why);
      assert.deepEqual((await call('GET', '/blocklist')).body, {});
    });
  }

  it('DELETE → 200 {}, then 404 with an error; /blocklist/node/ spelling works too', async () => {
    await put('node1', { action: MB, cause: 'x' });
    await put('node2', { action: MB, cause: 'x' });
    const d = await call('DELETE', '/blocklist/nodes/node1');
    assert.equal(d.status, 200);
    assert.deepEqual(d.body, {});
    const again = await call('DELETE', '/blocklist/nodes/node1');
    assert.equal(again.status, 404);
    assert.ok((again.body as { errors: string[] }).errors.length);
    assert.equal((await call('DELETE', '/blocklist/node/node2', {})).status, 200);
    assert.deepEqual((await call('GET', '/blocklist')).body, {});
  });

  it('DELETE then PUT is fresh: new start, old cause gone', async () => {
    await put('node1', { action: MB, cause: 'old' });
    await call('DELETE', '/blocklist/nodes/node1');
    clock.advance(5000);
    const r = await put('node1', { action: MB, cause: 'new', allowMerge: true });
    assert.equal(r.status, 201);
    assert.equal((r.body as Item).cause, 'new');
    assert.equal((r.body as Item).startTimestamp, '1005000');
  });

  it('expiry is inclusive: at now == end the item is gone from the API, before the cron job runs', async () => {
    await put('e1', { action: MB, cause: 'x', endTimestamp: 1_001_000 });
    await put('e2', { action: MB, cause: 'x', endTimestamp: 1_002_000 });
    await put('e3', { action: MB, cause: 'x', endTimestamp: 1_003_000 });
    clock.set(1_002_000);
    assert.deepEqual(Object.keys((await call('GET', '/blocklist')).body as object), ['e3']);
    assert.equal((await call('GET', '/blocklist/nodes/e2')).status, 404);
    // still stored until the expiry job deletes it; a new block of the id is fresh, not a merge
    assert.ok(await s.store.get('e2'));
    const r = await put('e2', { action: EVAC, cause: 'new', allowMerge: true, timeout: 1000 });
    assert.equal(r.status, 201);
    assert.equal((r.body as Item).cause, 'new');
  });

  it('an endTimestamp already in the past is refused (400), not accepted and expired later', async () => {
    const r = await put('node1', { action: MB, cause: 'x', endTimestamp: 999_999 });
    assert.equal(r.status, 400);
    assert.match(JSON.stringify(r.body), /not in the future/);
    assert.equal((await put('node1', { action: MB, cause: 'x', endTimestamp: 1_000_000 })).status, 400);
  });

  it('an extended end is honoured', async () => {
    await put('node1', { action: MB, cause: 'x', endTimestamp: 1_002_000 });
    await put('node1', { action: MB, cause: 'x', endTimestamp: 1_009_000, allowMerge: true });
    clock.set(1_003_000);
    assert.equal((await call('GET', '/blocklist/nodes/node1')).status, 200);
  });

  it('task managers: PUT/GET/DELETE with the id\'s slash raw or as %2F; the node itself is not blocked', async () => {
    const r = await call('PUT', `/blocklist/taskmanagers/${TM}`, { action: EVAC, cause: 'bad tm' });
    assert.equal(r.status, 201);
    assert.equal((r.body as Item).kind, 'taskmanager');
    assert.deepEqual((r.body as Item).taskManagers, ['container_e01_1652313600000_0001_01_000002']);
    assert.equal((await call('GET', `/blocklist/taskmanagers/${encodeURIComponent(TM)}`)).status, 200);
    assert.equal((await call('GET', '/blocklist/nodes/node2')).status, 404);
    const bad = await call('PUT', '/blocklist/taskmanagers/node2/container_zzz', { action: MB, cause: 'x' });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /not a YARN container id/);
    assert.equal((await call('DELETE', `/blocklist/taskmanagers/${encodeURIComponent(TM)}`)).status, 200);
  });

  it('filters GET /blocklist by kind, scope and action', async () => {
    await put('n1', { action: MB, cause: 'x' });
    await put('n2', { action: EVAC, cause: 'x', scope: 'application_1652313600000_0001' });
    await call('PUT', `/blocklist/taskmanagers/${TM}`, { action: MB, cause: 'x' });
    const keys = async (q: string) => Object.keys((await call('GET', `/blocklist?${q}`)).body as object).sort();
    assert.deepEqual(await keys('kind=node'), ['n1', 'n2']);
    assert.deepEqual(await keys('kind=taskmanager'), [TM]);
    assert.deepEqual(await keys('scope=application_1652313600000_0001'), ['n2']);
    assert.deepEqual(await keys(`action=${EVAC}`), ['n2']);
    assert.deepEqual(await keys('kind=rack'), [], 'racks are a kind (none blocked here)');
    assert.equal((await call('GET', '/blocklist?kind=host')).status, 400);
  });

  it('merging scopes: app ∪ app = both apps (one string, joined with a comma); no scope keeps it; cluster ∪ app = cluster', async () => {
    await put('n1', { action: MB, cause: 'x', scope: 'application_1652313600000_0001' });
    const c = await put('n1', { action: MB, cause: 'y', scope: 'application_1652313600000_0002', allowMerge: true });
    assert.equal(c.status, 202);
    assert.equal((c.body as Item).scope, 'application_1652313600000_0001,application_1652313600000_0002');
    const kept = await put('n1', { action: MB, cause: 'z', allowMerge: true });
    assert.equal((kept.body as Item).scope, 'application_1652313600000_0001,application_1652313600000_0002', 'a merge that names no scope keeps the stored one');
    const m = await put('n1', { action: MB, cause: 'y', scope: 'cluster', allowMerge: true });
    assert.equal((m.body as Item).scope, 'cluster');
  });

  it('POST /blocklist: ids of both kinds, timeout or endTimestamp, per-item outcomes', async () => {
    await put('node1', { action: MB, cause: 'old' });
    const r = await call('POST', '/blocklist', [
      { id: 'node1', action: EVAC, cause: 'Hot machine', allowMerge: 'true', endTimestamp: '1652317200000' },
      { id: TM, action: EVAC, timeout: '3600000', cause: 'No space left on device' },
      { id: 'node9', action: MB, cause: 'x' },
      { id: 'node9', action: MB, cause: 'dup' },
    ]);
    assert.equal(r.status, 200);
    const res = (r.body as { results: { id: string; status: number; outcome: string }[] }).results;
    assert.deepEqual(res.map((x) => [x.id, x.status, x.outcome]), [
      ['node1', 202, 'merged'],
      [TM, 201, 'created'],
      ['node9', 201, 'created'],
      ['node9', 409, 'conflict'],
    ]);
  });

  it('POST /blocklist is validated whole: one bad item → 400 naming it, nothing written', async () => {
    const v = await s.store.version();
    const r = await call('POST', '/blocklist', [
      { id: 'ok1', action: MB, cause: 'x' },
      { id: '*', action: MB, cause: 'x' },
      { id: 'ok2', action: 'BLOCK_HARD', cause: 'x' },
    ]);
    assert.equal(r.status, 400);
    const errs = (r.body as { errors: string[] }).errors.join('\n');
    assert.match(errs, /ANY/);
    assert.match(errs, /BLOCK_HARD|must be one of/);
    assert.equal(await s.store.version(), v);
    assert.deepEqual((await call('GET', '/blocklist')).body, {});
  });

  it('dry run answers like the real call, with the YARN effect, and writes nothing', async () => {
    const v = await s.store.version();
    const r = await call('PUT', '/blocklist/nodes/node1?dryRun=true', { action: MB, cause: 'x' });
    assert.equal(r.status, 201);
    assert.deepEqual((r.body as { dryRun: unknown }).dryRun, { blacklistAdditions: ['node1'], blacklistRemovals: [], containersToRelease: [], deferred: [] });
    assert.equal(await s.store.version(), v);
    await put('node1', { action: MB, cause: 'x' });
    const d = await call('DELETE', '/blocklist/nodes/node1?dryRun=true');
    assert.equal(d.status, 200);
    assert.deepEqual((d.body as { dryRun: unknown }).dryRun, { blacklistAdditions: [], blacklistRemovals: ['node1'], containersToRelease: [], deferred: [] });
    assert.ok(await s.store.get('node1'));
    assert.equal((await call('PUT', '/blocklist/nodes/node1?dryRun=true', { action: MB, cause: 'y' })).status, 409);
  });

  it('writes an audit record per mutation attempt with who, from, before/after and outcome', async () => {
    await put('node1', { action: MB, cause: 'a' });
    await put('node1', { action: MB, cause: 'b', allowMerge: true });
    await call('DELETE', '/blocklist/nodes/node1');
    await call('DELETE', '/blocklist/nodes/node1');
    assert.deepEqual(s.audit.records.map((r) => [r.op, r.outcome]), [
      ['block', 'created'],
      ['block', 'merged'],
      ['unblock', 'removed'],
      ['unblock', 'not-found'],
    ]);
    const merged = s.audit.records[1];
    assert.equal(merged.before?.cause, 'a');
    assert.equal(merged.after?.cause, 'a,b');
    assert.equal(merged.who, 'anonymous');
    assert.equal(merged.from, '127.0.0.1');
  });

  it('a large GET /blocklist (streamed in slices) is the same JSON map, filters and expiry applied', async function () {
    this.timeout(60_000);
    const n = STREAM_ABOVE + 600;
    const reqs = Array.from({ length: n }, (_, i) =>
      newItem({ id: `big${String(i).padStart(5, '0')}`, kind: 'node', node: `big${String(i).padStart(5, '0')}`, action: MB, end: i % 2 ? { type: 'at', at: 1_000_500 } : { type: 'permanent' }, cause: `c${i}`, scope: 'cluster', allowMerge: false }, 1_000_000, { by: 't', from: 't' }),
    ).map((item) => ({ item, allowMerge: false }));
    await s.store.addMany(reqs);
    const all = (await call('GET', '/blocklist')).body as Record<string, Item>;
    assert.equal(Object.keys(all).length, n);
    assert.equal(all.big00007.cause, 'c7');
    assert.equal(all.big00008.endTimestamp, '9223372036854775807');
    assert.deepEqual(all.big00008.taskManagers, []);
    clock.set(1_000_500);
    const left = (await call('GET', '/blocklist')).body as Record<string, Item>;
    assert.equal(Object.keys(left).length, n / 2);
    assert.ok(Object.keys(left).every((k) => Number(k.slice(3)) % 2 === 0));
  });

  it('POST /blocklist/expire runs one expiry pass: deletes what ended, audits it, idempotent', async () => {
    await put('x1', { action: MB, cause: 'x', endTimestamp: 1_001_000 });
    await put('x2', { action: MB, cause: 'x', endTimestamp: 1_005_000 });
    await put('x3', { action: MB, cause: 'x' });
    clock.set(1_005_000);
    const r = await call('POST', '/blocklist/expire');
    assert.equal(r.status, 200);
    assert.deepEqual((r.body as { removed: Item[] }).removed.map((i) => i.id).sort(), ['x1', 'x2']);
    assert.deepEqual((await s.store.list()).map((i) => i.id), ['x3']);
    assert.deepEqual(s.audit.records.filter((a) => a.op === 'expire').map((a) => a.id).sort(), ['x1', 'x2']);
    assert.deepEqual(((await call('POST', '/blocklist/expire')).body as { removed: Item[] }).removed, []);
  });

  it('/healthz and /readyz answer; unknown endpoints are a 404 in the errors shape', async () => {
    assert.equal((await call('GET', '/healthz')).status, 200);
    assert.equal((await call('GET', '/readyz')).status, 200);
    const r = await call('GET', '/nope');
    assert.equal(r.status, 404);
    assert.ok(Array.isArray((r.body as { errors: string[] }).errors));
  });
});

describe('REST API: cluster.resource-blocklist.enabled=false', () => {
  it('answers mutations with 503 and a message that says how to enable it; changes nothing', async () => {
    const s = await startTestSidecar({ define: { 'cluster.resource-blocklist.enabled': 'false' } });
    try {
      const r = await http(s.url, 'PUT', '/blocklist/nodes/node1', { action: MB, cause: 'x' });
      assert.equal(r.status, 503);
      assert.match(JSON.stringify(r.body), /cluster\.resource-blocklist\.enabled/);
      assert.equal((await http(s.url, 'POST', '/blocklist', [{ id: 'n', action: MB, cause: 'x' }])).status, 503);
      assert.equal((await http(s.url, 'DELETE', '/blocklist/nodes/node1')).status, 503);
      assert.deepEqual((await http(s.url, 'GET', '/blocklist')).body, {});
      assert.equal((await s.store.list()).length, 0);
    } finally {
      await s.close();
    }
  });
});
