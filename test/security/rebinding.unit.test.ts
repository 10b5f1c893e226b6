/**
 * DNS rebinding and cross-origin pages against a sidecar without tokens (app.inject): a Host that
 * is not a loopback name is refused, and so is a mutation a browser sends from another origin;
 * the sidecar's own pages, curl and the CLI go through.
 */
import { strict as assert } from 'node:assert';
import { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';

describe('security: DNS rebinding and cross-origin mutations without tokens', () => {
  let app: FastifyInstance;
  let store: MemoryStore;
  const block = JSON.stringify({ action: 'MARK_BLOCKED', cause: 'disk' });
  const put = (id: string, headers: Record<string, string>) =>
    app.inject({ method: 'PUT', url: `/blocklist/nodes/${id}`, payload: block, headers: { 'content-type': 'application/json', host: '127.0.0.1:8090', ...headers } });

  before(async () => {
    store = new MemoryStore();
    app = await buildApi({ store, sync: new NoSync(true), clock: new FakeClock(1_000_000), logger: silentLogger, audit: new MemoryAudit(), enabled: true });
  });
  after(() => app.close());

  it('Host: attacker.example → 403 for reads and changes, nothing written', async () => {
    const r = await put('n1', { host: 'attacker.example', origin: 'http://attacker.example' });
    assert.equal(r.statusCode, 403, r.body);
    assert.match((r.json() as { errors: string[] }).errors[0], /not a loopback name/);
    assert.equal((await app.inject({ method: 'GET', url: '/blocklist', headers: { host: 'attacker.example:8090' } })).statusCode, 403);
    assert.deepEqual(await store.list(), []);
  });

  it('a change from another origin (another site, another local port, a sandboxed page) → 403; reads stay open', async () => {
    const foreign: Record<string, string>[] = [{ origin: 'http://attacker.example' }, { origin: 'http://127.0.0.1:3000' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }];
    for (const headers of foreign) {
      const r = await put('n1', headers);
      assert.equal(r.statusCode, 403, `${JSON.stringify(headers)}: ${r.body}`);
      assert.match((r.json() as { errors: string[] }).errors[0], /cross-origin change refused/);
    }
    const del = await app.inject({ method: 'DELETE', url: '/blocklist/nodes/n1', headers: { host: 'localhost:8090', origin: 'http://evil.localhost:8090' } });
    assert.equal(del.statusCode, 403, del.body);
    assert.deepEqual(await store.list(), []);
    assert.equal((await app.inject({ method: 'GET', url: '/blocklist', headers: { host: '127.0.0.1:8090', origin: 'http://attacker.example' } })).statusCode, 200);
  });

  it('the same origin (the console), a loopback Host without Origin (curl, the CLI) and [::1] go through', async () => {
    assert.equal((await put('n1', { origin: 'http://127.0.0.1:8090', 'sec-fetch-site': 'same-origin' })).statusCode, 201);
    assert.equal((await put('n2', {})).statusCode, 201);
    assert.equal((await put('n3', { host: '[::1]:8090', origin: 'http://[::1]:8090' })).statusCode, 201);
    assert.equal((await put('n4', { host: 'localhost', 'sec-fetch-site': 'none' })).statusCode, 201);
  });
});
