/**
 * A rate limit on mutating calls (PUT/POST/DELETE) with @fastify/rate-limit: a runaway script must
 * not turn the store, YARN and the audit log into its loop. Reads are not limited (dashboards poll).
 *
 * Keyed by principal when auth is on (a token used from many machines shares one budget), else by
 * client address. Over the limit: 429 in Flink's error shape with Retry-After.
 *
 * Why not the plugin's own per-route hooks: they attach through an onRoute hook, which only sees
 * routes declared after the (asynchronous) plugin load, and buildApi declares its routes
 * synchronously. So the plugin is registered with `global: false` and one root preParsing hook
 * calls its `createRateLimit()` limiter. preParsing: after auth has named the principal, before
 * the body is read or validated, so a refused call costs no parsing and malformed floods count too.
 */
import rateLimit from '@fastify/rate-limit';
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Logger } from '../core/logger';
import { ApiError } from './errors';
import { isMutation } from './auth';
import { RateLimitSettings } from '../security/rest-security';


type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

export function rateLimitKey(req: FastifyRequest): string {
  const p = req.principal;
  return p && p.name !== 'anonymous' ? `principal:${p.name}` : `address:${req.ip}`;
}

export function installMutationRateLimit(app: FastifyInstance, settings: RateLimitSettings, logger: Logger): void {
  if (settings.max <= 0) return;
  void app.register(rateLimit, { global: false });
  let limiter: Limiter | undefined;
  /** key → end of the window in which its refusal was already logged (one warning per key and window). */
  const warned = new Map<string, number>();

  app.addHook('preParsing', async (req, reply) => {
    if (!isMutation(req.method)) return;
    limiter ??= app.createRateLimit({ max: settings.max, timeWindow: settings.windowMs, keyGenerator: rateLimitKey });
    const r = await limiter(req);
    if (r.isAllowed) return;
    reply.header('x-ratelimit-limit', r.max);
    reply.header('x-ratelimit-remaining', r.remaining);
    reply.header('x-ratelimit-reset', r.ttlInSeconds);
    if (!r.isExceeded) return;
    reply.header('retry-after', r.ttlInSeconds);
    const now = Date.now();
    if ((warned.get(r.key) ?? 0) <= now) {
      for (const [k, until] of warned) if (until <= now) warned.delete(k);
      warned.set(r.key, now + r.ttl);
      logger.warn(`rate limit: ${r.key} made more than ${r.max} mutating calls within ${settings.windowMs} ms; refusing with 429 for ${r.ttlInSeconds} s`);
    }
    throw new ApiError(429, [`too many changes: more than ${r.max} mutating calls within ${settings.windowMs / 1000} s (rest.rate-limit.max-mutations); retry in ${r.ttlInSeconds} s`]);
  });
}
