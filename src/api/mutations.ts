/**
 * Routes that change the blocklist say so in their options, `config: { mutates: true }`, instead
 * of checking roles and the feature switch in their bodies. For those routes this plugin refuses,
 * before the body is read:
 *  - a caller without the admin role: 403 (with auth on, auth.ts has already refused viewers of
 *    any mutating method; this is the rule stated where the route is declared);
 *  - any change while `cluster.resource-blocklist.enabled` is false: 503 saying how to enable it.
 */
import { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from './errors';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route changes the blocklist: admin only, refused while the feature is disabled, rate-limited. */
    mutates?: boolean;
  }
}

export const mutationGuard = fp(async (app: FastifyInstance, opts: { enabled: boolean }) => {
  app.addHook('onRequest', async (req) => {
    if (!req.routeOptions.config?.mutates) return;
    if (req.principal.role !== 'admin') throw new ApiError(403, [`'${req.principal.name}' has the viewer role and cannot change the blocklist`]);
    if (!opts.enabled) {
      throw new ApiError(503, ['the blocklist is disabled (cluster.resource-blocklist.enabled: false): nothing can be blocked or unblocked; enable it and restart the sidecar']);
    }
  });
}, { name: 'mutation-guard', dependencies: ['principal'] });
