/**
 * Who is calling. Without auth configured (loopback only) everyone is `anonymous` with the admin
 * role; the auth plugin (src/api/auth.ts, when tokens are configured) sets the real principal.
 */
import { FastifyInstance, FastifyRequest } from 'fastify';

export type Role = 'admin' | 'viewer';

export interface Principal {
  name: string;
  role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

export const ANONYMOUS: Principal = { name: 'anonymous', role: 'admin' };

export function installPrincipal(app: FastifyInstance): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (req) => {
    if (!req.principal) req.principal = ANONYMOUS;
  });
}

/** The audit's "from": the peer address (and the forwarded-for chain, if a proxy sent one). */
export function origin(req: FastifyRequest): string {
  const fwd = req.headers['x-forwarded-for'];
  return fwd ? `${req.ip} (x-forwarded-for ${String(fwd).slice(0, 200)})` : req.ip;
}
