/**
 * End to end on one ZooKeeper : two sidecars for two different Flink
 * applications, each beside its own simulated YARN, share one blocklist.
 *  - a cluster-scoped block written through sidecar A reaches both applications' blacklists
 *    (B learns it through the ZooKeeper watch: polling is set to 30 s so it cannot be the poll);
 *  - a block scoped to application B, written through A, reaches only B;
 *  - 20 concurrent writers merging into the same ids through both sidecars lose no cause and keep
 *    the max end.
 */
import { strict as assert } from 'node:assert';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { ZkCluster, requireZookeeper, zkJobConfig } from '../support/zookeeper';
import { pollUntil } from '../support/wait';
import { http } from '../support/sidecar';
import { ZkSession } from '../../src/store/zookeeper/session';
import { ZkLayout } from '../../src/store/zookeeper/paths';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// Every 5 ms: the propagation figures are these waits' times.
const waitFor = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<number> => pollUntil(what, cond, timeoutMs, 5);

describe('two sidecars of two applications share one ZooKeeper (end to end)', function () {
  this.timeout(40_000);
  let zk: ZkCluster | undefined;
  const sims: RunningSimulator[] = [];
  const sidecars: Sidecar[] = [];

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
    const root = `/e2e${process.pid}`;
    for (const appNumber of [1, 2]) {
      // Same seed and size: both clusters have the same node names, as two jobs on one YARN do.
      const sim = await startSimulator({ port: 0, nodes: 10, containers: 10, seed: 5, tickMs: 0, appNumber });
      sims.push(sim);
      const config = zkJobConfig(zk.connectString(), root, sim, {
        'cluster.resource-blocklist.store.zookeeper.operation-timeout': '3 s',
        'cluster.resource-blocklist.poll-interval': '30 s',
        'cluster.resource-blocklist.max-blocked-fraction': '0.9',
      });
      sidecars.push(await startSidecar({ config, logger: silentLogger, env: {} }));
    }
    assert.notEqual(sims[0].cluster.applicationId, sims[1].cluster.applicationId);
  });

  after(async () => {
    for (const s of sidecars.splice(0)) await s.close().catch(() => undefined);
    for (const s of sims.splice(0)) await s.close().catch(() => undefined);
    await zk?.stop();
  });

  const blacklist = (i: number): string[] => sims[i].cluster.clientBlacklistView();
  const hosts = (): string[] => sims[0].cluster.nodes.map((n) => n.host);

  it('a cluster-scoped block through sidecar A reaches both applications; propagation is measured', async () => {
    const samples: number[] = [];
    const nodes = hosts().slice(0, 5);
    for (const host of nodes) {
      const t0 = performance.now();
      const r = await http(sidecars[0].url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'bad disk', allowMerge: true });
      assert.equal(r.status, 201, r.text);
      await waitFor(`${host} in A's blacklist`, () => blacklist(0).includes(host));
      await waitFor(`${host} in B's blacklist`, () => blacklist(1).includes(host));
      samples.push(performance.now() - t0);
    }
    samples.sort((a, b) => a - b);
    console.log(
      `      PUT through sidecar A → pushed to B's AMRM proxy (via ZooKeeper watch): median ${samples[2].toFixed(1)} ms, max ${samples[4].toFixed(1)} ms over ${samples.length} blocks`,
    );
    // Unblock through B reaches A the same way.
    for (const host of nodes) assert.equal((await http(sidecars[1].url, 'DELETE', `/blocklist/nodes/${host}`)).status, 200);
    await waitFor('both blacklists empty again', () => blacklist(0).length === 0 && blacklist(1).length === 0);
  });

  it('a block scoped to application B, written through A, reaches only B', async () => {
    const host = hosts()[6];
    const appB = sims[1].cluster.applicationId;
    const r = await http(sidecars[0].url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'B only', scope: appB });
    assert.equal(r.status, 201, r.text);
    await waitFor(`${host} in B's blacklist`, () => blacklist(1).includes(host));
    // A has seen the same store change (its watch fired and it reconciled) but must not push it.
    await sleep(300);
    assert.ok(!blacklist(0).includes(host), `A's blacklist has B's node: ${blacklist(0).join(',')}`);
    assert.equal((await http(sidecars[0].url, 'DELETE', `/blocklist/nodes/${host}`)).status, 200);
    await waitFor('B unblocked', () => !blacklist(1).includes(host));
  });

  it('blocks of application A and B on one node merge into one item for both; each job blacklists it', async () => {
    const host = hosts()[5];
    const [appA, appB] = sims.map((x) => x.cluster.applicationId);
    assert.equal((await http(sidecars[0].url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'A: disk', scope: appA })).status, 201);
    const r = await http(sidecars[1].url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'B: disk', scope: appB, allowMerge: true });
    assert.equal(r.status, 202, r.text);
    assert.equal((r.body as { scope: string }).scope, `${appA},${appB}`);
    await waitFor(`${host} in both blacklists`, () => blacklist(0).includes(host) && blacklist(1).includes(host));
    assert.equal((await http(sidecars[0].url, 'DELETE', `/blocklist/nodes/${host}`)).status, 200);
    await waitFor('both unblocked', () => !blacklist(0).includes(host) && !blacklist(1).includes(host));
  });

  it('a corrupt znode is quarantined: the other items stay enforced, /status names it, DELETE removes it', async () => {
    const [good, bad] = [hosts()[3], hosts()[4]];
    for (const h of [good, bad]) assert.equal((await http(sidecars[0].url, 'PUT', `/blocklist/nodes/${h}`, { action: 'MARK_BLOCKED', cause: 'disk' })).status, 201);
    await waitFor('both on both blacklists', () => [good, bad].every((h) => blacklist(0).includes(h) && blacklist(1).includes(h)));
    const raw = new ZkSession({ hosts: zk!.connectString(), sessionTimeoutMs: 10_000, operationTimeoutMs: 3000 });
    try {
      // Written with the marker bump, as a hand edit followed by `set <root>/items ""` would be.
      const layout = new ZkLayout('', `/e2e${process.pid}`);
      await raw.multi([{ op: 'set', path: layout.itemPath(bad), data: Buffer.from('{garbage'), version: -1 }, { op: 'set', path: layout.items, data: Buffer.alloc(0), version: -1 }], 3000);
    } finally {
      await raw.close();
    }
    for (const i of [0, 1]) {
      await waitFor(`sidecar ${i} quarantines it`, async () => {
        const st = (await http(sidecars[i].url, 'GET', '/status')).body as { quarantined?: { id: string }[] };
        return (st.quarantined ?? []).some((q) => q.id === bad);
      });
      await waitFor(`sidecar ${i} still enforces the other item`, () => blacklist(i).includes(good) && !blacklist(i).includes(bad));
    }
    assert.deepEqual(Object.keys((await http(sidecars[1].url, 'GET', '/blocklist')).body as object), [good]);
    assert.equal((await http(sidecars[1].url, 'DELETE', `/blocklist/nodes/${bad}`)).status, 200);
    assert.equal((await http(sidecars[1].url, 'GET', `/blocklist/nodes/${bad}`)).status, 404);
    assert.equal((await http(sidecars[0].url, 'DELETE', `/blocklist/nodes/${good}`)).status, 200);
    await waitFor('both blacklists empty', () => blacklist(0).length === 0 && blacklist(1).length === 0);
  });

  it('20 concurrent writers merging into the same ids through both sidecars: no cause lost, max end kept', async () => {
    const ids = hosts().slice(7, 9);
    const base = Date.now() + 3_600_000;
    const writes = Array.from({ length: 20 }, (_, w) => ({
      sidecar: sidecars[w % 2],
      id: ids[w % ids.length],
      cause: `writer${w}`,
      end: base + w * 1000,
    }));
    const answers = await Promise.all(
      writes.map((x) => http(x.sidecar.url, 'PUT', `/blocklist/nodes/${x.id}`, { action: 'MARK_BLOCKED', endTimestamp: String(x.end), cause: x.cause, allowMerge: true })),
    );
    for (const a of answers) assert.ok(a.status === 201 || a.status === 202, `${a.status} ${a.text}`);
    assert.equal(answers.filter((a) => a.status === 201).length, ids.length, 'exactly one create per id');
    for (const id of ids) {
      const mine = writes.filter((x) => x.id === id);
      for (const s of sidecars) {
        const r = await http(s.url, 'GET', `/blocklist/nodes/${id}`);
        assert.equal(r.status, 200, r.text);
        const body = r.body as { cause: string; endTimestamp: string };
        assert.deepEqual(body.cause.split(',').sort(), mine.map((x) => x.cause).sort(), `${id}: causes`);
        assert.equal(body.endTimestamp, String(Math.max(...mine.map((x) => x.end))), `${id}: end`);
      }
    }
    await waitFor('both applications blacklist the merged ids', () => ids.every((id) => blacklist(0).includes(id) && blacklist(1).includes(id)));
  });
});
