/**
 * What the detector knows of the RM's nodes: which host names it knows (the node list, megabytes
 * at 10,000 nodes, read rarely) and how many are RUNNING (the cluster metrics, ~1 KB, every pass:
 * the automatic-block cap's denominator). An RM failing over knows no nodes for a while: that is
 * said (`withoutNodes`), and the last good reading is kept rather than taken for an empty cluster.
 */
import type { DetectorDeps } from './detector';

/** The node list is re-read at most this often: it only answers "does the RM know this host?". */
const NODES_REFRESH_MS = 10 * 60_000;

export interface NodesSeen {
  at: number;
  running: number;
  hosts: Set<string>;
}

export class RmNodes {
  private seen: NodesSeen | undefined;
  /** The last read's RM knows no nodes: one failing over, whose nodes have not registered again yet. */
  withoutNodes = false;

  constructor(private readonly deps: Pick<DetectorDeps, 'clock' | 'logger' | 'nodes' | 'clusterMetrics'>) {}

  /** The nodes as last read, the list refreshed when due and the RUNNING count every call. */
  async read(): Promise<NodesSeen | undefined> {
    const now = this.deps.clock.now();
    this.withoutNodes = false;
    if (!this.seen || now - this.seen.at >= NODES_REFRESH_MS) {
      try {
        const list = await this.deps.nodes();
        // An empty list is an RM that does not know its nodes yet (failover), not an empty cluster.
        if (list.length === 0) this.withoutNodes = true;
        if (list.length > 0) this.seen = { at: now, running: list.filter((n) => n.state === 'RUNNING').length, hosts: new Set(list.map((n) => n.host)) };
      } catch (e) {
        this.deps.logger.warn(`detector: reading the RM's nodes failed: ${(e as Error).message}`);
      }
    }
    if (this.seen && this.deps.clusterMetrics) {
      try {
        const m = await this.deps.clusterMetrics();
        if (m.activeNodes > 0) this.seen.running = m.activeNodes;
        else this.withoutNodes = true;
      } catch (e) {
        this.deps.logger.warn(`detector: reading the RM's cluster metrics failed (the last RUNNING count stays): ${(e as Error).message}`);
      }
    }
    return this.seen;
  }
}
