/**
 * Who is calling. Without auth configured (loopback only) everyone is `anonymous` with the admin
 * role; the auth plugin (src/api/auth.ts, when tokens are configured) sets the real principal.
 */
import { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ANONYMOUS, Principal } from '../core/principal';

export { ANONYMOUS } from '../core/principal';
export type { Principal, Role } from '../core/principal';


declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}


export const principalPlugin = fp(async (app: FastifyInstance) => {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (req) => {
    if (!req.principal) req.principal = ANONYMOUS;
  });
}, { name: 'principal' });

/** The audit's "from": the peer address (and the forwarded-for chain, if a proxy sent one). */
export function origin(req: FastifyRequest): string {
  const fwd = req.headers['x-forwarded-for'];
  return fwd ? `${req.ip} (x-forwarded-for ${String(fwd).slice(0, 200)})` : req.ip;
}
