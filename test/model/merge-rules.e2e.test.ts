/**
 * The merge rules end to end (causes kept and bounded, no-op merges, scopes united): real HTTP into a real sidecar on a real SQLite file.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { createAuditSink } from '../../src/log/audit';
import { newItem } from '../../src/model/merge';
import { MERGED_CAUSE_MAX } from '../../src/model/cause';
import { http, startTestSidecar, TestSidecar } from '../support/sidecar';

const MB = 'MARK_BLOCKED';
const A1 = 'application_1652313600000_0001';
const A2 = 'application_1652313600000_0002';
type Item = { cause: string; scope: string; endTimestamp: string; updatedAt: string };

describe('merge rules through the REST API', () => {
  let s: TestSidecar;
  let clock: FakeClock;
  const call = (method: string, p: string, body?: unknown) => http(s.url, method, p, body);
  const put = (id: string, body: unknown) => call('PUT', `/blocklist/nodes/${id}`, body);

  beforeEach(async () => {
    clock = new FakeClock(1_000_000);
    s = await startTestSidecar({ clock });
  });
  afterEach(() => s.close());

  it('a cause the item holds changes nothing: byte-identical text, same updatedAt, no merged audit line, store not written, 202', async () => {
    const disk = 'No space left on device, /data1 full';
    assert.equal((await put('node1', { action: MB, cause: disk })).status, 201);
    const before = (await call('GET', '/blocklist/nodes/node1')).body as Item;
    const version = await s.store.version();
    clock.advance(60_000);
    for (const cause of [disk, ' /data1 full, No space left on device ']) {
      const r = await put('node1', { action: MB, cause, allowMerge: true });
      assert.equal(r.status, 202);
      assert.equal((r.body as Item).cause, disk);
      assert.equal((r.body as Item).updatedAt, before.updatedAt);
    }
    assert.equal(await s.store.version(), version, 'nothing was written (so no watcher or sync pass is woken)');
    assert.deepEqual(s.audit.records.map((r) => r.outcome), ['created', 'unchanged', 'unchanged']);
    const batch = (await call('POST', '/blocklist', [{ id: 'node1', action: MB, cause: disk, allowMerge: true }])).body as { results: { status: number; outcome: string }[] };
    assert.deepEqual(batch.results.map((r) => [r.status, r.outcome]), [[202, 'unchanged']]);
  });

  it('200 merges of 1 KB causes: the cause stays within 4,096 characters, each audit line keeps its own cause and is bounded', async () => {
    const auditFile = path.join(s.dir, 'audit.jsonl');
    const sink = createAuditSink(silentLogger, auditFile, () => clock.now());
    const n = 200;
    const body = Array.from({ length: n }, (_, i) => ({ id: 'hot', action: MB, cause: `merge ${i} ${'x'.repeat(1000)}`, allowMerge: true }));
    const r = await call('POST', '/blocklist', body);
    assert.equal(r.status, 200);
    const item = (await call('GET', '/blocklist/nodes/hot')).body as Item;
    assert.ok(item.cause.length <= MERGED_CAUSE_MAX, `cause of ${item.cause.length} characters`);
    assert.match(item.cause, /,…\(\+\d+ more\)$/);
    const merges = s.audit.records.filter((x) => x.outcome === 'merged');
    assert.equal(merges.length, n - 1);
    merges.forEach((m, i) => assert.equal(m.cause, body[i + 1].cause, `merge ${i + 1} keeps its own cause`));
    for (const rec of s.audit.records) sink.record(rec);
    const longest = Math.max(...fs.readFileSync(auditFile, 'utf8').trim().split('\n').map((l) => l.length));
    assert.ok(longest < 3 * MERGED_CAUSE_MAX + 4096, `longest audit line ${longest} characters`);
  });

  it('a merge whose result would have no cause is a 400 and changes nothing', async () => {
    // A cause with no text can only be in the store from before the check (written directly here).
    await s.store.add({ item: { ...newItem({ id: 'node1', kind: 'node', node: 'node1', action: MB, end: { type: 'permanent' }, cause: 'x', scope: 'cluster', allowMerge: false }, clock.now(), { by: 't', from: 't' }), cause: ',' }, allowMerge: false });
    const version = await s.store.version();
    const r = await put('node1', { action: MB, cause: ' , ', allowMerge: true, timeout: 1000 });
    assert.equal(r.status, 400);
    assert.match(JSON.stringify(r.body), /cause/);
    assert.equal(await s.store.version(), version);
    assert.equal((await put('node2', { action: MB, cause: ',' })).status, 400, 'nor can such a block be created');
  });

  it('blocks of two applications on one node merge into one item whose scope covers both; every reader sees it', async () => {
    assert.equal((await put('node1', { action: MB, cause: 'disk', scope: A1 })).status, 201);
    const r = await put('node1', { action: MB, cause: 'nic', scope: A2, allowMerge: true });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((r.body as Item).scope, `${A1},${A2}`);
    for (const q of [A1, A2]) assert.deepEqual(Object.keys((await call('GET', `/blocklist?scope=${q}`)).body as object), ['node1'], q);
    assert.deepEqual(Object.keys((await call('GET', '/blocklist?scope=cluster')).body as object), []);
    // The scope as GET writes it goes back in as it is (a client extending the block), three jobs long.
    const A3 = 'application_1652313600000_0003';
    const three = await put('node1', { action: MB, cause: 'nic', scope: `${A1},${A2},${A3}`, allowMerge: true });
    assert.equal(three.status, 202, three.text);
    assert.equal((three.body as Item).scope, `${A1},${A2},${A3}`);
    const kept = await put('node1', { action: MB, cause: 'all', allowMerge: true });
    assert.equal((kept.body as Item).scope, `${A1},${A2},${A3}`, 'no scope named: the stored one stays');
    const c = await put('node1', { action: MB, cause: 'all', scope: 'cluster', allowMerge: true });
    assert.equal((c.body as Item).scope, 'cluster');
  });

  it('endTimestamp: only the exact 9223372036854775807 (number or string) is permanent; 1e300 and 2^64 are 400', async () => {
    const raw = (id: string, end: string) =>
      http(s.url, 'PUT', `/blocklist/nodes/${id}`, `{"action":"MARK_BLOCKED","cause":"x","endTimestamp":${end}}`, { 'content-type': 'application/json' });
    for (const [id, end] of [['n1', '9223372036854775807'], ['n2', '"9223372036854775807"']]) {
      const r = await raw(id, end);
      assert.equal(r.status, 201, r.text);
      assert.equal((r.body as Item).endTimestamp, '9223372036854775807');
    }
    for (const end of ['1e300', '18446744073709551616', '9223372036854775808', '9.223372036854775807e18', '"1e300"']) {
      const r = await raw('n3', end);
      assert.equal(r.status, 400, `${end}: ${r.text}`);
      assert.match(r.text, /endTimestamp/);
    }
    assert.equal((await call('GET', '/blocklist/nodes/n3')).status, 404);
  });

  it('DELETE of an item past its end that expiry has not purged yet: 404, not deleted, no removed audit line', async () => {
    assert.equal((await put('node1', { action: MB, cause: 'x', timeout: 1000 })).status, 201);
    clock.advance(1000);
    const r = await call('DELETE', '/blocklist/nodes/node1');
    assert.equal(r.status, 404);
    assert.ok(await s.store.get('node1'), 'left for the expiry job');
    assert.ok(!s.audit.records.some((x) => x.outcome === 'removed'));
    const again = await call('DELETE', '/blocklist/nodes/node1?dryRun=true');
    assert.equal(again.status, 404);
  });
});
