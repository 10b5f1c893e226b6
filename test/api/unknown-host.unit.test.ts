/**
 * A node item whose host the RM does not know: sync state `unknown-host` with the nearest names it
 * knows, still pushed, and not counted in numBlockedNodes / blocklist_blocked_nodes. Pure: the
 * status presenter and the metrics' count, no engine.
 */
import { strict as assert } from 'node:assert';
import { planDesired } from '../../src/sync/desired';
import { emptyView, SyncView } from '../../src/sync/view';
import { itemSyncStatus } from '../../src/api/status-presenter';
import { countItems } from '../../src/metrics/metrics';
import { indexNodes } from '../../src/sync/known-hosts';
import { APP, nodeItem } from '../sync/items';

const T0 = 1_652_313_600_000;
const nodes = ['node0001', 'node0002', 'node0003', 'node0004'].map((host) => ({ host, state: 'RUNNING' as const }));

function view(withNodes = true): SyncView {
  const items = [nodeItem('node0001', { start: T0 + 1 }), nodeItem('Node0002', { start: T0 + 2 }), nodeItem('joins-later', { start: T0 + 3 })];
  const plan = planDesired({ items, applicationId: APP, now: T0, nodes, maxBlockedFraction: 0.5 });
  return {
    ...emptyView(true, true, 0.5),
    applicationId: APP,
    items,
    plan,
    actual: new Set(plan.blacklist),
    ...(withNodes ? { nodes: { readAt: T0, list: nodes, known: indexNodes(nodes)! } } : {}),
  };
}

describe('unknown hosts (sync state unknown-host)', () => {
  it('a host the RM does not list is unknown-host, with the wrong-case name first; known ones stay applied', () => {
    const v = view();
    assert.equal(itemSyncStatus(v, 'node0001', T0)?.state, 'applied');
    const typo = itemSyncStatus(v, 'Node0002', T0);
    assert.equal(typo?.state, 'unknown-host');
    assert.equal(typo?.nearest?.[0], 'node0002');
    assert.match(typo?.detail ?? '', /the RM lists no node 'Node0002'.*nearest names it knows: node0002/);
    const far = itemSyncStatus(v, 'joins-later', T0);
    assert.equal(far?.state, 'unknown-host');
    assert.deepEqual(far?.nearest, []);
  });

  it('is still pushed (a node may be blocked before it joins) and takes no slot of the safety cap', () => {
    const v = view();
    assert.ok(v.plan?.blacklist.includes('Node0002') && v.plan.blacklist.includes('joins-later'));
    assert.equal(v.plan?.capUsed, 1, 'only node0001 is a RUNNING node');
  });

  it('without a node list nothing is called unknown', () => {
    assert.equal(itemSyncStatus(view(false), 'Node0002', T0)?.state, 'applied');
  });

  it('does not count in numBlockedNodes; without a node list every item counts', () => {
    const items = view().items ?? [];
    assert.deepEqual(countItems(items, APP, T0, indexNodes(nodes)), { nodes: 1, taskManagers: 0 });
    assert.deepEqual(countItems(items, APP, T0, indexNodes(undefined)), { nodes: 3, taskManagers: 0 });
  });
});
