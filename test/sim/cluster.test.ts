import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { FakeClock } from '../../src/core/clock';
import { SimCluster } from '../../src/sim/cluster';
import { NodeState } from '../../src/yarn/types';

const host = (i: number): string => `node${String(i).padStart(4, '0')}.sim.local`;

/** Every live task manager sits on a RUNNING-or-DECOMMISSIONING node; returns the set of hosts in use. */
function placements(c: SimCluster): Map<string, string> {
  return new Map(c.taskManagers().map((t) => [t.id, t.host]));
}

describe('sim/cluster: placement honours the blacklist as YARN does', () => {
  it('new containers never land on a blacklisted host or a host of a blacklisted rack', () => {
    const c = new SimCluster({ nodes: 40, containers: 80, racks: 4, seed: 5 });
    // rack 2 = node0011..node0020
    c.updateBlacklist([host(1), host(2), host(3), '/rack02'], []);
    c.allocate(); // the delta reaches the scheduler with this heartbeat
    const before = placements(c);
    c.release(c.taskManagers().map((t) => t.id)); // every task manager goes; all are placed anew
    const r = c.allocate();
    assert.equal(r.placed, 80);
    for (const [id, h] of placements(c)) {
      assert.ok(!before.has(id), 'new container ids');
      const n = c.node(h)!;
      assert.ok(![host(1), host(2), host(3)].includes(h), `${id} placed on blacklisted ${h}`);
      assert.notEqual(n.rack, '/rack02', `${id} placed on blacklisted rack (${h})`);
    }
  });

  it('never places on a non-RUNNING node; DECOMMISSIONING keeps its containers, LOST/UNHEALTHY lose theirs', () => {
    const c = new SimCluster({ nodes: 10, containers: 30, seed: 2 });
    const keep = c.node(host(1))!;
    const keepIds = [...keep.containers].filter((id) => !c.container(id)!.isAm);
    c.setNodeState(host(1), 'DECOMMISSIONING');
    assert.deepEqual([...keep.containers].filter((id) => !c.container(id)!.isAm), keepIds, 'DECOMMISSIONING keeps running containers');
    const lostBefore = c.counters.containersLost;
    const onNode2 = c.node(host(2))!.containers.size;
    const amOn2 = c.currentAttempt.amHost === host(2);
    c.setNodeState(host(2), 'LOST');
    c.setNodeState(host(3), 'UNHEALTHY');
    assert.equal(c.node(host(2))!.containers.size, 0);
    assert.equal(c.node(host(3))!.containers.size, 0);
    assert.ok(c.counters.containersLost - lostBefore >= onNode2);
    if (!amOn2) assert.ok(c.pending > 0);
    c.allocate();
    assert.equal(c.taskManagerCount, 30, 'lost containers are replaced');
    for (const t of c.taskManagers()) {
      if (keepIds.includes(t.id)) continue;
      assert.ok(![host(1), host(2), host(3)].includes(t.host), `${t.id} placed on ${t.host}`);
    }
  });

  it('removal wins within one update; across updates the last one wins; pending deltas cancel', () => {
    const c = new SimCluster({ nodes: 5, containers: 5 });
    const r = c.updateBlacklist([host(1), host(2)], [host(2)]);
    assert.ok(r.ok);
    assert.deepEqual(c.clientBlacklistView(), [host(1)]);
    assert.deepEqual(c.pendingBlacklistDelta(), { additions: [host(1)], removals: [host(2)] });
    c.allocate();
    assert.deepEqual(c.schedulerBlacklistView(), [host(1)]);
    // add then remove before the next heartbeat: net nothing reaches the scheduler for host 3
    c.updateBlacklist([host(3)], []);
    c.updateBlacklist([], [host(3)]);
    c.allocate();
    assert.deepEqual(c.schedulerBlacklistView(), [host(1)]);
    c.updateBlacklist([], [host(1)]);
    c.updateBlacklist([host(1)], []);
    c.allocate();
    assert.deepEqual(c.schedulerBlacklistView(), [host(1)], 'last call wins');
  });

  it('"*" in the additions refuses the whole update with YARN\'s message', () => {
    const c = new SimCluster({ nodes: 5, containers: 5 });
    const r = c.updateBlacklist([host(1), '*'], [host(2)]);
    assert.deepEqual(r, { ok: false, error: 'Cannot add * to the blacklist!' });
    assert.deepEqual(c.clientBlacklistView(), []);
    assert.deepEqual(c.pendingBlacklistDelta(), { additions: [], removals: [] });
    assert.equal(c.counters.blacklistPostsRejected, 1);
    assert.equal(c.counters.blacklistPosts, 0);
    // "*" among the removals is not validated by the RM (only additions are)
    assert.ok(c.updateBlacklist([], ['*']).ok);
  });

  it('a released container is replaced on the next allocation round, and a second release is "unknown"', () => {
    const c = new SimCluster({ nodes: 8, containers: 16, seed: 9 });
    const ids = c.taskManagers().slice(0, 5).map((t) => t.id);
    const r = c.release(ids);
    assert.deepEqual(r.released, ids);
    assert.equal(c.taskManagerCount, 11);
    assert.equal(c.pending, 5);
    assert.deepEqual(c.release([ids[0]]), { released: [], unknown: [ids[0]] });
    assert.deepEqual(c.release([c.currentAttempt.amContainerId]).unknown, [c.currentAttempt.amContainerId], 'the AM container is not the AM client\'s to release');
    assert.equal(c.allocate().placed, 5);
    assert.equal(c.taskManagerCount, 16);
    assert.deepEqual(c.counters.releasedContainerIds, ids);
  });

  it('a work-preserving RM restart moves the epoch on and numbers new containers from 1 again; running ones keep their ids', () => {
    const c = new SimCluster({ nodes: 4, containers: 2, seed: 9 });
    const before = c.taskManagers().map((t) => t.id).sort();
    assert.deepEqual(c.rmRestart(), { epoch: 1 });
    const [next] = c.placeOn(c.nodes[0].host, 1);
    assert.equal(next, 'container_e01_1652313600000_0001_01_000001');
    assert.equal(c.currentAttempt.amContainerId, 'container_1652313600000_0001_01_000001', 'the AM keeps its id (and its number)');
    assert.deepEqual(c.taskManagers().map((t) => t.id).filter((id) => id !== next).sort(), before);
    assert.deepEqual(c.release([next]).released, [next], 'a worker numbered 1 is the AM client\'s to release');
    assert.equal(c.rmRestart().epoch, 2);
    assert.equal(c.counters.rmRestarts, 2);
  });

  it('new attempt: blacklist starts empty, or is inherited, or stays only in the scheduler (the default with keep-containers, as a real RM does)', () => {
    const mk = (): SimCluster => {
      const c = new SimCluster({ nodes: 6, containers: 6, seed: 3 });
      c.updateBlacklist([host(1)], []);
      c.allocate();
      return c;
    };
    const tmsBefore = (c: SimCluster) => c.taskManagers().map((t) => t.id).sort();

    assert.equal(mk().newAttemptBlacklist, 'scheduler-only');
    assert.equal(new SimCluster({ nodes: 2, containers: 1, keepContainersAcrossAttempts: false }).newAttemptBlacklist, 'empty');
    const empty = mk();
    const kept = tmsBefore(empty);
    const a2 = empty.newAttempt('empty');
    assert.equal(a2.id, 'appattempt_1652313600000_0001_000002');
    assert.match(a2.amContainerId, /_02_000001$/);
    assert.deepEqual(empty.clientBlacklistView(), []);
    assert.deepEqual(empty.schedulerBlacklistView(), []);
    assert.deepEqual(tmsBefore(empty), kept, 'task managers survive the AM failover (keep-containers-across-attempts)');
    assert.equal(empty.attempts()[0].state, 'FAILED');

    const inherit = mk();
    inherit.newAttempt('inherit');
    assert.deepEqual(inherit.clientBlacklistView(), [host(1)]);
    assert.deepEqual(inherit.schedulerBlacklistView(), [host(1)]);

    const hidden = mk();
    hidden.newAttempt('scheduler-only');
    assert.deepEqual(hidden.clientBlacklistView(), []);
    assert.deepEqual(hidden.schedulerBlacklistView(), [host(1)]);

    // killing the AM's container fails the attempt over
    const k = mk();
    assert.ok(k.killContainer(k.currentAttempt.amContainerId));
    assert.equal(k.attempts().length, 2);
  });

  it('ticks on the injected clock: replacements appear after one tick interval, none before', () => {
    const clock = new FakeClock();
    const c = new SimCluster({ nodes: 4, containers: 8, clock });
    c.startTicking(500);
    c.release(c.taskManagers().slice(0, 2).map((t) => t.id));
    clock.advance(499);
    assert.equal(c.taskManagerCount, 6);
    clock.advance(1);
    assert.equal(c.taskManagerCount, 8);
    c.stopTick();
    c.release(c.taskManagers().slice(0, 1).map((t) => t.id));
    clock.advance(5000);
    assert.equal(c.taskManagerCount, 7, 'no ticks once stopped');
  });

  it('is deterministic with a seed', () => {
    const a = new SimCluster({ nodes: 50, containers: 120, seed: 42 });
    const b = new SimCluster({ nodes: 50, containers: 120, seed: 42 });
    const c = new SimCluster({ nodes: 50, containers: 120, seed: 43 });
    const layout = (x: SimCluster) => x.taskManagers().map((t) => `${t.id}@${t.host}`).join(',');
    assert.equal(layout(a), layout(b));
    assert.notEqual(layout(a), layout(c));
  });

  it('property: after any sequence of blacklist updates, node changes, releases and kills, no container placed since the last update sits on a blacklisted or non-RUNNING node', () => {
    const N = 24;
    const states: NodeState[] = ['RUNNING', 'RUNNING', 'UNHEALTHY', 'DECOMMISSIONING', 'LOST'];
    const place = fc.oneof(
      fc.integer({ min: 1, max: N }).map(host),
      fc.constantFrom('/rack01', '/rack02', '/rack03'),
    );
    const op = fc.oneof(
      fc.record({ kind: fc.constant('bl' as const), add: fc.array(place, { maxLength: 4 }), rem: fc.array(place, { maxLength: 4 }) }),
      fc.record({ kind: fc.constant('state' as const), node: fc.integer({ min: 1, max: N }), state: fc.constantFrom(...states) }),
      fc.record({ kind: fc.constant('release' as const), n: fc.integer({ min: 0, max: 6 }) }),
      fc.record({ kind: fc.constant('kill' as const), n: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ kind: fc.constant('allocate' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 25 }), fc.integer({ min: 1, max: 1000 }), (ops, seed) => {
        const c = new SimCluster({ nodes: N, containers: 40, racks: 3, seed });
        for (const o of ops) {
          if (o.kind === 'bl') c.updateBlacklist(o.add, o.rem);
          else if (o.kind === 'state') c.setNodeState(host(o.node), o.state);
          else if (o.kind === 'release') c.release(c.taskManagers().slice(0, o.n).map((t) => t.id));
          else if (o.kind === 'kill') {
            const all = c.liveContainers();
            if (all.length > 0) c.killContainer(all[o.n % all.length].id);
          } else {
            const before = new Set(c.liveContainers().map((x) => x.id));
            c.allocate();
            for (const x of c.taskManagers()) {
              if (before.has(x.id)) continue;
              const n = c.node(x.host)!;
              if (n.state !== 'RUNNING' || c.isPlaceBlacklisted(n)) return false;
              if (n.containers.size > c.slotsPerNode + 1) return false;
            }
          }
        }
        // bookkeeping stays consistent: per-node sets and the container map agree
        const total = c.nodes.reduce((s, n) => s + n.containers.size, 0);
        return total === c.liveContainers().length && c.taskManagerCount === c.taskManagers().length;
      }),
      { numRuns: 150, seed: 20240601 },
    );
  });
});
