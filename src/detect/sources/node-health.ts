/**
 * Source: the RM's own view of node health — nodes that are UNHEALTHY, LOST or DECOMMISSIONING,
 * read with the RM's `states` filter (cheap however big the cluster). YARN already stops scheduling
 * on such nodes, so this source blames no host: it records the health report as evidence beside
 * the other sources' incidents, and — when configured — lets the detector evacuate a
 * DECOMMISSIONING node ahead of YARN's own timeout.
 */
import { NodeState, ResourceManagerReader } from '../../yarn/types';
import { DetectorSource, SourceContext, SourceReport } from '../source';

export const WATCHED_STATES: readonly NodeState[] = ['UNHEALTHY', 'LOST', 'DECOMMISSIONING'];

/** The one RM read this source needs: the node list narrowed by state on the RM side. */
export type NodeHealthReader = Pick<ResourceManagerReader, 'nodes'>;

export class NodeHealthSource implements DetectorSource {
  readonly name = 'yarn-nodes';

  constructor(private readonly rm: NodeHealthReader) {}

  async poll(ctx: SourceContext): Promise<SourceReport> {
    const nodes = await this.rm.nodes(WATCHED_STATES);
    return {
      failures: [],
      health: nodes.filter((n) => WATCHED_STATES.includes(n.state)).map((n) => ({ host: n.host, state: n.state, healthReport: n.healthReport === 'null' ? '' : n.healthReport, seenAt: ctx.now })),
    };
  }
}
