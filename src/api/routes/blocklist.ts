/**
 * FLIP-224's blocklist endpoints, each a thin wrapper of BlocklistService:
 *   GET    /blocklist                       map id → item
 *   POST   /blocklist                       batch add, validated whole before any write
 *   PUT    /blocklist/nodes/{id}            201 created | 202 merged or unchanged (body: `outcome`) | 409 | 400
 *   DELETE /blocklist/nodes/{id}            200 {} | 404   (also /blocklist/node/{id}, as FLIP-224 spells it once)
 *   GET    /blocklist/nodes/{id}            one item with its sync and evacuation status
 *   PUT|DELETE|GET /blocklist/taskmanagers/{node}/{containerId}   (the '/' may be sent as %2F)
 *   PUT|DELETE|GET /blocklist/racks/{rack}   the rack path as YARN names it, URL-encoded (%2Fdefault-rack)
 *   POST   /blocklist/expire                one expiry pass (system cron)
 * Mutations take ?dryRun=true: same status and body, plus what YARN would see; nothing written.
 * Routes that change the blocklist say `config: { mutates: true }` (mutations.ts, rate-limit.ts).
 * Request meaning is checked in a route preHandler, before the rate limit counts the request.
 */
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BlockedItem, ItemKind, WireItem, wireTag } from '../../model/item';
import { BlockSpec, ItemRef } from '../../model/validate';
import { parseApplicationId } from '../../model/ids';
import { Answer, BlocklistService, Caller, ListFilter } from '../blocklist-service';
import { origin } from '../principal';
import { badRequest, sendErrors } from '../errors';
import { ListingCache, ListingFilter } from '../listing-cache';
import { fullListing, listingPage } from '../listing-body';
import { batchBodySchema, batchResultSchema, errorResponses, listQuerySchema, listResponseSchema, ref } from '../schemas';
import { mapInSlices } from '../slices';

type DryRunQuery = { dryRun?: string };
type ItemRoute = { Params: { '*': string }; Querystring: DryRunQuery };

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by an item route's preHandler: the path's item. */
    itemRef?: ItemRef;
    /** Set by a block route's preHandler: the validated request(s). */
    blockSpecs?: BlockSpec[];
  }
}

export { STREAM_ABOVE } from '../listing-body';

/** Largest page of GET /blocklist?limit=; a page without limit (only after=) has DEFAULT_PAGE. */
export const MAX_PAGE = 10_000;
const DEFAULT_PAGE = 1_000;

type ListQuery = ListFilter & { limit?: string; after?: string };

const isDryRun = (q: DryRunQuery) => q.dryRun === 'true' || q.dryRun === '';
const callerOf = (req: FastifyRequest): Caller => ({ name: req.principal.name, from: origin(req) });
const send = (reply: FastifyReply, a: Answer) => reply.code(a.status).send(a.body);

/**
 * A batch's answer, serialised in slices (10,000 results are megabytes of JSON: one
 * serialisation held the loop) and sent as the prepared text it is; a refusal as any other.
 */
async function sendBatch(reply: FastifyReply, a: Answer): Promise<FastifyReply> {
  const body = a.body as { results?: unknown[]; dryRun?: boolean };
  if (a.status !== 200 || !Array.isArray(body.results)) return send(reply, a);
  const parts = await mapInSlices(body.results, (r) => JSON.stringify(r));
  const text = `{"results":[${parts.join(',')}]${body.dryRun ? ',"dryRun":true' : ''}}`;
  return reply.code(200).type('application/json; charset=utf-8').send(text);
}
/**
 * HTTP If-Match on a PUT or DELETE of one item: change it only if it is still the version the
 * caller saw (its ETag); otherwise 412 `code: changed` and nothing changes. For a client that
 * confirms what it previewed a while ago (the console, `import --sync`).
 */
const ifMatchOf = (req: FastifyRequest): string | undefined => {
  const h = req.headers['if-match'];
  return typeof h === 'string' && h.trim() !== '' ? h : undefined;
};

const mutation = { ...errorResponses, 201: ref('mutationItem'), 202: ref('mutationItem') };
const deletion = { ...errorResponses, 200: { type: 'object', properties: { dryRun: ref('dryRun') } } };
const dryRunQuery = ref('dryRunQuery');
/** If-Match, documented for client generators (the handler reads it: ifMatchOf). */
const ifMatchHeader = {
  type: 'object',
  properties: { 'if-match': { type: 'string', description: 'Change the item only if it is still this version (the ETag GET answers); else 412 with code "changed".' } },
} as const;

/**
 * GET /blocklist: every live item, filtered, from a serialisation cached per store version
 * (listing-cache.ts) with the live parts appended per request; pages with ?limit=&after=. Full
 * listings in flight are bounded: each streams the whole body, so past the bound a caller is told
 * to come back (or to page) instead of piling up work and memory.
 */
function listRoute(app: FastifyInstance, svc: BlocklistService, listing: ListingCache, maxFull: number): void {
  const json = 'application/json; charset=utf-8';
  const live = (item: BlockedItem) => svc.live(item);
  let fullInFlight = 0;
  const page = async (q: ListQuery, reply: FastifyReply, filter: ListingFilter) => {
    const limit = q.limit === undefined ? DEFAULT_PAGE : Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badRequest([`limit must be a whole number from 1 to ${MAX_PAGE}, not '${q.limit}'`]);
    const p = listingPage(listing, await listing.entries(), { now: svc.now(), filter, after: q.after, limit, live });
    if (p.next !== undefined) {
      const next = new URLSearchParams();
      for (const [k, v] of Object.entries(filter)) if (v !== undefined) next.set(k, v);
      next.set('limit', String(limit));
      next.set('after', p.next);
      reply.header('link', `</blocklist?${next.toString()}>; rel="next"`);
    }
    return reply.type(json).send(p.body);
  };
  // The 200 schema documents the shape; the body is a prepared string, which Fastify sends as is.
  app.get<{ Querystring: ListQuery }>('/blocklist', { schema: { querystring: listQuerySchema, response: { 200: listResponseSchema, ...errorResponses } } }, async (req, reply) => {
    const q = req.query;
    if (q.appliesTo !== undefined) {
      const app = parseApplicationId(q.appliesTo);
      if (!app.ok) throw badRequest([`appliesTo: ${app.error}`]);
    }
    const filter: ListingFilter = { kind: q.kind, scope: q.scope, action: q.action, appliesTo: q.appliesTo };
    if (q.limit !== undefined || q.after !== undefined) return page(q, reply, filter);
    if (fullInFlight >= maxFull) {
      reply.header('retry-after', '1');
      return sendErrors(reply, 503, [`${fullInFlight} full listings are being sent (rest.listing.max-concurrent: ${maxFull}); retry after 1 s, or page with ?limit=&after=`]);
    }
    fullInFlight++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      fullInFlight--;
    };
    reply.raw.once('close', release);
    try {
      return reply.type(json).send(fullListing(listing, await listing.entries(), { now: svc.now(), filter, live }));
    } catch (e) {
      release();
      throw e;
    }
  });
}

/** PUT, DELETE and GET of one item under `prefix` (nodes or task managers). */
function itemRoutes(app: FastifyInstance, svc: BlocklistService, prefix: string, kind: ItemKind): void {
  // A wildcard, not ':id', so a task manager id may carry its '/' unencoded or as %2F.
  const path = `${prefix}*`;
  const withRef = async (req: FastifyRequest<ItemRoute>) => {
    req.itemRef = svc.ref(req.params['*'], kind);
  };
  const withSpec = async (req: FastifyRequest<ItemRoute>) => {
    req.blockSpecs = [svc.spec(svc.ref(req.params['*'], kind), req.body)];
  };
  const remove = async (req: FastifyRequest<ItemRoute>, reply: FastifyReply) => send(reply, await svc.remove(req.itemRef as ItemRef, callerOf(req), isDryRun(req.query), ifMatchOf(req)));
  app.put<ItemRoute>(path, { config: { mutates: true }, schema: { body: ref('blockBody'), querystring: dryRunQuery, headers: ifMatchHeader, response: mutation }, preHandler: withSpec }, async (req, reply) =>
    send(reply, await svc.put((req.blockSpecs as BlockSpec[])[0], callerOf(req), isDryRun(req.query), ifMatchOf(req))),
  );
  app.delete<ItemRoute>(path, { config: { mutates: true }, schema: { querystring: dryRunQuery, headers: ifMatchHeader, response: deletion }, preHandler: withRef }, remove);
  // FLIP-224 writes the delete once as DELETE /blocklist/node/<id>.
  if (kind === 'node') app.delete<ItemRoute>('/blocklist/node/*', { config: { mutates: true }, schema: { querystring: dryRunQuery, headers: ifMatchHeader, response: deletion }, preHandler: withRef }, remove);
  app.get<ItemRoute>(path, { schema: { response: { 200: ref('item'), '4xx': ref('error') } }, preHandler: withRef }, async (req, reply) => {
    const a = await svc.get(req.itemRef as ItemRef);
    // The item's version (If-Match on a later PUT or DELETE changes only this version).
    if (a.status === 200) reply.header('etag', wireTag(a.body as WireItem));
    return send(reply, a);
  });
}

/** POST /blocklist (a batch) and POST /blocklist/expire. */
function postRoutes(app: FastifyInstance, svc: BlocklistService): void {
  app.post<{ Querystring: DryRunQuery; Body: unknown[] }>(
    '/blocklist',
    {
      config: { mutates: true },
      schema: { body: batchBodySchema, querystring: dryRunQuery, response: { ...errorResponses, 200: batchResultSchema } },
      preHandler: async (req) => {
        req.blockSpecs = await svc.specs(req.body);
      },
    },
    async (req, reply) => sendBatch(reply, await svc.batch(req.blockSpecs as BlockSpec[], callerOf(req), isDryRun(req.query))),
  );
  // One expiry pass now, for system cron (`blocklist expire`): the same job as the schedule.
  const removed = { type: 'object', properties: { removed: { type: 'array', items: ref('item') } } };
  app.post('/blocklist/expire', { config: { mutates: true }, schema: { response: { ...errorResponses, 200: removed } } }, async (_req, reply) => send(reply, await svc.expire()));
}

export interface BlocklistRoutesOptions {
  service: BlocklistService;
  /** GET /blocklist's cached serialisation of the store's items. */
  listing: ListingCache;
  /** Most full GET /blocklist responses in flight at once (rest.listing.max-concurrent). */
  maxConcurrentListings: number;
}

export async function blocklistRoutes(app: FastifyInstance, opts: BlocklistRoutesOptions): Promise<void> {
  listRoute(app, opts.service, opts.listing, opts.maxConcurrentListings);
  itemRoutes(app, opts.service, '/blocklist/nodes/', 'node');
  itemRoutes(app, opts.service, '/blocklist/taskmanagers/', 'taskmanager');
  // A rack by its path as YARN names it, '/' sent as %2F (/blocklist/racks/%2Fdefault-rack).
  itemRoutes(app, opts.service, '/blocklist/racks/', 'rack');
  postRoutes(app, opts.service);
}
