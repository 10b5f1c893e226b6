/**
 * A single PUT says what it did in an `outcome` field, as each result of a batch does: 201 is
 * always `created`, but 202 is either a merge or a request that changed nothing, and only the
 * field tells them apart. On a memory store through app.inject (no socket).
 */
import { strict as assert } from 'node:assert';
import Ajv from 'ajv';
import { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';

/** Counts kicks: a PUT that changed nothing must not start a pass. */
class CountingSync extends NoSync {
  kicks: string[] = [];
  override kick(why?: string): void {
    this.kicks.push(why ?? '');
  }
}

type Answer = { status: number; body: Record<string, unknown> };

describe('api: PUT answers its outcome (created | merged | unchanged)', () => {
  let app: FastifyInstance;
  let store: MemoryStore;
  let sync: CountingSync;
  let clock: FakeClock;

  const put = async (path: string, body: Record<string, unknown>, query = ''): Promise<Answer> => {
    const r = await app.inject({ method: 'PUT', url: `/blocklist/${path}${query}`, payload: body });
    return { status: r.statusCode, body: r.json() as Record<string, unknown> };
  };

  beforeEach(async () => {
    clock = new FakeClock(1_000_000);
    store = new MemoryStore();
    sync = new CountingSync(true);
    app = await buildApi({ store, sync, clock, logger: silentLogger, audit: new MemoryAudit(), enabled: true });
  });
  afterEach(() => app.close());

  for (const path of ['nodes/n1', 'taskmanagers/n1/container_e01_1652313600000_0001_01_000002', 'racks/%2Frack-a']) {
    it(`${path.split('/')[0]}: 201 created, 202 merged, 202 unchanged, each said in the body`, async () => {
      const created = await put(path, { action: 'MARK_BLOCKED', endTimestamp: 2_000_000, cause: 'disk' });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.outcome, 'created');

      clock.advance(10);
      const merged = await put(path, { action: 'MARK_BLOCKED', endTimestamp: 3_000_000, cause: 'nic', allowMerge: true });
      assert.equal(merged.status, 202);
      assert.equal(merged.body.outcome, 'merged');
      assert.equal(merged.body.cause, 'disk,nic');

      // The same cause and an end already covered: a merge that adds nothing.
      const version = await store.version();
      const kicks = sync.kicks.length;
      clock.advance(10);
      const same = await put(path, { action: 'MARK_BLOCKED', endTimestamp: 2_500_000, cause: 'disk', allowMerge: true });
      assert.equal(same.status, 202, 'the status stays 202, as for a merge');
      assert.equal(same.body.outcome, 'unchanged');
      assert.equal(same.body.updatedAt, merged.body.updatedAt, 'the item as stored, not rewritten');
      assert.equal(same.body.endTimestamp, '3000000');
      assert.equal(await store.version(), version, 'nothing written');
      assert.equal(sync.kicks.length, kicks, 'no pass started');
    });
  }

  it('a dry run says what the PUT would do, and writes nothing', async () => {
    const wouldCreate = await put('nodes/n2', { action: 'MARK_BLOCKED', cause: 'disk' }, '?dryRun=true');
    assert.equal(wouldCreate.status, 201);
    assert.equal(wouldCreate.body.outcome, 'created');
    assert.ok(wouldCreate.body.dryRun, 'the dry run effect is still there');
    assert.equal(await store.get('n2'), undefined);

    await put('nodes/n2', { action: 'MARK_BLOCKED', cause: 'disk' });
    const wouldMerge = await put('nodes/n2', { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'disk', allowMerge: true }, '?dryRun=true');
    assert.deepEqual([wouldMerge.status, wouldMerge.body.outcome], [202, 'merged']);
    const wouldNothing = await put('nodes/n2', { action: 'MARK_BLOCKED', cause: 'disk', allowMerge: true }, '?dryRun=true');
    assert.deepEqual([wouldNothing.status, wouldNothing.body.outcome], [202, 'unchanged']);
    assert.equal((await store.get('n2'))?.action, 'MARK_BLOCKED');
    // No engine reads containers here: an evacuation's dry run says it cannot tell its releases.
    const evac = await put('nodes/n9', { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'disk' }, '?dryRun=true');
    assert.match(String((evac.body.dryRun as Record<string, unknown>).containersUnknown), /no sync engine runs/);
    assert.equal((wouldCreate.body.dryRun as Record<string, unknown>).containersUnknown, undefined, 'a MARK_BLOCKED releases nothing: nothing unknown');
  });

  it("a merge that names no scope (FLIP-224's body has none) keeps the stored scope; one that names a scope unites them", async () => {
    const app1 = 'application_1652313600000_0002';
    const app2 = 'application_1652313600000_0003';
    await put('nodes/n6', { action: 'MARK_BLOCKED', cause: 'disk', scope: app1 });
    const flip = await put('nodes/n6', { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'disk errors', allowMerge: 'true' });
    assert.deepEqual([flip.status, flip.body.outcome, flip.body.scope], [202, 'merged', app1]);
    assert.equal((await store.get('n6'))?.scope, app1, 'one job\'s block stays that job\'s');
    const batch = await app.inject({ method: 'POST', url: '/blocklist', payload: [{ id: 'n6', action: 'MARK_BLOCKED', cause: 'fan', allowMerge: true }] });
    assert.equal((batch.json() as { results: { item: { scope: string } }[] }).results[0].item.scope, app1, 'the batch keeps it too');
    const both = await put('nodes/n6', { action: 'MARK_BLOCKED', cause: 'psu', allowMerge: true, scope: app2 });
    assert.equal(both.body.scope, `${app1},${app2}`);
    const cluster = await put('nodes/n6', { action: 'MARK_BLOCKED', cause: 'psu', allowMerge: true, scope: 'cluster' });
    assert.equal(cluster.body.scope, 'cluster', 'naming cluster still widens it: the caller said so');
    // A new block without a scope is cluster-wide, as before.
    assert.equal((await put('nodes/n7', { action: 'MARK_BLOCKED', cause: 'disk' })).body.scope, 'cluster');
  });

  it('a refusal answers errors and code, no outcome', async () => {
    await put('nodes/n3', { action: 'MARK_BLOCKED', cause: 'disk' });
    const r = await put('nodes/n3', { action: 'MARK_BLOCKED', cause: 'disk' });
    assert.equal(r.status, 409);
    assert.equal(r.body.code, 'exists');
    assert.ok(!('outcome' in r.body), JSON.stringify(r.body));
  });

  it('PUT and POST /blocklist say the same outcome for the same request', async () => {
    const body = { action: 'MARK_BLOCKED', endTimestamp: 2_000_000, cause: 'disk' };
    await put('nodes/a', body);
    await put('nodes/b', body);
    const single = await put('nodes/a', { ...body, allowMerge: true });
    const batch = await app.inject({ method: 'POST', url: '/blocklist', payload: [{ id: 'b', ...body, allowMerge: true }] });
    const [result] = (batch.json() as { results: { status: number; outcome: string }[] }).results;
    assert.deepEqual([single.status, single.body.outcome], [result.status, result.outcome]);
    assert.equal(result.outcome, 'unchanged');
  });

  it('the outcome is part of the PUT answer only: GET and the listing show the item as stored', async () => {
    await put('nodes/n4', { action: 'MARK_BLOCKED', cause: 'disk' });
    const one = (await app.inject({ method: 'GET', url: '/blocklist/nodes/n4' })).json() as Record<string, unknown>;
    assert.ok(!('outcome' in one));
    const list = (await app.inject({ method: 'GET', url: '/blocklist' })).json() as Record<string, Record<string, unknown>>;
    assert.ok(!('outcome' in list.n4));
  });

  it('OpenAPI documents the field with its three values, and real answers match the schema', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> } };
    assert.deepEqual(doc.components.schemas.mutationItem.properties.outcome.enum, ['created', 'merged', 'unchanged']);
    const ajv = new Ajv({ strict: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
    const check = ajv.compile({ allOf: [{ $ref: '#/components/schemas/mutationItem' }, { required: ['outcome'] }] });
    const answers = [
      await put('nodes/n5', { action: 'MARK_BLOCKED', cause: 'disk' }),
      await put('nodes/n5', { action: 'MARK_BLOCKED', cause: 'nic', allowMerge: true }),
      await put('nodes/n5', { action: 'MARK_BLOCKED', cause: 'nic', allowMerge: true }),
    ];
    assert.deepEqual(answers.map((a) => a.body.outcome), ['created', 'merged', 'unchanged']);
    for (const a of answers) assert.ok(check(a.body), JSON.stringify(check.errors));
    assert.equal(check({ ...answers[0].body, outcome: 'conflict' }), false, 'the schema can refuse a wrong outcome');
  });
});
