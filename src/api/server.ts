/**
 * The HTTP server: fastify with schema validation, Flink-style error bodies, the blocklist routes,
 * and the operational endpoints (/status, /healthz, /readyz, /metrics).
 */
import Fastify, { FastifyInstance } from 'fastify';
import { ApiDeps } from './deps';
import { installErrorHandling, sendErrors } from './errors';
import { installPrincipal } from './principal';
import { blocklistRoutes } from './blocklist-routes';

export function buildApi(deps: ApiDeps): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: deps.bodyLimit ?? 1_048_576,
    // Reject, never silently fix: no coercion, no dropping unknown fields; report every problem.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } },
    return503OnClosing: true,
    connectionTimeout: 30_000,
    requestTimeout: 30_000,
  });
  installErrorHandling(app, deps.logger);
  installPrincipal(app);
  blocklistRoutes(app, deps);

  app.get('/status', async () => deps.sync.status());
  app.get('/healthz', async () => ({ status: 'ok' }));
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
  app.get('/metrics', async (_req, reply) => {
    if (!deps.metrics) return sendErrors(reply, 404, ['metrics are not enabled']);
    return reply.type(deps.metrics.contentType).send(await deps.metrics.text());
  });
  return app;
}
