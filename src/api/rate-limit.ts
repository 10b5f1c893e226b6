/**
 * A rate limit on the routes that change the blocklist (`config: { mutates: true }`), with
 * @fastify/rate-limit's own per-route configuration: a runaway script must not turn the store,
 * YARN and the audit log into its loop. Reads are not limited (dashboards poll).
 *
 * Buckets (one budget shared by all mutating routes):
 *  - with auth: one per principal, so a flooding token does not lock out another;
 *  - without auth (loopback only): one per TCP connection, so one local client flooding over its
 *    connection does not lock out the operator's next command, which opens its own.
 * Counted at preHandler: after auth, the mutation guard, the body's shape (schema) and the route's
 * own validation (its preHandler runs first), so refused and invalid requests spend no budget of
 * valid ones. Over the limit: 429 in Flink's error shape with Retry-After.
 */
import rateLimit, { FastifyRateLimitStore } from '@fastify/rate-limit';
import { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Logger } from '../core/logger';
import { RateLimitSettings } from '../security/rest-security';
import { ApiError } from './errors';

export function rateLimitKey(req: FastifyRequest): string {
  const p = req.principal;
  if (p && p.name !== 'anonymous') return `principal:${p.name}`;
  return `connection:${req.ip}:${req.socket.remotePort ?? '?'}`;
}

/** Most keys remembered; past it the ones whose window has ended are dropped first. */
const MAX_KEYS = 10_000;

/**
 * Fixed-window counters shared by every mutating route: the plugin's own local store makes one
 * store per route (`child`), which would give each route its own budget.
 */
class SharedWindowStore implements FastifyRateLimitStore {
  private readonly windows = new Map<string, { count: number; start: number }>();

  incr(key: string, cb: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.start + timeWindow <= now) {
      if (!w && this.windows.size >= MAX_KEYS) this.prune(now, timeWindow);
      w = { count: 0, start: now };
      this.windows.set(key, w);
    }
    w.count++;
    cb(null, { current: w.count, ttl: w.start + timeWindow - now });
  }

  child(): FastifyRateLimitStore {
    return this;
  }

  private prune(now: number, timeWindow: number): void {
    for (const [k, w] of this.windows) if (w.start + timeWindow <= now) this.windows.delete(k);
    // All still live (a flood from very many connections): forget the oldest.
    for (const k of this.windows.keys()) {
      if (this.windows.size < MAX_KEYS) break;
      this.windows.delete(k);
    }
  }
}

export const mutationRateLimit = fp(async (app: FastifyInstance, opts: { settings: RateLimitSettings; logger: Logger }) => {
  const { settings, logger } = opts;
  if (settings.max <= 0) return;
  /** key → end of the window in which its refusal was already logged (one warning per key and window). */
  const warned = new Map<string, number>();
  const limit = {
    max: settings.max,
    timeWindow: settings.windowMs,
    keyGenerator: rateLimitKey,
    errorResponseBuilder: (_req: FastifyRequest, ctx: { max: number; ttl: number }) => {
      const seconds = Math.max(1, Math.ceil(ctx.ttl / 1000));
      return new ApiError(429, [`too many changes: more than ${ctx.max} mutating calls within ${settings.windowMs / 1000} s (rest.rate-limit.max-mutations); retry in ${seconds} s`]);
    },
    onExceeded: (req: FastifyRequest, key: string) => {
      const now = Date.now();
      if ((warned.get(key) ?? 0) > now) return;
      for (const [k, until] of warned) if (until <= now) warned.delete(k);
      warned.set(key, now + settings.windowMs);
      logger.warn(`rate limit: ${key} made more than ${settings.max} mutating calls within ${settings.windowMs} ms; refusing ${req.method} ${req.url.split('?')[0]} with 429`);
    },
  };
  // Before the plugin's own onRoute hook (registered next), so it sees the route's rateLimit.
  app.addHook('onRoute', (route) => {
    if (route.config?.mutates) route.config = { ...route.config, rateLimit: limit };
  });
  const shared = new SharedWindowStore();
  await app.register(rateLimit, { global: false, hook: 'preHandler', store: function SharedStore() { return shared; } as unknown as new () => FastifyRateLimitStore });
}, { name: 'mutation-rate-limit', dependencies: ['principal'] });
