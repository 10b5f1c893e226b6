/**
 * The REST API's answers at the edges of HTTP, on a memory store through app.inject (no socket):
 * what the docs promise for content types, empty bodies, bad URLs, and one item read two ways.
 */
import { strict as assert } from 'node:assert';
import { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';
import { SyncView, emptyView } from '../../src/sync/view';
import { DesiredPlan } from '../../src/sync/desired';
import { BlockedItem } from '../../src/model/item';

/** An engine's view in which node n1 is on YARN's blacklist and evacuating with a 2.5 s timeout (a default in ms). */
class EvacuatingSync extends NoSync {
  override view(): SyncView {
    const n1 = { id: 'n1', kind: 'node', node: 'n1' } as BlockedItem;
    const evacuation = { itemId: 'n1', node: 'n1', action: 'MARK_BLOCKED_AND_EVACUATE_TASKS' as const, phase: 'WAIT_CONTAINER' as const, since: 1_000_000, timeoutSeconds: 2.5, deadline: 1_002_500, remainingSeconds: 2, containers: ['c1'], released: [] };
    return { ...emptyView(true, true), plan: { enforced: [n1], deferred: [], taskManagers: [], capacity: 1, capUsed: 1, slotHolders: new Set(['n1']), runningHosts: undefined } as unknown as DesiredPlan, actual: new Set(['n1']), evacuations: new Map([['n1', evacuation]]) };
  }
}

describe('api: HTTP edges (app.inject)', () => {
  let app: FastifyInstance;
  const block = JSON.stringify({ action: 'MARK_BLOCKED', cause: 'disk' });

  before(async () => {
    app = await buildApi({ store: new MemoryStore(), sync: new EvacuatingSync(true), clock: new FakeClock(1_000_000), logger: silentLogger, audit: new MemoryAudit(), enabled: true });
  });
  after(() => app.close());

  it('a DELETE labelled application/json with an empty body is accepted', async () => {
    assert.equal((await app.inject({ method: 'PUT', url: '/blocklist/nodes/n1', payload: block, headers: { 'content-type': 'application/json' } })).statusCode, 201);
    const r = await app.inject({ method: 'DELETE', url: '/blocklist/nodes/n1', headers: { 'content-type': 'application/json' } });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json(), {});
  });

  it('Content-Type text/plain → 415 with {errors}, as the docs say', async () => {
    const r = await app.inject({ method: 'PUT', url: '/blocklist/nodes/n1', payload: block, headers: { 'content-type': 'text/plain' } });
    assert.equal(r.statusCode, 415, r.body);
    assert.match((r.json() as { errors: string[] }).errors[0], /unsupported content type 'text\/plain'; send application\/json/);
  });

  it('a bad percent-encoding in the path → 400 with {errors}, not Fastify\'s own body', async () => {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const r = await app.inject({ method, url: '/blocklist/nodes/a%ZZb', ...(method === 'PUT' ? { payload: block, headers: { 'content-type': 'application/json' } } : {}) });
      assert.equal(r.statusCode, 400, `${method}: ${r.body}`);
      const body = r.json() as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), ['errors'], r.body);
      assert.match((body.errors as string[])[0], /percent-encoding/);
    }
  });

  it('GET /blocklist and GET /blocklist/nodes/{id} show the same timeoutSeconds (2.5, not 2)', async () => {
    await app.inject({ method: 'PUT', url: '/blocklist/nodes/n1', payload: block, headers: { 'content-type': 'application/json' } });
    type WithSync = { sync: { evacuation: { timeoutSeconds: number } } };
    const list = (await app.inject({ method: 'GET', url: '/blocklist' })).json() as Record<string, WithSync>;
    const one = (await app.inject({ method: 'GET', url: '/blocklist/nodes/n1' })).json() as WithSync;
    assert.equal(list.n1.sync.evacuation.timeoutSeconds, 2.5);
    assert.equal(one.sync.evacuation.timeoutSeconds, 2.5);
  });
});
