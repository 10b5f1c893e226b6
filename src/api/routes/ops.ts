/** The operational endpoints: /status, /healthz, /readyz, /config, /metrics. */
import { FastifyInstance } from 'fastify';
import { ApiDeps } from '../deps';
import { sendErrors } from '../errors';
import { clockSkewStatus, sidecarStatus, syncStall } from '../status-presenter';

export async function opsRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  // ?nodes=true adds the cluster's nodes (the console's picture); `now` is the sidecar's clock.
  const statusQuery = { type: 'object', properties: { nodes: { type: 'string', enum: ['true', 'false', ''] } } } as const;
  app.get<{ Querystring: { nodes?: string } }>('/status', { schema: { querystring: statusQuery } }, async (req) => ({
    ...sidecarStatus(deps.sync.view(), deps.clock.now(), {
      nodes: req.query.nodes === 'true' || req.query.nodes === '',
      ...(deps.sync.progress ? { progress: deps.sync.progress() } : {}),
      ...(deps.syncStallLimitMs !== undefined ? { stallLimitMs: deps.syncStallLimitMs } : {}),
    }),
    // Stored rows that cannot be decoded: not enforced, until removed (DELETE / blocklist unblock).
    quarantined: deps.store.quarantined?.() ?? [],
    clockSkew: clockSkewStatus(deps.store.clockSkew !== undefined, deps.store.clockSkew?.()),
    now: deps.clock.now(),
  }));
  app.get('/detector', async () => deps.detector?.view() ?? { mode: 'off', why: 'cluster.resource-blocklist.detector.mode is off (or YARN is not configured)' });
  app.get('/healthz', async (_req, reply) => {
    const limit = deps.storeUnreachableLimitMs ?? 0;
    const down = deps.store.unreachableForMs?.() ?? 0;
    if (limit > 0 && down > limit) {
      return sendErrors(reply, 503, [`store ${deps.store.description} unreachable for ${Math.round(down / 1000)} s (limit cluster.resource-blocklist.store.unreachable-limit: ${Math.round(limit / 1000)} s)`]);
    }
    return { status: 'ok' };
  });
  app.get('/readyz', async (_req, reply) => {
    const problems: string[] = [];
    try {
      await deps.store.version();
    } catch (e) {
      problems.push(`store unreachable: ${(e as Error).message}`);
    }
    if (!deps.sync.synced()) problems.push('no successful sync with YARN yet');
    const stalled = syncStall(deps.sync.progress?.(), deps.sync.view(), deps.clock.now(), deps.syncStallLimitMs ?? 0);
    if (stalled !== undefined) problems.push(stalled);
    if (problems.length) return sendErrors(reply, 503, problems);
    return { status: 'ready' };
  });
  // What this process actually runs with (the CLI's `config` shows it instead of a local file).
  app.get('/config', async (_req, reply) => {
    if (!deps.config) return sendErrors(reply, 404, ['this server does not publish its configuration']);
    return { config: deps.config };
  });
  app.get('/metrics', async (_req, reply) => {
    if (!deps.metrics) return sendErrors(reply, 404, ['metrics are not enabled']);
    return reply.type(deps.metrics.contentType).send(await deps.metrics.text());
  });
}
