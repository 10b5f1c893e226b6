/**
 * JSON schemas of the REST API. Input schemas check shape (types, required fields, no unknown
 * fields, lengths); the model's validate.ts then checks meaning (ids, timestamps in the future…)
 * with messages that name the problem. Output schemas make fastify serialise with
 * fast-json-stringify.
 *
 * The shapes used by more than one route are registered once (`sharedSchemas`, app.addSchema) and
 * referred to by `$ref: '<id>#'`; `ref(id)` writes such a reference.
 */
import { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ACTIONS, LONG_MAX_TEXT } from '../model/item';
import { CAUSE_MAX, MAX_BARE_EVACUATION_TIMEOUT_S, MIN_BARE_TIMEOUT_MS, SOURCE_MAX } from '../model/validate';
import type { PutOutcome } from './blocklist-service';

/** What a PUT that is not refused did: a new item, a merge into the live one, or nothing at all. */
const PUT_OUTCOMES = ['created', 'merged', 'unchanged'] as const satisfies readonly PutOutcome[];

/** The longest string a time field may be sent as (openapi-contract.ts documents the same bound). */
export const LONGISH_MAX = 40;
const longish = { anyOf: [{ type: 'integer' }, { type: 'string', maxLength: LONGISH_MAX }] } as const;
const booleanish = { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false'] }] } as const;

export const blockBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['action', 'cause'],
  properties: {
    action: { type: 'string', enum: [...ACTIONS] },
    endTimestamp: { ...longish, description: `When the block ends: epoch milliseconds (a number or a string of digits), in the future; exactly ${LONG_MAX_TEXT} = permanent. Exclusive with timeout; neither = permanent.` },
    timeout: {
      ...longish,
      description: `How long the block lasts from now: MILLISECONDS as a number or a string of digits (FLIP-224; a bare number under ${MIN_BARE_TIMEOUT_MS} is refused as seconds sent by mistake), or a duration with a unit: '600 ms', '90 s', '10 min', '2h', '1 d'. Exclusive with endTimestamp.`,
    },
    cause: { type: 'string', maxLength: CAUSE_MAX * 2 },
    allowMerge: booleanish,
    evacuationTimeout: {
      ...longish,
      description: `MARK_BLOCKED_AND_EVACUATE_TASKS: the grace period before the job's containers on the node are released, in SECONDS as a number or a string of digits (YARN's graceful decommission; 0 = at once, negative = wait forever; a bare number above ${MAX_BARE_EVACUATION_TIMEOUT_S} is refused as milliseconds sent by mistake), or a duration with a unit: '90 s', '10 min', '2 d', 'forever'. Answered in seconds.`,
    },
    // Up to 64 application ids joined with ',' (model/scope.ts), as GET answers a merged scope.
    scope: { type: 'string', maxLength: 64 * 41 },
    // What created the block (exclude-file:<path>, set by `blocklist import`); absent = by hand.
    source: { type: 'string', maxLength: SOURCE_MAX },
  },
} as const;

export const batchBodySchema = {
  type: 'array',
  maxItems: 10_000,
  items: {
    ...blockBodySchema,
    required: ['id', 'action', 'cause'],
    // action is checked by the model, so one 400 names every bad item (ajv would stop at the shape).
    properties: { ...blockBodySchema.properties, action: { type: 'string', maxLength: 64 }, id: { type: 'string', maxLength: 600 } },
  },
} as const;

export const dryRunQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { dryRun: { type: 'string', enum: ['true', 'false', ''] } },
} as const;

export const listQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: ['node', 'taskmanager', 'rack'] },
    scope: { type: 'string', maxLength: 64 },
    action: { type: 'string', enum: [...ACTIONS] },
    // Every item that applies to this application now (its own, cluster-wide, shared): model/scope.ts scopeCovers.
    appliesTo: { type: 'string', maxLength: 64 },
    // Paging (query values are strings; no coercion): the route checks the range.
    limit: { type: 'string', pattern: '^[0-9]{1,6}$' },
    after: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const;

const evacuationSchema = {
  type: 'object',
  properties: {
    node: { type: 'string' },
    phase: { type: 'string' },
    since: { type: 'integer' },
    // A number, not an integer: a timeout configured in ms may be 2.5 s, and the list (serialised
    // with JSON.stringify) must agree with the single item (fast-json-stringify would truncate).
    timeoutSeconds: { type: 'number' },
    deadline: { type: 'integer' },
    remainingSeconds: { type: 'integer' },
    containers: { type: 'array', items: { type: 'string' } },
    released: { type: 'array', items: { type: 'string' } },
    // What an evacuation (or a MARK_BLOCKED item's release of idle task managers) waits for, and how (src/sync/evacuation.ts).
    action: { type: 'string' },
    waiting: { type: 'object', properties: { code: { type: 'string' }, detail: { type: 'string' } } },
    idle: { type: 'array', items: { type: 'string' } },
    busy: { type: 'array', items: { type: 'string' } },
    checkpoint: { type: 'object', properties: { jobId: { type: 'string' }, id: { type: 'integer' }, status: { type: 'string' }, detail: { type: 'string' } } },
    step: { type: 'object', properties: { number: { type: 'integer' }, containers: { type: 'array', items: { type: 'string' } } } },
    runsOn: { type: 'string' },
  },
} as const;

const syncSchema = {
  type: 'object',
  properties: { state: { type: 'string' }, detail: { type: 'string' }, evacuation: evacuationSchema, nearest: { type: 'array', items: { type: 'string' } } },
} as const;

/** One item as GET /blocklist lists it: FLIP-224's fields first, then ours. */
export const itemSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    kind: { type: 'string' },
    action: { type: 'string' },
    startTimestamp: { type: 'string' },
    endTimestamp: { type: 'string' },
    cause: { type: 'string' },
    taskManagers: { type: 'array', items: { type: 'string' } },
    scope: { type: 'string' },
    evacuationTimeout: { type: 'integer' },
    source: { type: 'string' },
    createdBy: { type: 'string' },
    createdFrom: { type: 'string' },
    createdAt: { type: 'string' },
    updatedBy: { type: 'string' },
    updatedFrom: { type: 'string' },
    updatedAt: { type: 'string' },
    sync: syncSchema,
  },
} as const;

export const dryRunSchema = {
  type: 'object',
  properties: {
    blacklistAdditions: { type: 'array', items: { type: 'string' } },
    blacklistRemovals: { type: 'array', items: { type: 'string' } },
    containersToRelease: { type: 'array', items: { type: 'string' } },
    // Items the safety cap would hold back (stored, not blacklisted, not evacuating).
    deferred: { type: 'array', items: { type: 'string' } },
    // Present when the application's containers are not known: containersToRelease cannot be told, and why.
    containersUnknown: { type: 'string' },
  },
} as const;

/** PUT's answer: the item as stored now, what the request did (as a batch result's `outcome`), a dry run's effect. */
export const mutationItemSchema = {
  type: 'object',
  properties: {
    ...itemSchema.properties,
    outcome: { type: 'string', enum: [...PUT_OUTCOMES] },
    dryRun: { $ref: 'dryRun#' },
    // What the accepted block does not do that the caller may expect (a task manager container on another node).
    warnings: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const errorSchema = {
  type: 'object',
  // code: machine-readable reason of a refused block (exists, empty-cause), beside the words.
  properties: { errors: { type: 'array', items: { type: 'string' } }, code: { type: 'string' } },
} as const;

export const listResponseSchema = { type: 'object', additionalProperties: { $ref: 'item#' } } as const;

export const batchResultSchema = {
  type: 'object',
  properties: {
    results: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          status: { type: 'integer' },
          outcome: { type: 'string', enum: [...PUT_OUTCOMES, 'conflict'] },
          code: { type: 'string' },
          item: { $ref: 'item#' },
          errors: { type: 'array', items: { type: 'string' } },
          warnings: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    dryRun: { type: 'boolean' },
  },
} as const;

/** The schemas routes share, by id. */
const SHARED = {
  item: itemSchema,
  mutationItem: mutationItemSchema,
  dryRun: dryRunSchema,
  error: errorSchema,
  blockBody: blockBodySchema,
  dryRunQuery: dryRunQuerySchema,
} as const;

export type SharedSchema = keyof typeof SHARED;

/** `{ $ref: 'id#' }` for a shared schema. */
export const ref = (id: SharedSchema) => ({ $ref: `${id}#` });

/** Every route's refusals: Flink's `{errors}` body. */
export const errorResponses = { '4xx': ref('error'), '5xx': ref('error') } as const;

export const sharedSchemas = fp(async (app: FastifyInstance) => {
  for (const [id, schema] of Object.entries(SHARED)) app.addSchema({ $id: id, ...schema });
}, { name: 'shared-schemas' });
