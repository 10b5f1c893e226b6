/**
 * Other writers on the sidecar's SQLite file while the sidecar is under write load: the
 * `blocklist` CLI with `--store sqlite:FILE` (another process, its own connection) blocks,
 * merges into an item the API writers are extending at the same moment, and unblocks. The
 * sidecar writes on its write thread and reads (its list cache) on its main connection: another
 * process's commit must still move the version it polls, be read, and reach YARN. And on the AM's
 * blacklist, Flink's own entries (another owner) across an AM failover in the middle of the stream.
 */
import { strict as assert } from 'node:assert';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { http as request } from '../support/sidecar';
import { startYarnSidecar, waitFor, YarnSidecar } from './support';
import { expectCode, runCli } from '../cli/run';
import { count, printFigures } from '../fuzz/figures';

const sorted = (a: readonly string[]) => [...a].sort();

/**
 * Four API writers, under way until `stop()`: each creates its share of `hosts` (and every host of
 * `inEveryShare`), then keeps extending them with a later end, so every write is a commit that
 * moves the store's version. Every write must be acknowledged (201 or 202).
 */
function extendingWriters(url: string, hosts: readonly string[], inEveryShare: readonly string[] = []) {
  const base = Date.now() + 3_600_000;
  let stopped = false;
  let writes = 0;
  const acked = new Set<string>();
  const done = Promise.all(
    [0, 1, 2, 3].map(async (w) => {
      const mine = [...hosts.filter((_, i) => i % 4 === w), ...inEveryShare];
      for (let round = 0; !stopped; round++) {
        for (const h of mine) {
          const r = await request(url, 'PUT', `/blocklist/nodes/${h}`, { action: 'MARK_BLOCKED', cause: 'load', endTimestamp: base + round * 1000 + w, allowMerge: true });
          assert.ok(r.status === 201 || r.status === 202, `${h}: ${r.status} ${r.text}`);
          acked.add(h);
          writes++;
        }
      }
    }),
  );
  return {
    /** The hosts whose write was acknowledged at least once. */
    acked: acked as ReadonlySet<string>,
    writes: () => writes,
    /** Lets each writer finish its write in flight; rejects with a writer's failed assertion. */
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

describe('faults: other writers beside a sidecar under write load (the CLI on its store file, Flink on the AM blacklist)', function () {
  this.timeout(40_000);
  let sim: RunningSimulator;
  let s: YarnSidecar | undefined;

  beforeEach(async () => {
    sim = await startSimulator({ port: 0, nodes: 60, containers: 10, tickMs: 0, seed: 9 });
  });
  afterEach(async () => {
    await s?.close();
    s = undefined;
    await sim.close();
  });
  after(() => printFigures('other writers', ['CLI writes during API load', 'API writes during CLI writes', 'slowest CLI write to YARN (ms)']));

  /** A sidecar wired to the simulator, and the simulator's hosts besides the AM's (in its order). */
  const start = async () => {
    s = await startYarnSidecar({ rm: sim.url, proxy: sim.url });
    return { sidecar: s, hosts: sim.cluster.nodes.map((n) => n.host).filter((h) => h !== sim.cluster.currentAttempt.amHost) };
  };

  it('blocks, a merge into a hot item and an unblock by `--store` are read and enforced; no API write or merge lost', async () => {
    const { sidecar, hosts } = await start();
    const store = `sqlite:${sidecar.db}`;
    const [hot, victim, ...rest] = hosts;
    const cliHosts = rest.slice(0, 2);
    const apiHosts = rest.slice(3, 43);
    const onYarn = () => sim.cluster.clientBlacklistView();
    assert.equal((await request(sidecar.url, 'PUT', `/blocklist/nodes/${victim}`, { action: 'MARK_BLOCKED', cause: 'to unblock' })).status, 201);

    const load = extendingWriters(sidecar.url, apiHosts, [hot]);
    try {
      await waitFor('the API writers under way', () => load.writes() >= 40, 10_000);
      const atStart = load.writes();
      let slowest = 0;
      const enforced = async (what: string, cond: () => boolean | Promise<boolean>) => {
        const t0 = Date.now();
        await waitFor(what, cond, 5_000);
        slowest = Math.max(slowest, Date.now() - t0);
      };
      for (const h of cliHosts) {
        expectCode(await runCli(['block', h, '--cause', 'cli', '--store', store]), 0, `block ${h} --store`);
        await enforced(`${h} (blocked by the CLI) on YARN`, () => onYarn().includes(h));
        assert.equal((await request(sidecar.url, 'GET', `/blocklist/nodes/${h}`)).status, 200);
      }
      // The same item, written by the API writers and the CLI at once: the CLI's cause is merged in.
      expectCode(await runCli(['block', hot, '--cause', 'cli merge', '--merge', '--store', store]), 0, `block ${hot} --merge --store`);
      await enforced(`the sidecar reads the CLI's merge into ${hot}`, async () => ((await request(sidecar.url, 'GET', `/blocklist/nodes/${hot}`)).body as { cause: string }).cause.includes('cli merge'));
      expectCode(await runCli(['unblock', victim, '--store', store]), 0, `unblock ${victim} --store`);
      await enforced(`${victim} (unblocked by the CLI) off YARN`, () => !onYarn().includes(victim));
      assert.equal((await request(sidecar.url, 'GET', `/blocklist/nodes/${victim}`)).status, 404);
      count('CLI writes during API load', cliHosts.length + 2);
      count('API writes during CLI writes', load.writes() - atStart);
      count('slowest CLI write to YARN (ms)', slowest);
      assert.ok(load.writes() - atStart >= 20, `the API load went on during the CLI writes (${load.writes() - atStart} writes)`);
    } finally {
      await load.stop();
    }

    const item = (await request(sidecar.url, 'GET', `/blocklist/nodes/${hot}`)).body as { cause: string };
    assert.deepEqual(sorted(item.cause.split(',')), ['cli merge', 'load']);
    const listed = Object.keys((await request(sidecar.url, 'GET', '/blocklist')).body as Record<string, unknown>);
    for (const h of [...load.acked, ...cliHosts]) assert.ok(listed.includes(h), `${h} missing from the sidecar's list`);
    assert.ok(!listed.includes(victim));
    await waitFor('YARN equals the store', () => JSON.stringify(sorted(onYarn())) === JSON.stringify(sorted(listed)), 5_000);
  });

  it("Flink's own blacklist entries and an AM failover in the middle of the API write stream: the new attempt gets every block back, Flink's entries are never removed", async () => {
    const { sidecar, hosts } = await start();
    const [shared, flinkOnly, ...rest] = hosts;
    const apiHosts = rest.slice(0, 40);
    // Flink's own blocklist holds two hosts under its owner name on the AM's one blacklist.
    const flinkHolds = async () => {
      const r = await request(sim.url, 'POST', '/amrm/v1/blacklist', { owner: 'flink', blacklistAdditions: [shared, flinkOnly], blacklistRemovals: [] });
      assert.equal(r.status, 200, r.text);
    };
    await flinkHolds();
    assert.equal((await request(sidecar.url, 'PUT', `/blocklist/nodes/${shared}`, { action: 'MARK_BLOCKED', cause: 'ours too' })).status, 201);

    const load = extendingWriters(sidecar.url, apiHosts);
    // The sidecar's share, under its default owner name (cluster.resource-blocklist.amrm-proxy.owner).
    const ours = () => [...(sim.cluster.ownersView()['blocklist'] ?? [])];
    try {
      await waitFor('the API writers under way', () => load.writes() >= 40, 10_000);
      const a = await request(sim.url, 'POST', '/sim/v1/attempts', { blacklist: 'empty' });
      assert.equal(a.status, 200, a.text);
      const atFailover = load.writes();
      // Flink's new attempt registers its own blocklist again, as the JobMaster does on recovery.
      await flinkHolds();
      await waitFor('every acknowledged block on the new attempt', () => [...load.acked, shared].every((h) => sim.cluster.clientBlacklistView().includes(h)), 5_000);
      // Unblocking a host Flink also holds takes it out of our share only.
      assert.equal((await request(sidecar.url, 'DELETE', `/blocklist/nodes/${shared}`)).status, 200);
      await waitFor('our share without the unblocked host', () => !ours().includes(shared), 5_000);
      assert.ok(sim.cluster.clientBlacklistView().includes(shared), "Flink's entry was removed with ours");
      assert.ok(sim.cluster.clientBlacklistView().includes(flinkOnly));
      // The stream goes on across the failover (checked at the end as well: every acked write on YARN).
      await waitFor('20 API writes after the failover', () => load.writes() - atFailover >= 20, 10_000);
    } finally {
      await load.stop();
    }
    await waitFor('YARN: our share and Flink\'s', () => JSON.stringify(sorted(sim.cluster.clientBlacklistView())) === JSON.stringify(sorted([...load.acked, shared, flinkOnly])), 5_000);
    assert.deepEqual(sorted(ours()), sorted([...load.acked]));
  });
});
