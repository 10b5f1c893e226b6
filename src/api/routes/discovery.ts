/**
 * GET /discovery/prometheus: Prometheus' HTTP service discovery (http_sd_configs) over the
 * sidecars this one knows: with the ZooKeeper store every sidecar published under
 * <root>/sidecars (so any sidecar of the cluster answers for all), else itself alone. One target
 * group per sidecar, labelled with its application and attempt (docs/deploy.md shows the scrape
 * configuration).
 */
import { FastifyInstance } from 'fastify';
import type { SidecarRecord } from '../../store/zookeeper/sidecar-registry';
import { sendErrors } from '../errors';

/** Where the published sidecars come from (the sidecar wires ZooKeeper, or itself). */
export interface DiscoveryPort {
  /** For messages: where the list was read. */
  readonly source: string;
  sidecars(): Promise<readonly SidecarRecord[]>;
}

/** Prometheus' http_sd answer: one target group per sidecar. */
export interface TargetGroup {
  targets: string[];
  labels: Record<string, string>;
}

export function targetGroups(records: readonly SidecarRecord[]): TargetGroup[] {
  return [...records]
    .sort((a, b) => a.application.localeCompare(b.application) || (a.attempt ?? '').localeCompare(b.attempt ?? ''))
    .map((r) => ({
      targets: [r.address],
      labels: { __scheme__: r.scheme, application: r.application, ...(r.attempt ? { attempt: r.attempt } : {}), host: r.host },
    }));
}

export async function discoveryRoutes(app: FastifyInstance, opts: { discovery: DiscoveryPort }): Promise<void> {
  app.get('/discovery/prometheus', async (_req, reply) => {
    let records: readonly SidecarRecord[];
    try {
      records = await opts.discovery.sidecars();
    } catch (e) {
      return sendErrors(reply, 503, [`cannot list the sidecars in ${opts.discovery.source}: ${(e as Error).message}`]);
    }
    return reply.type('application/json').send(targetGroups(records));
  });
}
