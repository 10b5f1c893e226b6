/**
 * Bearer-token authentication and role checks for the REST API (docs/security.md), installed by buildApi
 * when `rest.auth.tokens-file` is set.
 *
 *  - `GET /healthz` stays open: a liveness probe must not need a secret.
 *  - Everything else needs `Authorization: Bearer <token>`; without one, or with an unknown one:
 *    401 with `WWW-Authenticate: Bearer …` (RFC 6750) and a Flink error body.
 *  - A viewer may read; a viewer's PUT/POST/DELETE is refused here with 403, before its body is
 *    even parsed (routes marked `config: { mutates: true }` are checked again by the mutation
 *    guard, mutations.ts).
 *  - Refusals of mutating calls are audited (who could be identified, from where, what), so the
 *    audit trail shows attempts, not only successes. Tokens never reach a log or audit line.
 *
 * The plugin is not encapsulated (fastify-plugin), so its hook covers every route, including the
 * 404 handler: an unauthenticated caller cannot probe which endpoints exist.
 */
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Logger } from '../core/logger';
import { TOKEN_RE, TokenLookup } from '../security/tokens';
import { AuditSink } from '../model/audit';
import { sendErrors } from './errors';
import { Principal, origin } from './principal';

export const REALM = 'flink-yarn-blocklist';
/** Paths served without a token. Matched against the route pattern, so '/healthz?x' or '//healthz' do not widen it. */
const OPEN_ROUTES = new Set(['/healthz']);
const READ_METHODS = new Set(['GET', 'HEAD']);
/** Who an open route's caller is once auth is on: not the loopback-only anonymous admin. */
const UNAUTHENTICATED: Principal = { name: 'unauthenticated', role: 'viewer' };

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Served without a token: the console's static shell (its HTML, script and styles hold no data;
     * a browser cannot send a bearer token when it navigates, so the shell must load to ask for one).
     */
    openWithoutToken?: boolean;
  }
}

export interface AuthOptions {
  tokens: TokenLookup;
  logger: Logger;
  audit?: AuditSink;
}

export function isMutation(method: string): boolean {
  return !READ_METHODS.has(method.toUpperCase());
}

type Presented = { kind: 'none' } | { kind: 'malformed'; why: string } | { kind: 'token'; token: string };

/** What the Authorization header carries. Only the Bearer scheme is accepted. */
export function presentedToken(header: string | undefined): Presented {
  if (header === undefined || header.trim() === '') return { kind: 'none' };
  const m = /^\s*(\S+)\s+(\S+)\s*$/.exec(header);
  if (!m) return { kind: 'malformed', why: 'Authorization header must be "Bearer <token>"' };
  if (m[1].toLowerCase() !== 'bearer') return { kind: 'malformed', why: `unsupported authorization scheme '${m[1].slice(0, 20)}'; use Bearer` };
  if (!TOKEN_RE.test(m[2])) return { kind: 'malformed', why: 'the bearer token contains characters a token cannot have' };
  return { kind: 'token', token: m[2] };
}

const pathOf = (req: FastifyRequest): string => req.url.split('?')[0].slice(0, 300);

export const authPlugin = fp(async (app: FastifyInstance, opts: AuthOptions) => {
  const { tokens, logger, audit } = opts;

  const deny = (req: FastifyRequest, reply: FastifyReply, status: 401 | 403, reason: string, error: string | undefined, who: string): FastifyReply => {
    const from = origin(req);
    logger.warn(`auth: ${status} ${req.method} ${pathOf(req)} from ${from}: ${reason}`, { auth: true, status, who, from });
    if (audit && isMutation(req.method)) {
      audit.record({ op: 'denied', id: pathOf(req), who, from, outcome: status === 401 ? 'unauthenticated' : 'forbidden', detail: `${req.method}: ${reason}` });
    }
    if (status === 401) {
      reply.header('www-authenticate', `Bearer realm="${REALM}"${error ? `, error="${error}"` : ''}`);
    }
    return sendErrors(reply, status, [reason]);
  };

  app.addHook('onRequest', async (req, reply) => {
    if ((req.routeOptions.url !== undefined && OPEN_ROUTES.has(req.routeOptions.url)) || req.routeOptions.config?.openWithoutToken === true) {
      req.principal = UNAUTHENTICATED;
      return;
    }
    const raw = req.headers.authorization;
    const p = presentedToken(typeof raw === 'string' ? raw : undefined);
    if (p.kind === 'none') {
      return deny(req, reply, 401, 'authentication required: send "Authorization: Bearer <token>" (tokens are granted in the sidecar\'s rest.auth.tokens-file)', undefined, 'unauthenticated');
    }
    if (p.kind === 'malformed') return deny(req, reply, 401, p.why, 'invalid_request', 'unauthenticated');
    const principal = tokens.lookup(p.token);
    if (!principal) return deny(req, reply, 401, 'invalid bearer token', 'invalid_token', 'unauthenticated');
    req.principal = principal;
    if (principal.role !== 'admin' && isMutation(req.method)) {
      return deny(req, reply, 403, `'${principal.name}' has the viewer role and cannot change the blocklist`, undefined, principal.name);
    }
  });
}, { name: 'auth', dependencies: ['principal'] });
