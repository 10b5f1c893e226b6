import { strict as assert } from 'node:assert';
import { planDesired, diffBlacklist, blockCapacity, isEmptyDiff, NodeView } from '../../src/sync/desired';
import { EVACUATE } from '../../src/model/item';
import { APP, nodeItem, tmItem, containerOf } from './items';

const T0 = 1_652_313_600_000;
const running = (n: number): NodeView[] => Array.from({ length: n }, (_, i) => ({ host: `node${i + 1}`, state: 'RUNNING' }));

describe('sync/desired: the desired blacklist', () => {
  it('takes effective node items in scope (cluster or this app), never task managers', () => {
    const items = [
      nodeItem('node1', { start: T0 }),
      nodeItem('node2', { start: T0 + 1, scope: APP }),
      nodeItem('node3', { start: T0 + 2, scope: 'application_1652313600000_0099' }),
      nodeItem('node4', { start: T0 + 3, end: T0 + 10 }),
      tmItem('node5', containerOf(1, 2), { start: T0 + 4, action: EVACUATE }),
    ];
    const p = planDesired({ items, applicationId: APP, now: T0 + 10, nodes: running(100), maxBlockedFraction: 0.33 });
    assert.deepEqual(p.blacklist, ['node1', 'node2']);
    assert.deepEqual(p.taskManagers.map((i) => i.id), [`node5/${containerOf(1, 2)}`]);
    assert.deepEqual(p.deferred, []);
  });

  it('expiry is inclusive: an item ending at E counts at E-1 and not at E', () => {
    const items = [nodeItem('node1', { end: T0 + 1000 })];
    const at = (now: number) => planDesired({ items, applicationId: APP, now, nodes: running(10), maxBlockedFraction: 1 }).blacklist;
    assert.deepEqual(at(T0 + 999), ['node1']);
    assert.deepEqual(at(T0 + 1000), []);
  });

  it('safety cap: 10 RUNNING nodes, 0.33, 5 blocks → the 3 oldest pushed, 2 deferred', () => {
    const items = [5, 3, 1, 4, 2].map((k) => nodeItem(`node${k}`, { start: T0 + k }));
    const p = planDesired({ items, applicationId: APP, now: T0 + 100, nodes: running(10), maxBlockedFraction: 0.33 });
    assert.equal(p.capacity, 3);
    assert.deepEqual(p.blacklist, ['node1', 'node2', 'node3']);
    assert.deepEqual(p.deferred.map((i) => i.id), ['node4', 'node5']);
  });

  it('safety cap: unblocking one lets the oldest deferred item go out', () => {
    const items = [1, 3, 4, 5].map((k) => nodeItem(`node${k}`, { start: T0 + k }));
    const p = planDesired({ items, applicationId: APP, now: T0 + 100, nodes: running(10), maxBlockedFraction: 0.33 });
    assert.deepEqual(p.blacklist, ['node1', 'node3', 'node4']);
    assert.deepEqual(p.deferred.map((i) => i.id), ['node5']);
  });

  it('safety cap: hosts that are not RUNNING take no slot (blacklisting them costs no capacity)', () => {
    const nodes: NodeView[] = [...running(10), { host: 'lost1', state: 'LOST' }];
    const items = [nodeItem('lost1', { start: T0 }), nodeItem('gone', { start: T0 + 1 }), ...[1, 2, 3, 4].map((k) => nodeItem(`node${k}`, { start: T0 + 10 + k }))];
    const p = planDesired({ items, applicationId: APP, now: T0 + 100, nodes, maxBlockedFraction: 0.33 });
    assert.deepEqual(p.blacklist, ['gone', 'lost1', 'node1', 'node2', 'node3']);
    assert.deepEqual(p.deferred.map((i) => i.id), ['node4']);
    assert.equal(p.runningNodes, 10);
  });

  it('safety cap: runningNodesFloor keeps the denominator from dipping with the node list', () => {
    const items = [1, 2, 3].map((k) => nodeItem(`node${k}`, { start: T0 + k }));
    const dipped = running(4);
    assert.deepEqual(planDesired({ items, applicationId: APP, now: T0 + 100, nodes: dipped, maxBlockedFraction: 0.33 }).blacklist, ['node1']);
    const p = planDesired({ items, applicationId: APP, now: T0 + 100, nodes: dipped, maxBlockedFraction: 0.33, runningNodesFloor: 10 });
    assert.equal(p.capacity, 3);
    assert.deepEqual(p.blacklist, ['node1', 'node2', 'node3']);
  });

  it('blockCapacity floors and tolerates binary fractions; empty cluster allows nothing', () => {
    assert.equal(blockCapacity(0.33, 10), 3);
    assert.equal(blockCapacity(0.3, 10), 3);
    assert.equal(blockCapacity(0.7, 10), 7);
    assert.equal(blockCapacity(1, 10), 10);
    assert.equal(blockCapacity(0.33, 0), 0);
    assert.equal(blockCapacity(0, 100), 0);
  });

  it('a share that rounds to zero still allows one node while another stays free; never the only node; 0 means never', () => {
    assert.equal(blockCapacity(0.33, 3), 1);
    assert.equal(blockCapacity(0.33, 2), 1);
    assert.equal(blockCapacity(0.01, 99), 1);
    assert.equal(blockCapacity(0.33, 1), 0);
    assert.equal(blockCapacity(1, 1), 1);
    assert.equal(blockCapacity(0, 3), 0);
    // The default fraction on a 3-node cluster (a real Flink-on-YARN trial): the first block goes on, the second waits.
    const items = [1, 2].map((k) => nodeItem(`node${k}`, { start: T0 + k }));
    const p = planDesired({ items, applicationId: APP, now: T0 + 100, nodes: running(3), maxBlockedFraction: 0.33 });
    assert.deepEqual(p.blacklist, ['node1']);
    assert.deepEqual(p.deferred.map((i) => i.id), ['node2']);
  });
});

describe('sync/desired: the difference to push', () => {
  it('additions = desired − actual, removals = actual − desired, sorted', () => {
    assert.deepEqual(diffBlacklist(['c', 'a', 'b'], ['b', 'd']), { additions: ['a', 'c'], removals: ['d'] });
  });
  it('nothing when equal', () => {
    const d = diffBlacklist(['a', 'b'], ['b', 'a']);
    assert.ok(isEmptyDiff(d));
  });
  it('repushAll (new attempt) re-sends every desired host; never a host in both lists', () => {
    const d = diffBlacklist(['a', 'b'], ['a', 'x'], true);
    assert.deepEqual(d, { additions: ['a', 'b'], removals: ['x'] });
    for (const h of d.additions) assert.ok(!d.removals.includes(h));
  });
});
