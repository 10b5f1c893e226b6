/**
 * Watches the cluster's nodes: the safety cap's denominator (RUNNING nodes). Read policy
 * `max-age` (`yarn.refresh-interval`): the node list is the RM's heaviest answer, so it is read
 * rarely. A stale list beats none: a failed read keeps the old list with a warning; only a
 * sidecar that has never read one fails the pass.
 */
import { Logger } from '../core/logger';
import { ResourceManagerReader } from '../yarn/types';
import { NodeView } from './desired';
import { Cached, READ_OK, ReadOutcome, ReadPolicy, message } from './cache';

export class NodesWatcher {
  readonly cache: Cached<NodeView[]>;

  constructor(
    private readonly deps: { rm: ResourceManagerReader; logger: Logger },
    policy: ReadPolicy,
  ) {
    this.cache = new Cached<NodeView[]>("the cluster's nodes", policy);
  }

  async refresh(now: number): Promise<ReadOutcome> {
    if (!this.cache.due(now)) return READ_OK;
    try {
      const list = await this.deps.rm.nodes();
      this.cache.set(
        list.map((n) => ({ host: n.host, state: n.state, rack: n.rack })),
        now,
      );
      return READ_OK;
    } catch (e) {
      const readAt = this.cache.readAt;
      if (readAt === undefined) return { ok: false, error: `cannot read the cluster's nodes for the safety cap: ${message(e)}` };
      this.deps.logger.warn(`reading the cluster's nodes failed, using the list from ${new Date(readAt).toISOString()}: ${message(e)}`);
      return READ_OK;
    }
  }
}
