/**
 * FLIP-224's blocklist endpoints, each a thin wrapper of BlocklistService:
 *   GET    /blocklist                       map id → item
 *   POST   /blocklist                       batch add, validated whole before any write
 *   PUT    /blocklist/nodes/{id}            201 created | 202 merged | 409 conflict | 400
 *   DELETE /blocklist/nodes/{id}            200 {} | 404   (also /blocklist/node/{id}, as FLIP-224 spells it once)
 *   GET    /blocklist/nodes/{id}            one item with its sync and evacuation status
 *   PUT|DELETE|GET /blocklist/taskmanagers/{node}/{containerId}   (the '/' may be sent as %2F)
 *   POST   /blocklist/expire                one expiry pass (system cron)
 * Mutations take ?dryRun=true: same status and body, plus what YARN would see; nothing written.
 * Routes that change the blocklist say `config: { mutates: true }` (mutations.ts, rate-limit.ts).
 * Request meaning is checked in a route preHandler, before the rate limit counts the request.
 */
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { BlockedItem, ItemKind } from '../../model/item';
import { BlockSpec, ItemRef } from '../../model/validate';
import { Answer, BlocklistService, Caller, ListFilter, PresentedItem } from '../blocklist-service';
import { origin } from '../principal';
import { batchBodySchema, batchResultSchema, errorResponses, listQuerySchema, listResponseSchema, ref } from '../schemas';

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

/**
 * Above this many items GET /blocklist streams its body. Below it one JSON.stringify is faster
 * (10,000 items: ~2.5× the bare serialisation, against ~3.4× streamed) and the body is a few MB.
 */
export const STREAM_ABOVE = 20_000;
const SLICE = 500;

/** The JSON map `{id: item, …}` in slices of SLICE items, built only as the socket takes them. */
function* listChunks(items: BlockedItem[], present: (item: BlockedItem) => PresentedItem): Generator<string> {
  yield '{';
  for (let i = 0; i < items.length; i += SLICE) {
    const parts: string[] = [];
    for (const item of items.slice(i, i + SLICE)) parts.push(`${JSON.stringify(item.id)}:${JSON.stringify(present(item))}`);
    yield (i === 0 ? '' : ',') + parts.join(',');
  }
  yield '}';
}

const isDryRun = (q: DryRunQuery) => q.dryRun === 'true' || q.dryRun === '';
const callerOf = (req: FastifyRequest): Caller => ({ name: req.principal.name, from: origin(req) });
const send = (reply: FastifyReply, a: Answer) => reply.code(a.status).send(a.body);

const mutation = { ...errorResponses, 200: ref('mutationItem'), 201: ref('mutationItem'), 202: ref('mutationItem') };
const deletion = { ...errorResponses, 200: { type: 'object', properties: { dryRun: ref('dryRun') } } };
const dryRunQuery = ref('dryRunQuery');

/** GET /blocklist: every live item, filtered; streamed above STREAM_ABOVE items. */
function listRoute(app: FastifyInstance, svc: BlocklistService): void {
  // Serialised with JSON.stringify, not the schema's fast-json-stringify: for a map of 10,000
  // items the latter measured 5-10x slower (docs/benchmarks.md). The schema documents the shape.
  const listSerializer = () => (data: unknown) => JSON.stringify(data);
  app.get<{ Querystring: ListFilter }>('/blocklist', { schema: { querystring: listQuerySchema, response: { 200: listResponseSchema, '4xx': ref('error') } }, serializerCompiler: listSerializer }, async (req, reply) => {
    const items = await svc.list(req.query);
    // Large lists are streamed in slices: 100,000 items would otherwise be held three times at
    // once (items, response objects, one big string), pushing the sidecar's RSS past its budget.
    if (items.length > STREAM_ABOVE) return reply.type('application/json; charset=utf-8').send(Readable.from(listChunks(items, (i) => svc.present(i))));
    const out: Record<string, PresentedItem> = {};
    for (const item of items) out[item.id] = svc.present(item);
    return out;
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
  const remove = async (req: FastifyRequest<ItemRoute>, reply: FastifyReply) => send(reply, await svc.remove(req.itemRef as ItemRef, callerOf(req), isDryRun(req.query)));
  app.put<ItemRoute>(path, { config: { mutates: true }, schema: { body: ref('blockBody'), querystring: dryRunQuery, response: mutation }, preHandler: withSpec }, async (req, reply) =>
    send(reply, await svc.put((req.blockSpecs as BlockSpec[])[0], callerOf(req), isDryRun(req.query))),
  );
  app.delete<ItemRoute>(path, { config: { mutates: true }, schema: { querystring: dryRunQuery, response: deletion }, preHandler: withRef }, remove);
  // FLIP-224 writes the delete once as DELETE /blocklist/node/<id>.
  if (kind === 'node') app.delete<ItemRoute>('/blocklist/node/*', { config: { mutates: true }, schema: { querystring: dryRunQuery, response: deletion }, preHandler: withRef }, remove);
  app.get<ItemRoute>(path, { schema: { response: { 200: ref('item'), '4xx': ref('error') } }, preHandler: withRef }, async (req, reply) => send(reply, await svc.get(req.itemRef as ItemRef)));
}

/** POST /blocklist (a batch) and POST /blocklist/expire. */
function postRoutes(app: FastifyInstance, svc: BlocklistService): void {
  app.post<{ Querystring: DryRunQuery; Body: unknown[] }>(
    '/blocklist',
    {
      config: { mutates: true },
      schema: { body: batchBodySchema, querystring: dryRunQuery, response: { ...errorResponses, 200: batchResultSchema } },
      preHandler: async (req) => {
        req.blockSpecs = svc.specs(req.body);
      },
    },
    async (req, reply) => send(reply, await svc.batch(req.blockSpecs as BlockSpec[], callerOf(req), isDryRun(req.query))),
  );
  // One expiry pass now, for system cron (`blocklist expire`): the same job as the schedule.
  const removed = { type: 'object', properties: { removed: { type: 'array', items: ref('item') } } };
  app.post('/blocklist/expire', { config: { mutates: true }, schema: { response: { ...errorResponses, 200: removed } } }, async (_req, reply) => send(reply, await svc.expire()));
}

export async function blocklistRoutes(app: FastifyInstance, opts: { service: BlocklistService }): Promise<void> {
  listRoute(app, opts.service);
  itemRoutes(app, opts.service, '/blocklist/nodes/', 'node');
  itemRoutes(app, opts.service, '/blocklist/taskmanagers/', 'taskmanager');
  postRoutes(app, opts.service);
}
