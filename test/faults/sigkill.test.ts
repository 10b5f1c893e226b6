/**
 * SIGKILL of a real sidecar process (`blocklist sidecar`) in the middle of a blacklist push and in
 * the middle of an evacuation, against the YARN simulator (in this process) over loopback.
 * After a restart on the same store file: every acknowledged block is still there and reaches
 * YARN, the blacklist converges exactly, and no container is released twice (the simulator
 * records every release; a second one of the same id would show as "unknown").
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { startSimulator, RunningSimulator } from '../../src/sim/server';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { http as request, tempDir } from '../support/sidecar';
import { count, printFigures } from '../fuzz/figures';
import { ChildSidecar, sleep, spawnSidecar, waitFor } from './support';

const sorted = (xs: string[]) => [...xs].sort();

describe('faults: SIGKILL of the sidecar process', function () {
  this.timeout(40_000);
  let sim: RunningSimulator;
  const children: ChildSidecar[] = [];
  beforeEach(async () => {
    sim = await startSimulator({ port: 0, nodes: 12, containers: 30, tickMs: 0, seed: 21 });
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      if (c.child.exitCode === null && c.child.signalCode === null) {
        c.child.kill('SIGTERM');
        await c.exited.catch(() => undefined);
      }
    }
    await sim.close();
  });
  after(() => printFigures('SIGKILL', ['sidecar kills', 'acknowledged writes checked after kills', 'acknowledged writes lost after kills', 'containers released', 'containers released twice']));

  async function kill(c: ChildSidecar): Promise<void> {
    c.child.kill('SIGKILL');
    await c.exited;
    count('sidecar kills');
  }

  it('killed mid-push (the proxy slow, writes streaming in): restart keeps every acknowledged block and converges', async () => {
    const db = path.join(tempDir('blocklist-kill-'), 'blocklist.db');
    const first = await spawnSidecar(db, sim.url, sim.url);
    children.push(first);
    // Every proxy call takes 150 ms, so a push is in flight most of the time.
    await request(sim.url, 'PUT', '/sim/v1/faults/amrm', { latencyMs: 150 });
    const hosts = sim.cluster.nodes.map((n) => n.host).filter((h) => h !== sim.cluster.currentAttempt.amHost);
    const acked: string[] = [];
    let stop = false;
    const writer = (async () => {
      for (const h of hosts) {
        if (stop) return;
        try {
          const r = await request(first.url, 'PUT', `/blocklist/nodes/${h}`, { action: 'MARK_BLOCKED', cause: 'kill test' });
          if (r.status === 201) acked.push(h);
        } catch {
          return; // the kill reset the connection: not acknowledged
        }
        await sleep(40);
      }
    })();
    await waitFor('a push in flight with some acknowledged writes', () => acked.length >= 4 && sim.cluster.counters.blacklistPosts >= 1, 10_000);
    stop = true;
    await kill(first);
    await writer;
    const blacklistAtKill = sim.cluster.clientBlacklistView();
    assert.ok(blacklistAtKill.length < acked.length || acked.length > 0);
    await request(sim.url, 'DELETE', '/sim/v1/faults');

    const store = new SqliteStore(db);
    const ids = new Set((await store.list()).map((i) => i.id));
    await store.close();
    const lost = acked.filter((h) => !ids.has(h));
    count('acknowledged writes checked after kills', acked.length);
    count('acknowledged writes lost after kills', lost.length);
    assert.deepEqual(lost, []);

    const second = await spawnSidecar(db, sim.url, sim.url);
    children.push(second);
    // Everything stored (acknowledged, or written just before the kill) reaches YARN, nothing else.
    await waitFor('YARN converges after the restart', () => JSON.stringify(sorted(sim.cluster.clientBlacklistView())) === JSON.stringify(sorted([...ids])), 10_000);
    for (const h of acked) assert.ok(sim.cluster.clientBlacklistView().includes(h), h);
  });

  it('killed mid-evacuation (one container released per pass): restart finishes it, no container released twice, the block kept', async () => {
    const db = path.join(tempDir('blocklist-kill-evac-'), 'blocklist.db');
    const am = sim.cluster.currentAttempt.amHost;
    // The busiest node that is not the AM's.
    const byHost = new Map<string, number>();
    for (const c of sim.cluster.taskManagers()) if (c.host !== am) byHost.set(c.host, (byHost.get(c.host) ?? 0) + 1);
    const [target, n] = [...byHost.entries()].sort((a, b) => b[1] - a[1])[0];
    assert.ok(n >= 2, 'the target node holds at least two task managers');
    const onTarget = () => sim.cluster.taskManagers().filter((c) => c.host === target).map((c) => c.id);

    const define = { 'cluster.resource-blocklist.evacuation.release-batch-size': '1' };
    const first = await spawnSidecar(db, sim.url, sim.url, define);
    children.push(first);
    await request(sim.url, 'PUT', '/sim/v1/faults/amrm', { latencyMs: 120 });
    const r = await request(first.url, 'PUT', `/blocklist/nodes/${target}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'evacuate then die', evacuationTimeout: 0 });
    assert.equal(r.status, 201, r.text);
    await waitFor('the first container released', () => sim.cluster.counters.releasedContainerIds.length >= 1, 10_000);
    await kill(first);
    const releasedAtKill = sim.cluster.counters.releasedContainerIds.length;
    assert.ok(releasedAtKill < n, `the kill came too late: all ${n} released already`);
    await request(sim.url, 'DELETE', '/sim/v1/faults');

    const second = await spawnSidecar(db, sim.url, sim.url, define);
    children.push(second);
    await waitFor('the evacuation completes after the restart', () => onTarget().length === 0, 10_000);
    // Flink asks for replacements: they must not land on the blocked node.
    sim.cluster.allocate();
    assert.deepEqual(onTarget(), []);
    const released = sim.cluster.counters.releasedContainerIds;
    const twice = released.length - new Set(released).size + sim.cluster.counters.releaseUnknownIds.length;
    count('containers released', released.length);
    count('containers released twice', twice);
    assert.equal(twice, 0, `released: ${released.join(', ')}; unknown: ${sim.cluster.counters.releaseUnknownIds.join(', ')}`);
    assert.equal(released.length, n);
    count('acknowledged writes checked after kills', 1);
    const item = (await request(second.url, 'GET', `/blocklist/nodes/${target}`)).body as { action?: string; sync?: { state: string } };
    assert.equal(item.action, 'MARK_BLOCKED_AND_EVACUATE_TASKS');
    assert.ok(sim.cluster.clientBlacklistView().includes(target));
  });
});
