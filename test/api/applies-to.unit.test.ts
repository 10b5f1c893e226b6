/** GET /blocklist?appliesTo=<app>: every item that applies to that application now (app.inject, memory store). */
import { strict as assert } from 'node:assert';
import { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';

const A = 'application_1652313600000_0001';
const B = 'application_1652313600000_0002';

describe('api: GET /blocklist?appliesTo= (the job\'s own view)', () => {
  let app: FastifyInstance;
  before(async () => {
    app = await buildApi({ store: new MemoryStore(), sync: new NoSync(true), clock: new FakeClock(1_652_313_600_000), logger: silentLogger, audit: new MemoryAudit(), enabled: true });
    const put = (id: string, scope: string) => app.inject({ method: 'PUT', url: `/blocklist/nodes/${id}`, payload: { action: 'MARK_BLOCKED', cause: 'c', scope } });
    for (const [id, scope] of [['all', 'cluster'], ['onlyA', A], ['both', `${A},${B}`], ['onlyB', B]]) assert.equal((await put(id, scope)).statusCode, 201);
  });
  after(() => app.close());

  const ids = async (q: string) => Object.keys((await app.inject({ method: 'GET', url: `/blocklist?${q}` })).json() as object).sort();

  it('cluster items, its own and shared ones; not another job\'s; ?scope= still names only the scope', async () => {
    assert.deepEqual(await ids(`appliesTo=${A}`), ['all', 'both', 'onlyA']);
    assert.deepEqual(await ids(`appliesTo=${B}`), ['all', 'both', 'onlyB']);
    assert.deepEqual(await ids(`scope=${A}`), ['both', 'onlyA']);
    assert.deepEqual(await ids(`appliesTo=${A}&limit=2`), ['all', 'both'], 'pages filter the same way');
  });

  it('a value that is not an application id is a 400 naming the parameter', async () => {
    const r = await app.inject({ method: 'GET', url: '/blocklist?appliesTo=cluster' });
    assert.equal(r.statusCode, 400);
    assert.match(r.body, /appliesTo: 'cluster' is not a YARN application id/);
  });
});
