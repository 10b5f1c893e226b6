import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { SimCluster } from '../../src/sim/cluster';

const host = (i: number): string => `node${String(i).padStart(4, '0')}.sim.local`;

describe('sim/cluster: blacklist owners (the AM\'s one blacklist shared by several owners)', () => {
  it('each owner changes only its own set; YARN honours the union; one owner\'s removal keeps a host another holds', () => {
    const c = new SimCluster({ nodes: 10, containers: 10, seed: 2 });
    assert.ok(c.updateBlacklist([host(1), host(2)], []).ok);
    const r = c.updateBlacklist([host(2), host(3)], [], 'am');
    assert.ok(r.ok);
    assert.deepEqual(r.blacklist, [host(1), host(2), host(3)]);
    assert.deepEqual(r.owners, { am: [host(2), host(3)], blocklist: [host(1), host(2)] });

    c.updateBlacklist([], [host(2)]); // the sidecar lets go of node2; Flink still holds it
    assert.deepEqual(c.clientBlacklistView(), [host(1), host(2), host(3)]);
    c.allocate();
    assert.deepEqual(c.schedulerBlacklistView(), [host(1), host(2), host(3)]);

    c.updateBlacklist([], [host(2)], 'am');
    assert.deepEqual(c.clientBlacklistView(), [host(1), host(3)]);
    assert.deepEqual(c.pendingBlacklistDelta(), { additions: [], removals: [host(2)] });
    c.allocate();
    assert.deepEqual(c.schedulerBlacklistView(), [host(1), host(3)]);
    assert.deepEqual(c.ownersView(), { am: [host(3)], blocklist: [host(1)] });
  });

  it('within one call a host in both lists is removed (for that owner); "*" and bad owners are refused and change nothing', () => {
    const c = new SimCluster({ nodes: 10, containers: 10, seed: 2 });
    const r = c.updateBlacklist([host(1), host(2)], [host(2)], 'am');
    assert.ok(r.ok);
    assert.deepEqual(r.owners, { am: [host(1)] });
    for (const [adds, owner] of [[['*'], 'blocklist'], [[host(5)], ''], [[host(5)], 'has space'], [[host(5)], 'x'.repeat(65)]] as [string[], string][]) {
      const bad = c.updateBlacklist(adds, [host(1)], owner);
      assert.equal(bad.ok, false, JSON.stringify([adds, owner]));
    }
    assert.deepEqual(c.ownersView(), { am: [host(1)] });
    assert.equal(c.counters.blacklistPostsRejected, 4);
  });

  it('setOwnerBlacklist replaces one owner\'s set; a new attempt (empty) forgets every owner, inherit keeps them', () => {
    const c = new SimCluster({ nodes: 10, containers: 10, seed: 2 });
    c.updateBlacklist([host(1)], []);
    c.setOwnerBlacklist('am', [host(4), host(5)]);
    c.setOwnerBlacklist('am', [host(5), host(6)]);
    assert.deepEqual(c.ownersView(), { am: [host(5), host(6)], blocklist: [host(1)] });
    c.newAttempt('inherit');
    assert.deepEqual(c.ownersView(), { am: [host(5), host(6)], blocklist: [host(1)] });
    c.newAttempt('empty');
    assert.deepEqual(c.ownersView(), {});
    assert.deepEqual(c.clientBlacklistView(), []);
  });
});

describe('sim/cluster: completed containers (what the AM saw in onContainersCompleted)', () => {
  it('release and node loss complete as ABORTED (-100) with YARN\'s diagnostics; a kill carries its exit status', () => {
    const clock = new FakeClock(1_700_000_000_000);
    const c = new SimCluster({ nodes: 6, containers: 12, seed: 3, clock });
    const [a, b] = c.taskManagers();
    c.release([a.id]);
    clock.advance(1000);
    c.killContainer(b.id, 137, 'Exit code: 137');
    const victimHost = c.taskManagers()[0].host;
    const onVictim = c.taskManagers().filter((t) => t.host === victimHost).map((t) => t.id).sort();
    clock.advance(1000);
    c.setNodeState(victimHost, 'LOST');
    const page = c.completedAfter(0);
    assert.deepEqual(page.containers.slice(0, 2).map((x) => [x.seq, x.containerId, x.exitStatus, x.diagnostics, x.finishedAt]), [
      [1, a.id, -100, 'Container released by application', 1_700_000_000_000],
      [2, b.id, 137, 'Exit code: 137', 1_700_000_001_000],
    ]);
    const lost = page.containers.slice(2);
    assert.deepEqual(lost.map((x) => x.containerId).sort(), onVictim);
    assert.ok(lost.every((x) => x.exitStatus === -100 && x.diagnostics === 'Container released on a *lost* node' && x.nodeId === `${victimHost}:8041`));
    assert.equal(page.next, 2 + onVictim.length);
    assert.deepEqual(c.completedAfter(page.next), { containers: [], next: page.next, epoch: page.epoch });
    assert.deepEqual(c.completedAfter(1).containers.map((x) => x.seq)[0], 2);
  });

  it('a default kill is the NM\'s memory kill (-104); the AM\'s own container never shows', () => {
    const c = new SimCluster({ nodes: 4, containers: 4, seed: 3 });
    c.killContainer(c.taskManagers()[0].id);
    assert.equal(c.completedAfter(0).containers[0].exitStatus, -104);
    c.killContainer(c.currentAttempt.amContainerId);
    assert.equal(c.completedAfter(0).containers.length, 1);
  });

  it('the ring is bounded (oldest fall out, seq keeps counting); an `after` beyond the newest gets the whole ring', () => {
    const c = new SimCluster({ nodes: 4, containers: 8, seed: 3, completedRingSize: 5 });
    for (let i = 0; i < 3; i++) {
      c.release(c.taskManagers().map((t) => t.id));
      c.allocate();
    }
    const all = c.completedAfter(0);
    assert.equal(all.next, 24);
    assert.deepEqual(all.containers.map((x) => x.seq), [20, 21, 22, 23, 24]);
    assert.deepEqual(c.completedAfter(22).containers.map((x) => x.seq), [23, 24]);
    assert.deepEqual(c.completedAfter(900).containers.map((x) => x.seq), [20, 21, 22, 23, 24], 'a caller ahead of the proxy (it restarted) starts over');
    assert.throws(() => new SimCluster({ nodes: 1, containers: 1, completedRingSize: 0 }));
  });
});
