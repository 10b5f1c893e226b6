/**
 * Node counts by state as the RM's /ws/v1/cluster/metrics reports them, computed from a node list.
 * The simulator serves its metrics from this, and test doubles that hold a node list answer
 * clusterMetrics() with it, so "activeNodes = RUNNING nodes" is written once.
 */
import { ClusterMetrics, NodeState } from './types';

const FIELD: Partial<Record<NodeState, keyof ClusterMetrics>> = {
  RUNNING: 'activeNodes',
  DECOMMISSIONING: 'decommissioningNodes',
  DECOMMISSIONED: 'decommissionedNodes',
  LOST: 'lostNodes',
  UNHEALTHY: 'unhealthyNodes',
  REBOOTED: 'rebootedNodes',
  SHUTDOWN: 'shutdownNodes',
};

export function countNodeStates(nodes: Iterable<{ state: NodeState }>): ClusterMetrics {
  const m: ClusterMetrics = { activeNodes: 0, decommissioningNodes: 0, decommissionedNodes: 0, lostNodes: 0, unhealthyNodes: 0, rebootedNodes: 0, shutdownNodes: 0, totalNodes: 0 };
  for (const n of nodes) {
    const f = FIELD[n.state];
    if (f) m[f]++;
    // Hadoop's totalNodes counts the nodes it tracks in any of the states above (NEW ones are not
    // yet part of the cluster).
    if (n.state !== 'NEW') m.totalNodes++;
  }
  return m;
}
