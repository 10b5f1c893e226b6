/** Rack items: the id grammar, the codec, and the safety cap counting a rack by its RUNNING nodes. Pure. */
import { strict as assert } from 'node:assert';
import { parseItemRef } from '../../src/model/validate';
import { decodeItem, encodeItem } from '../../src/store/codec';
import { planDesired } from '../../src/sync/desired';
import { countItems } from '../../src/metrics/metrics';
import { indexNodes } from '../../src/sync/known-hosts';
import { BlockedItem, MARK_BLOCKED, PERMANENT } from '../../src/model/item';

const T0 = 1_652_313_600_000;
const item = (id: string, kind: BlockedItem['kind'], start: number): BlockedItem => {
  const stamp = { by: 'a', from: 'h', at: start };
  return { id, kind, node: id, action: MARK_BLOCKED, startTimestamp: start, endTimestamp: PERMANENT, cause: 'c', scope: 'cluster', created: stamp, updated: stamp };
};
const nodes = [
  ...['a1', 'a2', 'a3'].map((host) => ({ host, state: 'RUNNING' as const, rack: '/dc1/rackA' })),
  { host: 'a4', state: 'LOST' as const, rack: '/dc1/rackA' },
  ...['b1', 'b2', 'b3', 'b4', 'b5'].map((host) => ({ host, state: 'RUNNING' as const, rack: '/dc1/rackB' })),
];

describe('rack items', () => {
  it('a rack is its path as YARN names it; a batch id starting with / is a rack', () => {
    const r = parseItemRef('/dc1/rackA');
    assert.ok(r.ok && r.value.kind === 'rack' && r.value.node === '/dc1/rackA');
    for (const bad of ['rackA', '/dc1//rackA', '/dc1/rackA/', '/rack A', '/']) assert.ok(!parseItemRef(bad, 'rack').ok, bad);
    assert.match((parseItemRef('/default-rack', 'node') as { errors: string[] }).errors[0], /block-rack/);
  });

  it('round-trips through the codec', () => {
    const it1 = item('/dc1/rackA', 'rack', T0);
    assert.deepEqual(decodeItem(encodeItem(it1)), it1);
  });

  it('the cap counts a rack by the RUNNING nodes it covers, all or none, a node not twice; the rack itself goes on the blacklist', () => {
    // 8 RUNNING nodes, fraction 0.5: room for 4.
    const plan = planDesired({
      items: [item('a1', 'node', T0), item('/dc1/rackA', 'rack', T0 + 1), item('/dc1/rackB', 'rack', T0 + 2), item('b1', 'node', T0 + 3)],
      applicationId: undefined,
      now: T0 + 10,
      nodes,
      maxBlockedFraction: 0.5,
    });
    assert.deepEqual(plan.enforced.map((i) => i.id), ['a1', '/dc1/rackA', 'b1']);
    assert.deepEqual(plan.deferred.map((i) => i.id), ['/dc1/rackB'], 'rackB (5 RUNNING nodes) does not fit the 2 slots left');
    assert.equal(plan.capUsed, 4, 'a1 once, a2 and a3 for the rack (a4 is LOST), b1');
    assert.deepEqual(plan.blacklist, ['/dc1/rackA', 'a1', 'b1']);
  });

  it('numBlockedNodes counts the nodes a rack covers, each host once', () => {
    const items = [item('a1', 'node', T0), item('/dc1/rackA', 'rack', T0 + 1)];
    assert.deepEqual(countItems(items, undefined, T0 + 10, indexNodes(nodes)), { nodes: 4, taskManagers: 0 });
  });
});
