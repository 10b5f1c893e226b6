/**
 * FLIP-224's blocklist endpoints (seeds 000 and 002, design §4):
 *   GET    /blocklist                       map id → item (seed 000 shape + our fields)
 *   POST   /blocklist                       batch add (seed 002), validated whole before any write
 *   PUT    /blocklist/nodes/{id}            201 created | 202 merged | 409 conflict | 400
 *   DELETE /blocklist/nodes/{id}            200 {} | 404   (also /blocklist/node/{id}: seed 000 spells it so)
 *   GET    /blocklist/nodes/{id}            one item with its sync and evacuation status
 *   PUT|DELETE|GET /blocklist/taskmanagers/{node}/{containerId}   (the '/' may be sent as %2F)
 * Mutations take ?dryRun=true: same status and body, plus what YARN would see; nothing written.
 */
import { DISABLED_STATUS, itemSyncStatus, itemTaskManagers } from './status-presenter';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BlockedItem, ItemKind, WireItem, toWire } from '../model/item';
import { newItem } from '../model/merge';
import { decide } from '../model/decide';
import { isExpired } from '../model/effective';
import { BlockSpec, ItemRef, parseBlockRequest, parseItemRef } from '../model/validate';
import { AddOutcome, outcomeOf } from '../store/store';
import { CorruptItemError } from '../store/codec';
import { ApiError, badRequest, sendErrors } from './errors';
import { ApiDeps } from './deps';
import { origin } from './principal';
import { DryRunEffect, previewChange } from './preview';
import { ListingCache, LiveParts, fullListing, listingPage } from './listing-cache';
import { capBasisOf } from '../sync/preview';
import {
  batchBodySchema,
  blockBodySchema,
  dryRunQuerySchema,
  errorSchema,
  itemSchema,
  listQuerySchema,
  listResponseSchema,
  mutationItemSchema,
} from './schemas';

type DryRunQuery = { dryRun?: string };
type ListQuery = { kind?: ItemKind; scope?: string; action?: string; limit?: string; after?: string };

export { STREAM_ABOVE } from './listing-cache';

/** Largest page of GET /blocklist?limit=; a page without limit (only after=) has DEFAULT_PAGE. */
export const MAX_PAGE = 10_000;
const DEFAULT_PAGE = 1_000;

export function blocklistRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { store, sync, clock, audit } = deps;
  const enabled = deps.enabled;

  /** The seed's item shape plus ours, with the live task managers and sync state. */
  const present = (item: BlockedItem) => {
    const taskManagers = itemTaskManagers(sync, item);
    const status = enabled ? itemSyncStatus(sync.view(), item.id, clock.now()) : DISABLED_STATUS;
    // Filled in place, not spread into new objects: GET /blocklist calls this per item, and the
    // spreads made it ~3x slower for 10,000 items (docs/benchmarks.md).
    const out = toWire(item) as WireItem & Record<string, unknown>;
    out.taskManagers = taskManagers;
    if (status) out.sync = status;
    return out;
  };

  const refOf = (raw: string, kind: ItemKind): ItemRef => {
    const r = parseItemRef(raw, kind);
    if (!r.ok) throw badRequest(r.errors);
    return r.value;
  };

  const requireEnabled = () => {
    if (!enabled) {
      throw new ApiError(503, ['the blocklist is disabled (cluster.resource-blocklist.enabled: false): nothing can be blocked or unblocked; enable it and restart the sidecar']);
    }
  };

  const requireAdmin = (req: FastifyRequest) => {
    if (req.principal.role !== 'admin') throw new ApiError(403, [`'${req.principal.name}' has the viewer role and cannot change the blocklist`]);
  };

  const isDryRun = (q: DryRunQuery) => q.dryRun === 'true' || q.dryRun === '';

  const effect = async (id: string, after: BlockedItem | undefined): Promise<DryRunEffect> =>
    previewChange(await store.list(), id, after, sync.view().applicationId, clock.now(), (n) => sync.taskManagersOn(n), capBasisOf(sync.view()));

  /** The outcome add() would have, computed without writing (dry run): the stores' own decide(). */
  const wouldAdd = async (item: BlockedItem, allowMerge: boolean): Promise<AddOutcome> =>
    outcomeOf(decide(await store.get(item.id), { item, allowMerge }, item.created.at));

  const afterAdd = (req: FastifyRequest, o: AddOutcome, cause: string, dryRun: boolean) => {
    const who = req.principal.name;
    const from = origin(req);
    if (o.outcome === 'created') audit.record({ op: 'block', id: o.item.id, who, from, outcome: 'created', after: o.item, dryRun });
    // A merge's line keeps the request's own cause: the merged one is bounded and may summarise it.
    else if (o.outcome === 'merged') audit.record({ op: 'block', id: o.item.id, who, from, outcome: 'merged', before: o.previous, after: o.item, cause, dryRun });
    else if (o.outcome === 'unchanged') audit.record({ op: 'block', id: o.item.id, who, from, outcome: 'unchanged', cause, dryRun });
    else audit.record({ op: 'block', id: o.existing.id, who, from, outcome: 'conflict', before: o.existing, detail: `${o.conflict.code}: ${o.conflict.message}`, dryRun });
    if (!dryRun && (o.outcome === 'created' || o.outcome === 'merged')) sync.kick(`${o.outcome} ${o.item.id}`);
  };

  /** 201 created, 202 merged or unchanged; a refusal by its code (a merge left without a cause is the request's fault). */
  const statusOf = (o: AddOutcome) =>
    o.outcome === 'created' ? 201 : o.outcome === 'conflict' ? (o.conflict.code === 'empty-cause' ? 400 : 409) : 202;

  async function put(kind: ItemKind, rawId: string, req: FastifyRequest<{ Querystring: DryRunQuery }>, reply: FastifyReply) {
    requireAdmin(req);
    requireEnabled();
    const now = clock.now();
    const spec = parseBlockRequest(refOf(rawId, kind), req.body, now);
    if (!spec.ok) throw badRequest(spec.errors);
    const item = newItem(spec.value, now, { by: req.principal.name, from: origin(req) });
    const dryRun = isDryRun(req.query);
    const o = dryRun ? await wouldAdd(item, spec.value.allowMerge) : await store.add({ item, allowMerge: spec.value.allowMerge });
    afterAdd(req, o, item.cause, dryRun);
    // `code` beside `errors`: programs (the CLI's import) act on it instead of parsing prose.
    if (o.outcome === 'conflict') return reply.code(statusOf(o)).type('application/json').send({ errors: [o.conflict.message], code: o.conflict.code });
    const body: Record<string, unknown> = present(o.item);
    if (dryRun) body.dryRun = await effect(o.item.id, o.item);
    return reply.code(statusOf(o)).send(body);
  }

  /** DELETE of a row that cannot be decoded: the only way it goes (it is never enforced nor expired). */
  async function removeQuarantined(id: string, req: FastifyRequest, reply: FastifyReply, dryRun: boolean) {
    const row = dryRun ? store.quarantined?.().find((r) => r.id === id) ?? { id, reason: 'cannot be decoded' } : await store.removeQuarantined?.(id);
    audit.record({ op: 'unblock', id, who: req.principal.name, from: origin(req), outcome: row ? 'removed-quarantined' : 'not-found', detail: row?.reason, dryRun });
    if (!row) return sendErrors(reply, 404, [`'${id}' is not blocked`]);
    if (dryRun) return reply.code(200).send({ dryRun: { blacklistAdditions: [], blacklistRemovals: [], containersToRelease: [], deferred: [] } satisfies DryRunEffect });
    sync.kick(`removed quarantined ${id}`);
    return reply.code(200).send({});
  }

  async function del(kind: ItemKind, rawId: string, req: FastifyRequest<{ Querystring: DryRunQuery }>, reply: FastifyReply) {
    requireAdmin(req);
    requireEnabled();
    const ref = refOf(rawId, kind);
    const dryRun = isDryRun(req.query);
    // An item past its end is gone, whether or not the expiry job has purged it: 404, and neither
    // a delete nor a `removed` audit line (expiry removes and audits it).
    let current: BlockedItem | undefined;
    try {
      current = await store.get(ref.id);
    } catch (e) {
      if (e instanceof CorruptItemError && store.removeQuarantined) return removeQuarantined(ref.id, req, reply, dryRun);
      throw e;
    }
    const ended = current !== undefined && isExpired(current, clock.now());
    const removed = !current || ended ? undefined : dryRun ? current : await store.remove(ref.id);
    audit.record({ op: 'unblock', id: ref.id, who: req.principal.name, from: origin(req), outcome: removed ? 'removed' : 'not-found', before: removed, dryRun });
    if (ended && current) return sendErrors(reply, 404, [`'${ref.id}' is not blocked (its block ended at ${new Date(current.endTimestamp).toISOString()})`]);
    if (!removed) return sendErrors(reply, 404, [`'${ref.id}' is not blocked`]);
    if (dryRun) return reply.code(200).send({ dryRun: await effect(ref.id, undefined) });
    sync.kick(`removed ${ref.id}`);
    return reply.code(200).send({});
  }

  async function getOne(kind: ItemKind, rawId: string, reply: FastifyReply) {
    const ref = refOf(rawId, kind);
    const item = await store.get(ref.id);
    if (!item || isExpired(item, clock.now())) return sendErrors(reply, 404, [`'${ref.id}' is not blocked`]);
    return reply.send(present(item));
  }

  const mutationResponses = { 200: mutationItemSchema, 201: mutationItemSchema, 202: mutationItemSchema, '4xx': errorSchema, '5xx': errorSchema };
  const deleteResponses = { 200: { type: 'object', properties: { dryRun: mutationItemSchema.properties.dryRun } }, '4xx': errorSchema, '5xx': errorSchema };

  // The listing is served from a serialisation cached per store version (listing-cache.ts);
  // `live` is present()'s live part, appended per request.
  const listing = new ListingCache(store);
  const live = (item: BlockedItem): LiveParts => {
    const taskManagers = itemTaskManagers(sync, item);
    const status = enabled ? itemSyncStatus(sync.view(), item.id, clock.now()) : DISABLED_STATUS;
    return status ? { taskManagers, sync: status } : { taskManagers };
  };
  // Full listings in flight: each streams the whole body, so past the bound a caller is told to
  // come back (or to page) instead of piling up work and memory.
  const maxFull = deps.maxConcurrentListings ?? 32;
  let fullInFlight = 0;
  const json = 'application/json; charset=utf-8';
  // The 200 schema documents the shape; the body is a prepared string, which Fastify sends as is.
  app.get<{ Querystring: ListQuery }>('/blocklist', { schema: { querystring: listQuerySchema, response: { 200: listResponseSchema, '4xx': errorSchema, '5xx': errorSchema } } }, async (req, reply) => {
    const q = req.query;
    const filter = { kind: q.kind, scope: q.scope, action: q.action };
    const now = clock.now();
    if (q.limit !== undefined || q.after !== undefined) {
      const limit = q.limit === undefined ? DEFAULT_PAGE : Number(q.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw badRequest([`limit must be a whole number from 1 to ${MAX_PAGE}, not '${q.limit}'`]);
      const page = listingPage(listing, await listing.entries(), { now, filter, after: q.after, limit, live });
      if (page.next !== undefined) {
        const next = new URLSearchParams();
        for (const [k, v] of Object.entries(filter)) if (v !== undefined) next.set(k, v);
        next.set('limit', String(limit));
        next.set('after', page.next);
        reply.header('link', `</blocklist?${next.toString()}>; rel="next"`);
      }
      return reply.type(json).send(page.body);
    }
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
      return reply.type(json).send(fullListing(listing, await listing.entries(), { now, filter, live }));
    } catch (e) {
      release();
      throw e;
    }
  });

  for (const [prefix, kind] of [['/blocklist/nodes/', 'node'], ['/blocklist/taskmanagers/', 'taskmanager']] as const) {
    // A wildcard, not ':id', so a task manager id may carry its '/' unencoded or as %2F.
    const path = `${prefix}*`;
    type R = { Params: { '*': string }; Querystring: DryRunQuery };
    app.put<R>(path, { schema: { body: blockBodySchema, querystring: dryRunQuerySchema, response: mutationResponses } }, (req, reply) => put(kind, req.params['*'], req, reply));
    app.delete<R>(path, { schema: { querystring: dryRunQuerySchema, response: deleteResponses } }, (req, reply) => del(kind, req.params['*'], req, reply));
    app.get<R>(path, { schema: { response: { 200: itemSchema, '4xx': errorSchema } } }, (req, reply) => getOne(kind, req.params['*'], reply));
  }
  // Seed 000 writes the delete as DELETE /blocklist/node/<id>.
  app.delete<{ Params: { '*': string }; Querystring: DryRunQuery }>('/blocklist/node/*', { schema: { querystring: dryRunQuerySchema, response: deleteResponses } }, (req, reply) => del('node', req.params['*'], req, reply));

  // One expiry pass now, for system cron (`blocklist expire`): the same job as the schedule.
  app.post('/blocklist/expire', { schema: { response: { 200: { type: 'object', properties: { removed: { type: 'array', items: itemSchema } } }, '4xx': errorSchema, '5xx': errorSchema } } }, async (req, reply) => {
    requireAdmin(req);
    requireEnabled();
    if (!deps.expire) return sendErrors(reply, 404, ['this sidecar runs no expiry job']);
    const out = await deps.expire();
    if (out.outcome === 'failed') return sendErrors(reply, 503, [`expiry pass failed: ${out.error}; nothing acknowledged, retry later`]);
    if (out.outcome === 'skipped') return sendErrors(reply, 409, [`an expiry pass is already running (${out.reason}); retry in a moment`]);
    return { removed: out.items.map((i) => ({ ...toWire(i), taskManagers: [] })) };
  });

  const batchResultSchema = {
    type: 'object',
    properties: {
      results: {
        type: 'array',
        items: {
          type: 'object',
          properties: { id: { type: 'string' }, status: { type: 'integer' }, outcome: { type: 'string' }, code: { type: 'string' }, item: itemSchema, errors: { type: 'array', items: { type: 'string' } } },
        },
      },
      dryRun: { type: 'boolean' },
    },
  };

  app.post<{ Querystring: DryRunQuery; Body: unknown[] }>(
    '/blocklist',
    { schema: { body: batchBodySchema, querystring: dryRunQuerySchema, response: { 200: batchResultSchema, '4xx': errorSchema, '5xx': errorSchema } } },
    async (req) => {
      requireAdmin(req);
      requireEnabled();
      const now = clock.now();
      const errors: string[] = [];
      const specs: BlockSpec[] = [];
      req.body.forEach((raw, i) => {
        const body = raw as Record<string, unknown>;
        const ref = parseItemRef(body.id);
        if (!ref.ok) {
          errors.push(...ref.errors.map((e) => `item ${i}: ${e}`));
          return;
        }
        const s = parseBlockRequest(ref.value, body, now);
        if (!s.ok) errors.push(...s.errors.map((e) => `item ${i} (${ref.value.id}): ${e}`));
        else specs.push(s.value);
      });
      if (errors.length) throw badRequest(errors);
      const actor = { by: req.principal.name, from: origin(req) };
      const reqs = specs.map((s) => ({ item: newItem(s, now, actor), allowMerge: s.allowMerge }));
      const dryRun = isDryRun(req.query);
      let outcomes: AddOutcome[];
      if (dryRun) {
        outcomes = [];
        for (const r of reqs) outcomes.push(await wouldAdd(r.item, r.allowMerge));
      } else outcomes = await store.addMany(reqs);
      outcomes.forEach((o, i) => afterAdd(req, o, reqs[i].item.cause, dryRun));
      return {
        results: outcomes.map((o) =>
          o.outcome === 'conflict'
            ? { id: o.existing.id, status: statusOf(o), outcome: o.outcome, code: o.conflict.code, errors: [o.conflict.message] }
            : { id: o.item.id, status: statusOf(o), outcome: o.outcome, item: present(o.item) },
        ),
        ...(dryRun ? { dryRun: true } : {}),
      };
    },
  );

}
