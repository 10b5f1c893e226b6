/**
 * A corrupt row (`update items set data='{garbage'` in the SQLite file) and a restart: the row is
 * quarantined — left out, named in a log line, /status and a metric — while every other item is
 * enforced on YARN; /readyz is ready; DELETE, `blocklist unblock` and `blocklist unblock --store`
 * remove it.
 */
import { strict as assert } from 'node:assert';
import Database from 'better-sqlite3';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { http as request } from '../support/sidecar';
import { startYarnSidecar, waitFor, YarnSidecar } from './support';
import { expectCode, runCli } from '../cli/run';
import { count, printFigures } from '../fuzz/figures';

const sorted = (a: readonly string[]) => [...a].sort();

describe('faults: a corrupt row in the store', function () {
  this.timeout(40_000);
  let sim: RunningSimulator;
  let s: YarnSidecar | undefined;

  beforeEach(async () => {
    sim = await startSimulator({ port: 0, nodes: 8, containers: 8, tickMs: 0, seed: 5 });
  });
  afterEach(async () => {
    await s?.close();
    s = undefined;
    await sim.close();
  });
  after(() => printFigures('corrupt rows', ['corrupt rows injected']));

  const host = (i: number) => sim.cluster.nodes[i].host;
  const onYarn = () => sorted(sim.cluster.clientBlacklistView());
  const start = (dir?: string) => startYarnSidecar({ rm: sim.url, proxy: sim.url, ...(dir ? { dir } : {}) });

  it('is quarantined after a restart: every other item enforced, /readyz ready, /status and the metric name it; DELETE and blocklist unblock remove it', async () => {
    s = await start();
    const dir = s.dir;
    const db = s.db;
    const blocked = [1, 2, 3, 4].map(host);
    for (const h of blocked) assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${h}`, { action: 'MARK_BLOCKED', cause: 'disk' })).status, 201);
    await waitFor('all four on YARN', () => JSON.stringify(onYarn()) === JSON.stringify(sorted(blocked)));
    await s.close();

    const raw = new Database(db);
    for (const h of [host(2), host(4)]) raw.prepare("update items set data='{garbage' where id=?").run(h);
    raw.close();
    count('corrupt rows injected', 2);

    s = await start(dir);
    const url = s.url;
    const healthy = sorted([host(1), host(3)]);
    const list = await request(url, 'GET', '/blocklist');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(sorted(Object.keys(list.body as object)), healthy);
    await waitFor('/readyz ready', async () => (await request(url, 'GET', '/readyz')).status === 200);
    await waitFor('the healthy items are enforced', () => JSON.stringify(onYarn()) === JSON.stringify(healthy));

    const status = (await request(url, 'GET', '/status')).body as { quarantined: { id: string; reason: string }[] };
    assert.deepEqual(status.quarantined.map((q) => q.id), sorted([host(2), host(4)]));
    assert.match(status.quarantined[0].reason, /cannot be decoded/);
    const metric = async () => Number(/^blocklist_quarantined_items (\d+)/m.exec((await request(url, 'GET', '/metrics')).text)?.[1]);
    assert.equal(await metric(), 2);

    const one = await request(url, 'GET', `/blocklist/nodes/${host(2)}`);
    assert.equal(one.status, 409);
    assert.equal((one.body as { code: string }).code, 'quarantined');
    const put = await request(url, 'PUT', `/blocklist/nodes/${host(2)}`, { action: 'MARK_BLOCKED', cause: 'again', allowMerge: true });
    assert.equal(put.status, 409, 'a merge into it is refused, the stored text left alone');

    // DELETE through the API…
    assert.equal((await request(url, 'DELETE', `/blocklist/nodes/${host(2)}?dryRun=true`)).status, 200);
    const del = await request(url, 'DELETE', `/blocklist/nodes/${host(2)}`);
    assert.equal(del.status, 200, del.text);
    assert.ok(s.audit.records.some((r) => r.id === host(2) && r.outcome === 'removed-quarantined'));
    // …and the CLI against the sidecar.
    expectCode(await runCli(['unblock', host(4)], { env: { BLOCKLIST_SERVER: url } }), 0, 'blocklist unblock of a quarantined item');
    assert.deepEqual(((await request(url, 'GET', '/status')).body as { quarantined: unknown[] }).quarantined, []);
    assert.equal(await metric(), 0);
    assert.equal((await request(url, 'GET', `/blocklist/nodes/${host(4)}`)).status, 404);
    assert.equal((await request(url, 'PUT', `/blocklist/nodes/${host(4)}`, { action: 'MARK_BLOCKED', cause: 'fresh' })).status, 201);
    await waitFor('a new block of the id is enforced', () => onYarn().includes(host(4)));
  });

  it("rows that decode but hold what the API refuses (node '*', host:8041, an id naming another node) are quarantined; every other item is enforced", async () => {
    s = await start();
    const dir = s.dir;
    const db = s.db;
    const healthy = [host(1), host(3)];
    for (const h of [...healthy, host(2)]) assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${h}`, { action: 'MARK_BLOCKED', cause: 'disk' })).status, 201);
    await waitFor('all three on YARN', () => onYarn().length === 3);
    await s.close();

    // As an older version, a hand edit or another tool would leave them: valid JSON of the codec.
    const raw = new Database(db);
    const row = raw.prepare('select data from items where id=?').get(host(1)) as { data: string };
    const as = (id: string, node = id) => JSON.stringify({ ...JSON.parse(row.data), id, node });
    const insert = raw.prepare('INSERT INTO items(id, end_ts, data) VALUES (?, NULL, ?)');
    insert.run('*', as('*'));
    insert.run(`${host(5)}:8041`, as(`${host(5)}:8041`));
    raw.prepare('update items set data=? where id=?').run(as(host(2), host(6)), host(2));
    raw.close();
    count('corrupt rows injected', 3);

    s = await start(dir);
    const url = s.url;
    await waitFor('/readyz ready', async () => (await request(url, 'GET', '/readyz')).status === 200);
    await waitFor('the healthy items are enforced, nothing else', () => JSON.stringify(onYarn()) === JSON.stringify(sorted(healthy)));
    const status = (await request(url, 'GET', '/status')).body as { quarantined: { id: string; reason: string }[] };
    assert.deepEqual(status.quarantined.map((q) => q.id), sorted(['*', `${host(5)}:8041`, host(2)]));
    assert.match(status.quarantined.find((q) => q.id === '*')!.reason, /YARN's ANY/);
    assert.match(status.quarantined.find((q) => q.id === host(2))!.reason, new RegExp(`node '${host(6)}' is not the node of id`));
    assert.equal((await request(url, 'DELETE', `/blocklist/nodes/${encodeURIComponent('*')}`)).status, 200, 'an operator removes it as any quarantined row');
    assert.ok(s.audit.records.some((r) => r.id === '*' && r.outcome === 'removed-quarantined'));
    // The CLI sends such an id as typed (before: refused locally, 'use DELETE'); one that is no
    // quarantined row is refused before any other id of the command is removed.
    const env = { env: { BLOCKLIST_SERVER: url } };
    const refused = expectCode(await runCli(['unblock', '*', host(3)], env), 2, "unblock of '*' once it is gone");
    assert.match(refused.stderr, /YARN's ANY .*, and no quarantined row has that id/);
    assert.equal((await request(url, 'GET', `/blocklist/nodes/${host(3)}`)).status, 200, 'the other id of the command is still blocked');
    expectCode(await runCli(['unblock', `${host(5)}:8041`], env), 0, 'blocklist unblock of a quarantined host:port row');
    const left = (await request(url, 'GET', '/status')).body as { quarantined: { id: string }[] };
    assert.deepEqual(left.quarantined.map((q) => q.id), [host(2)]);
  });

  it('blocklist unblock --store removes a corrupt row from a store file without a sidecar', async () => {
    s = await start();
    const db = s.db;
    assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(1)}`, { action: 'MARK_BLOCKED', cause: 'disk' })).status, 201);
    assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(2)}`, { action: 'MARK_BLOCKED', cause: 'disk' })).status, 201);
    await s.close();
    s = undefined;
    const raw = new Database(db);
    raw.prepare("update items set data='{garbage' where id=?").run(host(1));
    const two = raw.prepare('select data from items where id=?').get(host(2)) as { data: string };
    raw.prepare('INSERT INTO items(id, end_ts, data) VALUES (?, NULL, ?)').run('*', JSON.stringify({ ...JSON.parse(two.data), id: '*', node: '*' }));
    raw.close();
    count('corrupt rows injected', 2);
    const list = expectCode(await runCli(['list', '-o', 'name', '--store', `sqlite:${db}`]), 0, 'list --store');
    assert.deepEqual(list.stdout.trim().split('\n'), [host(2)]);
    expectCode(await runCli(['unblock', host(1), '--store', `sqlite:${db}`]), 0, 'unblock --store of a quarantined item');
    // A store just opened has read no rows yet: the CLI reads them before it names a '*' row.
    expectCode(await runCli(['unblock', '*', '--store', `sqlite:${db}`]), 0, "unblock --store of a quarantined '*' row");
    const check = new Database(db, { readonly: true });
    assert.deepEqual(check.prepare('select id from items order by id').all(), [{ id: host(2) }]);
    check.close();
  });
});
