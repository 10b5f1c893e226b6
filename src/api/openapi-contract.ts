/**
 * What GET /openapi.json says the server accepts and answers, beyond the shapes the routes
 * validate with (those stay loose so the model's validate.ts names each problem in words): the id
 * grammars, the value ranges, the patterns of text fields, and every status code an operation
 * answers. Built from the model's own constants and patterns, so the rules have one source; the
 * drift test (test/api/openapi-drift.unit.test.ts) sends schema-generated requests and fails when
 * the server and this document disagree.
 *
 * Rules no schema can state are said in the field descriptions and listed in NON_SCHEMA_RULES
 * (an end in the future; a duration with a unit within its bounds).
 */
import { ACTIONS, LONG_MAX_TEXT } from '../model/item';
import { APPLICATION_ID_PATTERN, CONTAINER_ID_PATTERN, HOST_MAX, HOST_NAME_PATTERN, RACK_SEGMENT_PATTERN } from '../model/ids';
import { CAUSE_MAX, MAX_BARE_EVACUATION_TIMEOUT_S, MAX_END, MAX_EVACUATION_TIMEOUT_S, MAX_TIMEOUT_MS, MIN_BARE_TIMEOUT_MS, SOURCE_MAX } from '../model/validate';
import { SCOPE_APPS_MAX } from '../model/scope';
import { LONGISH_MAX } from './schemas';

/** Regex source of the decimal numbers from 10^(minDigits-1) to max, without leading zeros. */
export function decimalUpTo(max: bigint, minDigits = 1): string {
  const m = max.toString();
  const n = m.length;
  const alts: string[] = [];
  // Fewer digits than max: any such number of at least minDigits digits.
  if (n - 1 >= minDigits) alts.push(`[1-9][0-9]{${minDigits - 1},${n - 2}}`);
  // As many digits as max: the standard digit-by-digit bound.
  for (let i = 0; i < n; i++) {
    const d = Number(m[i]);
    const low = i === 0 ? 1 : 0;
    if (d > low) alts.push(`${m.slice(0, i)}[${low}-${d - 1}]${n - i - 1 > 0 ? `[0-9]{${n - i - 1}}` : ''}`);
  }
  alts.push(m);
  return `(?:${alts.join('|')})`;
}

/** A string of digits as parseLong reads it: trimmed, at most 19 digits with leading zeros, then the value's bounds. */
function digitString(value: string, negative = ''): string {
  return `^(?=\\s*-?[0-9]{1,19}\\s*$)\\s*${negative}0*${value}\\s*$`;
}

const caseless = (word: string) => [...word].map((c) => `[${c.toLowerCase()}${c.toUpperCase()}]`).join('');
const UNITS = ['ms', 'milli', 'millis', 'millisecond', 'milliseconds', 's', 'sec', 'secs', 'second', 'seconds', 'm', 'min', 'mins', 'minute', 'minutes', 'h', 'hour', 'hours', 'd', 'day', 'days'];
/** A duration with a unit, Flink's syntax (model/duration.ts): "600 ms", "90 s", "10 min", "2h", "1.5 d". */
const withUnit = (negative: boolean) => `^\\s*${negative ? '-?' : ''}[0-9]+(?:\\.[0-9]+)?\\s*(?:${[...UNITS].sort((a, b) => b.length - a.length).map(caseless).join('|')})\\s*$`;

const CONTROL = '\\u0000-\\u001f\\u007f';
const RACK_PATTERN = `^(?=.{1,${HOST_MAX}}$)(?:/${RACK_SEGMENT_PATTERN})+$`;
const HOST_PATTERN = `^(?=.{1,${HOST_MAX}}$)${HOST_NAME_PATTERN}$`;
const TASK_MANAGER_PATTERN = `^(?=[^/]{1,${HOST_MAX}}/)${HOST_NAME_PATTERN}/${CONTAINER_ID_PATTERN}$`;
const APP_OR_CLUSTER = `(?:cluster|${APPLICATION_ID_PATTERN})`;

/** The id of one item, by route: a host, `<host>/<containerId>`, a rack path. */
export const ID_SCHEMAS = {
  node: { type: 'string', pattern: HOST_PATTERN, description: `a NodeManager host name as YARN names it (no port): dot-separated labels of letters, digits, '-' and '_', each 1-63 long, at most ${HOST_MAX} characters; not '*'` },
  taskmanager: { type: 'string', pattern: TASK_MANAGER_PATTERN, description: "<node>/<containerId> (the '/' may be sent as %2F), e.g. node1/container_e01_1652313600000_0001_01_000002" },
  rack: { type: 'string', pattern: RACK_PATTERN, description: "a rack path as YARN names it, URL-encoded ('/' as %2F): /default-rack, /dc1/rack7" },
} as const;

const endTimestamp = {
  description: `When the block ends, epoch MILLISECONDS: an integer, or a string of digits; it must be in the future; exactly ${LONG_MAX_TEXT} (number or string) is permanent. Exclusive with timeout; neither = permanent.`,
  anyOf: [
    { type: 'integer', minimum: 1, maximum: MAX_END },
    { type: 'string', maxLength: LONGISH_MAX, pattern: digitString(`(?:${decimalUpTo(BigInt(MAX_END))}|${LONG_MAX_TEXT})`) },
  ],
};

const timeout = {
  description: `How long the block lasts from now. A bare number (integer or string of digits) is MILLISECONDS (FLIP-224), at least ${MIN_BARE_TIMEOUT_MS} (a smaller one is taken for seconds sent by mistake and refused); or a duration with a unit ('600 ms', '90 s', '10 min', '2h', '1.5 d'), greater than zero and at most 100 years. Exclusive with endTimestamp.`,
  anyOf: [
    { type: 'integer', minimum: MIN_BARE_TIMEOUT_MS, maximum: MAX_TIMEOUT_MS },
    { type: 'string', maxLength: LONGISH_MAX, pattern: digitString(decimalUpTo(BigInt(MAX_TIMEOUT_MS), String(MIN_BARE_TIMEOUT_MS).length)) },
    { type: 'string', maxLength: LONGISH_MAX, pattern: withUnit(false) },
  ],
};

const evacuationTimeout = {
  description: `MARK_BLOCKED_AND_EVACUATE_TASKS: the grace period before the job's containers on the node are released. A bare number (integer or string of digits) is SECONDS (YARN's graceful decommission): 0 = at once, negative = wait forever (stored as -1), at most ${MAX_BARE_EVACUATION_TIMEOUT_S} (a larger one is taken for milliseconds sent by mistake and refused); or a duration with a unit ('90 s', '10 min', '2 d'), whole seconds, at most 10 years, or 'forever'. Answered in seconds.`,
  anyOf: [
    { type: 'integer', minimum: -MAX_EVACUATION_TIMEOUT_S, maximum: MAX_BARE_EVACUATION_TIMEOUT_S },
    { type: 'string', maxLength: LONGISH_MAX, pattern: digitString(`(?:0|${decimalUpTo(BigInt(MAX_BARE_EVACUATION_TIMEOUT_S))})`) },
    { type: 'string', maxLength: LONGISH_MAX, pattern: digitString(`(?:0|${decimalUpTo(BigInt(MAX_EVACUATION_TIMEOUT_S))})`, '-') },
    { type: 'string', maxLength: LONGISH_MAX, pattern: withUnit(true) },
    { type: 'string', maxLength: LONGISH_MAX, pattern: `^\\s*${caseless('forever')}\\s*$` },
  ],
};

const booleanish = { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['true', 'false'] }] };

/** The body of a block (PUT), and of each batch item (with its `id`). */
export function documentedBlockBody(batch: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    action: { type: 'string', enum: [...ACTIONS] },
    endTimestamp,
    timeout,
    cause: {
      type: 'string',
      maxLength: CAUSE_MAX,
      description: `Why, for everyone: at most ${CAUSE_MAX} characters, no control characters, some text besides ',' and blanks (stored trimmed; a merge appends its new ','-separated tokens).`,
      allOf: [{ pattern: `^[^${CONTROL}]*$` }, { pattern: '[^\\s,]' }],
    },
    allowMerge: { ...booleanish, description: 'Merge into a block of the same id (FLIP-224: EVACUATE wins, the later end wins, causes joined) instead of answering 409.' },
    evacuationTimeout,
    scope: {
      type: 'string',
      maxLength: SCOPE_APPS_MAX * 41,
      pattern: `^\\s*${APP_OR_CLUSTER}(?:\\s*,\\s*${APP_OR_CLUSTER}){0,${SCOPE_APPS_MAX - 1}}\\s*$`,
      description: `'cluster' (every job sharing the store; the default of a new block), or application ids joined with ',' (at most ${SCOPE_APPS_MAX}). A merge that names none keeps the stored scope; one that names one unites them.`,
    },
    source: {
      type: 'string',
      maxLength: SOURCE_MAX,
      pattern: `^[^\\s${CONTROL}](?:[^${CONTROL}]*[^\\s${CONTROL}])?$`,
      description: 'What created the block (exclude-file:<path>, set by blocklist import); absent = by hand.',
    },
  };
  if (batch) properties.id = { anyOf: [ID_SCHEMAS.node, ID_SCHEMAS.taskmanager, ID_SCHEMAS.rack], description: 'a node host, <node>/<containerId>, or a /rack path: the kind is told by the shape' };
  return {
    type: 'object',
    additionalProperties: false,
    required: batch ? ['id', 'action', 'cause'] : ['action', 'cause'],
    properties,
    not: { required: ['endTimestamp', 'timeout'] },
  };
}

/** Rules no schema states, said in the descriptions above; a schema-valid request may be refused (400) by these only. */
export const NON_SCHEMA_RULES = [
  { field: 'endTimestamp', rule: 'in the future', message: /^endTimestamp \S+ \([^)]*\) is not in the future/ },
  { field: 'timeout', rule: 'a duration with a unit: greater than zero, at most 100 years', message: /^timeout (must be a positive|'[\s\S]*' is more than 100 years)/ },
  { field: 'evacuationTimeout', rule: 'a duration with a unit: whole seconds, at most 10 years', message: /^evacuationTimeout '[\s\S]*' must be (whole seconds|between -1)/ },
] as const;

const E = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/error' } } } });
const BAD = E('invalid request: the errors name each problem; nothing was changed');
const MUTATION_REFUSALS = {
  413: E('the body is larger than rest.server.max-content-length'),
  415: E('the body is not application/json'),
  429: E('too many changes from this caller (rest.rate-limit.*); Retry-After says when to try again'),
  503: E('mutations are disabled (cluster.resource-blocklist.enabled: false) or the store is unavailable; nothing was changed'),
};
const ITEM_MUTATION = { 400: BAD, 412: E('If-Match names a version the item no longer has (code "changed"); nothing was changed'), ...MUTATION_REFUSALS };
const QUARANTINED = E('the stored item cannot be decoded (code "quarantined"); DELETE removes it');

/** Every status an operation answers besides its 2xx (those are the routes' own response schemas). */
export const ERROR_RESPONSES: Record<string, Record<string, unknown>> = {
  'get /blocklist': { 400: BAD, 503: E('too many full listings in flight (rest.listing.max-concurrent; Retry-After: 1), or the store is unavailable') },
  'post /blocklist': { 400: BAD, ...MUTATION_REFUSALS },
  'post /blocklist/expire': { 404: E('this sidecar runs no expiry job'), 409: E('an expiry pass is already running'), 429: MUTATION_REFUSALS[429], 503: E('the expiry pass failed, or mutations are disabled; nothing acknowledged') },
  'put item': { ...ITEM_MUTATION, 409: E('already blocked and no allowMerge (code "exists"), the merged scope would name too many applications ("scope-full"), or the stored item cannot be decoded ("quarantined")') },
  'delete item': { ...ITEM_MUTATION, 404: E('not blocked (also when its end has passed and expiry has not purged it yet)') },
  'get item': { 400: BAD, 404: E('not blocked'), 409: QUARANTINED, 503: MUTATION_REFUSALS[503] },
  'get /status': { 400: BAD },
  'get /healthz': { 503: E('the store has been unreachable longer than cluster.resource-blocklist.store.unreachable-limit') },
  'get /readyz': { 503: E('not ready: the store is unreachable, or no sync with YARN has succeeded yet') },
  'get /config': { 404: E('this server does not publish its configuration') },
  'get /metrics': { 404: E('metrics are not enabled') },
};

/** The error responses of an operation (by method and document path); item routes share theirs. */
export function errorResponsesOf(method: string, path: string, auth: boolean): Record<string, unknown> {
  const item = /^\/blocklist\/(nodes|node|taskmanagers|racks)\/\{id\}$/.test(path);
  const own = ERROR_RESPONSES[`${method} ${item ? 'item' : path}`] ?? {};
  if (!auth || path === '/healthz' || path === '/openapi.json') return own;
  const mutates = method !== 'get';
  return { ...own, 401: E('no valid bearer token'), ...(mutates ? { 403: E('the token is a viewer\'s: changes need an admin token') } : {}) };
}

/** GET /blocklist's query parameters as the route judges them (the schema checks shapes, the route the rest). */
export const LIST_QUERY: Record<string, Record<string, unknown>> = {
  appliesTo: { type: 'string', pattern: `^${APPLICATION_ID_PATTERN}$`, description: 'an application id: every item that applies to it now (its own, cluster-wide and shared blocks)' },
  limit: { type: 'string', pattern: `^(?=[0-9]{1,6}$)0*${decimalUpTo(10_000n)}$`, description: 'page size, 1 to 10000 (the next page is in Link: rel="next")' },
};

/** The schema of an item route's {id}, by its path. */
export function idSchemaOf(path: string): (typeof ID_SCHEMAS)[keyof typeof ID_SCHEMAS] | undefined {
  if (path.startsWith('/blocklist/nodes/') || path.startsWith('/blocklist/node/')) return ID_SCHEMAS.node;
  if (path.startsWith('/blocklist/taskmanagers/')) return ID_SCHEMAS.taskmanager;
  if (path.startsWith('/blocklist/racks/')) return ID_SCHEMAS.rack;
  return undefined;
}
