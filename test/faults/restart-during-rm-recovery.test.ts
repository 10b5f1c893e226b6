/**
 * Two peers restart at once: the RM is re-registering its NodeManagers (most nodes not RUNNING for
 * a while) when the sidecar restarts (real simulator over HTTP, a real SQLite file). The safety
 * cap's denominator is the most RUNNING nodes seen lately, so a running sidecar rides out the dip;
 * a restarted one had no memory of it, read a cap of 0 from 3 RUNNING nodes, and lifted every block
 * from YARN while the job's containers were being placed again. It now starts from what YARN
 * holds: the blocks the last process enforced keep their slots for the memory window.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { silentLogger } from '../../src/core/logger';
import { sidecarConfigForSimulator } from '../../src/quickstart/local-cluster';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { SidecarStatus } from '../../src/api/status-presenter';
import { http, tempDir } from '../support/sidecar';
import { pollUntil } from '../support/wait';

/** Every 20 ms, 10 s unless told. */
const waitFor = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<number> => pollUntil(what, cond, timeoutMs, 20);

describe('a sidecar restarted while the RM re-registers its nodes', function () {
  this.timeout(30_000);
  let sim: RunningSimulator;
  let s: Sidecar | undefined;

  after(async () => {
    await s?.close();
    await sim?.close();
  });

  it('keeps the blocks it had on YARN (the cap starts from what YARN holds), and sends no removal', async () => {
    const dir = tempDir();
    sim = await startSimulator({ port: 0, nodes: 10, containers: 4, tickMs: 0, seed: 5 });
    const config = () =>
      sidecarConfigForSimulator(sim.url, path.join(dir, 'blocklist.db'), {
        'rest.port': '0',
        'cluster.resource-blocklist.poll-interval': '100 ms',
        'cluster.resource-blocklist.yarn.refresh-interval': '200 ms',
      });
    s = await startSidecar({ config: config(), logger: silentLogger });
    const hosts = sim.cluster.nodes.map((n) => n.host);
    const blocked = hosts.slice(0, 3); // the cap of 10 RUNNING nodes at 0.33: 3
    for (const h of blocked) assert.equal((await http(s.url, 'PUT', `/blocklist/nodes/${h}`, { action: 'MARK_BLOCKED', cause: 'bad disk' })).status, 201);
    await waitFor('the three blocks on YARN', () => blocked.every((h) => sim.cluster.clientBlacklistView().includes(h)));

    // The RM restarts: its NodeManagers come back one by one; 7 of 10 are not RUNNING yet.
    for (const h of hosts.slice(3)) sim.cluster.setNodeState(h, 'NEW');
    const status = async (sc: Sidecar) => (await http(sc.url, 'GET', '/status')).body as SidecarStatus;
    const metricReads = () => sim.cluster.counters.rmRequestsByPath['/ws/v1/cluster/metrics'] ?? 0;
    const readsAtDip = metricReads();
    await waitFor('the running sidecar reads the node counts twice after the dip', () => metricReads() >= readsAtDip + 2);
    assert.deepEqual((await status(s)).deferred, [], 'the running sidecar remembers 10 RUNNING nodes');
    assert.equal((await status(s)).safetyCap?.runningNodes, 10);

    // …and the sidecar restarts meanwhile.
    await s.close();
    const removalsBefore = sim.cluster.counters.blacklistRemovals;
    s = await startSidecar({ config: config(), logger: silentLogger });
    const readsAtRestart = metricReads();
    await waitFor('the restarted sidecar has synced and read the node counts three times', () => s!.sync.synced() && metricReads() >= readsAtRestart + 3);
    const st = await status(s);
    assert.deepEqual(st.deferred, [], `the restarted sidecar deferred ${JSON.stringify(st.deferred)} (safety cap ${JSON.stringify(st.safetyCap)})`);
    assert.deepEqual(sim.cluster.clientBlacklistView().filter((h) => blocked.includes(h)).sort(), blocked, 'the blocks are still on YARN');
    assert.equal(sim.cluster.counters.blacklistRemovals, removalsBefore, 'no removal was sent');
  });
});
