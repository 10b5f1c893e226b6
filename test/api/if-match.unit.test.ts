/**
 * HTTP If-Match on PUT and DELETE of one item (what the console's confirms and `import --sync`'s
 * lifts send): GET answers the item's version as ETag; a write naming that version lands; one
 * naming an older version, or an item that is gone, is 412 `code: changed` and writes nothing (dry
 * runs included). On a memory store through app.inject.
 */
import { strict as assert } from 'node:assert';
import { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';

describe('api: If-Match on PUT and DELETE of one item', () => {
  let app: FastifyInstance;
  let store: MemoryStore;
  let clock: FakeClock;

  const call = async (method: 'GET' | 'PUT' | 'DELETE', url: string, body?: Record<string, unknown>, ifMatch?: string) => {
    const r = await app.inject({ method, url, ...(body ? { payload: body } : {}), headers: ifMatch ? { 'if-match': ifMatch } : {} });
    return { status: r.statusCode, body: r.json() as Record<string, unknown>, etag: r.headers.etag as string | undefined };
  };

  beforeEach(async () => {
    clock = new FakeClock(1_000_000);
    store = new MemoryStore();
    app = await buildApi({ store, sync: new NoSync(true), clock, logger: silentLogger, audit: new MemoryAudit(), enabled: true });
  });
  afterEach(() => app.close());

  it('GET gives the version; a merge moves it; the old version is refused (412) for PUT and DELETE, dry runs too; the current one lands', async () => {
    assert.equal((await call('PUT', '/blocklist/nodes/n1', { action: 'MARK_BLOCKED', cause: 'disk' })).status, 201);
    const first = await call('GET', '/blocklist/nodes/n1');
    assert.equal(first.etag, `"1000000.1000000"`);

    clock.advance(5);
    const merged = await call('PUT', '/blocklist/nodes/n1', { action: 'MARK_BLOCKED', cause: 'nic', allowMerge: true }, first.etag);
    assert.equal(merged.status, 202, JSON.stringify(merged.body));
    const second = (await call('GET', '/blocklist/nodes/n1')).etag;
    assert.equal(second, `"1000000.1000005"`);

    const version = await store.version();
    for (const q of ['', '?dryRun=true']) {
      const del = await call('DELETE', `/blocklist/nodes/n1${q}`, undefined, first.etag);
      assert.equal(del.status, 412, JSON.stringify(del.body));
      assert.equal(del.body.code, 'changed');
      assert.match(String((del.body.errors as string[])[0]), /'n1' changed since you looked \(last changed by anonymous/);
      const put = await call('PUT', `/blocklist/nodes/n1${q}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'x', allowMerge: true }, first.etag);
      assert.equal(put.status, 412);
      assert.equal(put.body.code, 'changed');
    }
    assert.equal(await store.version(), version, 'nothing written');
    assert.equal((await store.get('n1'))?.cause, 'disk,nic');

    assert.equal((await call('DELETE', '/blocklist/nodes/n1', undefined, second)).status, 200);
    // Gone: an If-Match PUT does not make it again; an If-Match DELETE is 412, not 404.
    const again = await call('PUT', '/blocklist/nodes/n1', { action: 'MARK_BLOCKED', cause: 'disk', allowMerge: true }, second);
    assert.equal(again.status, 412);
    assert.match(String((again.body.errors as string[])[0]), /was unblocked since you looked/);
    assert.equal((await call('DELETE', '/blocklist/nodes/n1', undefined, second)).status, 412);
    assert.equal(await store.get('n1'), undefined);
    // Without If-Match nothing changes from before: 404 for an absent item.
    assert.equal((await call('DELETE', '/blocklist/nodes/n1')).status, 404);
  });
});
