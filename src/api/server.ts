/**
 * The HTTP server: Fastify with schema validation and Flink-style error bodies, assembled from
 * plugins. Order matters only among the hooks that cover every route (not encapsulated, by
 * fastify-plugin): errors, request bodies, who is calling, auth (or, without tokens, the loopback
 * host guard), the mutation guard, the rate limit; then the
 * shared schemas; then the route plugins, each encapsulated. A new set of routes (the web
 * console, say) is one more `app.register(...)` in the last group.
 */
import Fastify, { FastifyInstance } from 'fastify';
import { ApiDeps } from './deps';
import { errorHandling, frameworkErrors } from './errors';
import { requestBodies } from './json-only-bodies';
import { principalPlugin } from './principal';
import { authPlugin } from './auth';
import { loopbackHostGuard } from './host-guard';
import { consoleRoutes } from './console/console-routes';
import { installLosslessJson } from './json-body';
import { mutationGuard } from './mutations';
import { mutationRateLimit } from './rate-limit';
import { sharedSchemas } from './schemas';
import { openApi } from './openapi';
import { BlocklistService } from './blocklist-service';
import { blocklistRoutes } from './routes/blocklist';
import { ListingCache } from './listing-cache';
import { opsRoutes } from './routes/ops';
import { discoveryRoutes } from './routes/discovery';

export function blocklistService(deps: ApiDeps): BlocklistService {
  return new BlocklistService({ store: deps.store, sync: deps.sync, clock: deps.clock, audit: deps.audit, enabled: deps.enabled, ...(deps.expire ? { expire: deps.expire } : {}) });
}

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  // `https: null` is a plain HTTP server; with TLS (rest.ssl.*) an https.Server. Routes and hooks
  // are the same either way, so the instance is used through the plain FastifyInstance type.
  const app = Fastify({
    https: deps.tls ? { key: deps.tls.key, cert: deps.tls.cert, minVersion: 'TLSv1.2' } : null,
    logger: false,
    bodyLimit: deps.bodyLimit ?? 1_048_576,
    // Reject, never silently fix: no coercion, no dropping unknown fields; report every problem.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: true } },
    return503OnClosing: true,
    connectionTimeout: 30_000,
    requestTimeout: 30_000,
    frameworkErrors,
  }) as unknown as FastifyInstance;

  endConnectionsWhileClosing(app);
  await app.register(errorHandling, { logger: deps.logger });
  installLosslessJson(app);
  await app.register(requestBodies);
  await app.register(principalPlugin);
  if (deps.auth) await app.register(authPlugin, { tokens: deps.auth, logger: deps.logger, audit: deps.audit });
  else await app.register(loopbackHostGuard, { logger: deps.logger });
  await app.register(mutationGuard, { enabled: deps.enabled });
  if (deps.rateLimit) await app.register(mutationRateLimit, { settings: deps.rateLimit, logger: deps.logger });
  // Before the schemas and routes: it learns each route as it is added (GET /openapi.json).
  await app.register(openApi, { auth: deps.auth !== undefined });
  await app.register(sharedSchemas);

  const listing = new ListingCache(deps.store, { clock: deps.clock, ...(deps.listingRetentionMs !== undefined ? { retentionMs: deps.listingRetentionMs } : {}) });
  app.addHook('onClose', (_app, done) => {
    listing.close();
    done();
  });
  await app.register(blocklistRoutes, { service: blocklistService(deps), listing, maxConcurrentListings: deps.maxConcurrentListings ?? 32 });
  await app.register(opsRoutes, deps);
  const discovery = deps.discovery;
  if (discovery) await app.register(async (child) => discoveryRoutes(child, { discovery }));
  if (deps.console !== false) await app.register(async (child) => consoleRoutes(child, { auth: deps.auth !== undefined, ...(deps.consoleData ? { data: deps.consoleData } : {}) }));
  return app;
}

/**
 * close() ends only the keep-alive connections idle at that moment (Node's server.close()), and
 * Fastify answers 503 + `Connection: close` only to requests that arrive later. A connection whose
 * request was in flight went back to idle keep-alive after its answer and held close() until the
 * client dropped it (keepAliveTimeout: 72 s): a SIGTERM under traffic always ran into the forced
 * exit. A response sent while closing therefore ends its connection.
 */
function endConnectionsWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}
