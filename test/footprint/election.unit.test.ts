/** The pure parts of the cluster-state sharing: the recipe's decision and the znode codecs. */
import { strict as assert } from 'node:assert';
import { electionStep, sequenceOf } from '../../src/store/zookeeper/election';
import { decodeMetrics, decodeNodes, encodeNodes } from '../../src/sidecar/shared-cluster-state';
import { ClusterNode } from '../../src/yarn/types';

describe('leader election recipe (pure step)', () => {
  const m = (token: string, seq: number): string => `m-${token}-${String(seq).padStart(10, '0')}`;

  it('the lowest sequence number leads, whatever the order ZooKeeper lists them in', () => {
    const kids = [m('bb', 12), m('aa', 3), m('cc', 7)];
    assert.deepEqual(electionStep(kids, m('aa', 3)), { kind: 'lead' });
  });

  it('every other member watches only the member just before it (no herd)', () => {
    const kids = [m('bb', 12), m('aa', 3), m('cc', 7)];
    assert.deepEqual(electionStep(kids, m('bb', 12)), { kind: 'watch', predecessor: m('cc', 7) });
    assert.deepEqual(electionStep(kids, m('cc', 7)), { kind: 'watch', predecessor: m('aa', 3) });
  });

  it('sequence numbers compare as numbers, and foreign children are ignored', () => {
    const kids = [m('aa', 10), m('bb', 9), 'lock', 'm-zz-12'];
    assert.deepEqual(electionStep(kids, m('aa', 10)), { kind: 'watch', predecessor: m('bb', 9) });
    assert.equal(sequenceOf('lock'), undefined);
    assert.equal(sequenceOf(m('ab', 42)), 42);
  });

  it('a member whose znode is gone (lost with its session) must join again', () => {
    assert.deepEqual(electionStep([m('bb', 2)], m('aa', 1)), { kind: 'absent' });
  });
});

describe('shared cluster state codecs', () => {
  it('nodes round-trip through the compact rows', () => {
    const nodes: ClusterNode[] = [
      { id: 'h1:8041', host: 'h1', rack: '/r1', state: 'RUNNING', numContainers: 3, healthReport: '' },
      { id: 'h2:8041', host: 'h2', rack: '/r2', state: 'UNHEALTHY', numContainers: 0, healthReport: 'disk full' },
    ];
    assert.deepEqual(decodeNodes(JSON.parse(JSON.stringify(encodeNodes(nodes)))), nodes);
  });

  it('a malformed reading is refused (the sidecar then reads the RM)', () => {
    assert.throws(() => decodeNodes([['h1:1', 'h1', '/r', 'SLEEPING', 0]]), /state/);
    assert.throws(() => decodeNodes({}), /list/);
    assert.throws(() => decodeMetrics({ activeNodes: -1 }), /activeNodes/);
    const ok = { activeNodes: 1, decommissioningNodes: 0, decommissionedNodes: 0, lostNodes: 0, unhealthyNodes: 0, rebootedNodes: 0, shutdownNodes: 0, totalNodes: 1 };
    assert.deepEqual(decodeMetrics(ok), ok);
  });
});
