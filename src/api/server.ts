/**
 * The HTTP server: fastify with schema validation, Flink-style error bodies, the blocklist routes,
 * and the operational endpoints (/status, /healthz, /readyz, /metrics).
 */
import Fastify, { FastifyInstance } from 'fastify';
import { ApiDeps } from './deps';
import { installErrorHandling, sendErrors } from './errors';
import { installPrincipal } from './principal';
import { blocklistRoutes } from './blocklist-routes';
import { installAuth } from './auth';
import { installMutationRateLimit } from './rate-limit';
import { installLoopbackHostGuard } from './host-guard';
import { consoleRoutes } from './console/console-routes';
import { installLosslessJson } from './json-body';
import { sidecarStatus } from './status-presenter';

export function buildApi(deps: ApiDeps): FastifyInstance {
  // `https: null` is a plain HTTP server; with TLS (rest.ssl.*) an https.Server. Routes and hooks
  // are the same either way, so the instance is used through the plain FastifyInstance type below.
  const app = Fastify({
    https: deps.tls ? { key: deps.tls.key, cert: deps.tls.cert, minVersion: 'TLSv1.2' } : null,
    logger: false,
    bodyLimit: deps.bodyLimit ?? 1_048_576,
    // Reject, never silently fix: no coercion, no dropping unknown fields; report every problem.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } },
    return503OnClosing: true,
    connectionTimeout: 30_000,
    requestTimeout: 30_000,
  }) as unknown as FastifyInstance;
  installErrorHandling(app, deps.logger);
  installLosslessJson(app);
  installPrincipal(app);
  if (deps.auth) installAuth(app, { tokens: deps.auth, logger: deps.logger, audit: deps.audit });
  else installLoopbackHostGuard(app, deps.logger);
  if (deps.rateLimit) installMutationRateLimit(app, deps.rateLimit, deps.logger);
  blocklistRoutes(app, deps);
  if (deps.console !== false) consoleRoutes(app, { auth: deps.auth !== undefined });

  // ?nodes=true adds the cluster's nodes (the console's picture); `now` is the sidecar's clock.
  const statusQuery = { type: 'object', properties: { nodes: { type: 'string', enum: ['true', 'false', ''] } } } as const;
  app.get<{ Querystring: { nodes?: string } }>('/status', { schema: { querystring: statusQuery } }, async (req) => ({
    ...sidecarStatus(deps.sync.view(), deps.clock.now(), { nodes: req.query.nodes === 'true' || req.query.nodes === '' }),
    // Stored rows that cannot be decoded: not enforced, until removed (DELETE / blocklist unblock).
    quarantined: deps.store.quarantined?.() ?? [],
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
  return app;
}
