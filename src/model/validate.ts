/**
 * Turning what a client sent into a BlockSpec, or into precise error messages. Pure: the caller
 * supplies `now`. Used by the REST API, the batch endpoint, the CLI's dry-run and the importer,
 * so every door applies exactly the same rules.
 */
import { ACTIONS, BlockAction, CLUSTER_SCOPE, ItemKind, LONG_MAX_TEXT, PERMANENT, Scope } from './item';
import { parseApplicationId, parseContainerId, validateHostName, validateRackPath } from './ids';
import { causeTokens } from './cause';
import { SCOPE_APPS_MAX, formatScope } from './scope';
import { parseDuration } from './duration';

export const CAUSE_MAX = 1024;
/** 9999-12-31T23:59:59.999Z: beyond this an endTimestamp is a typo, not a plan (Long.MAX aside). */
export const MAX_END = 253_402_300_799_999;
/** A relative timeout above 100 years is refused for the same reason. */
export const MAX_TIMEOUT_MS = 100 * 365 * 24 * 3600 * 1000;
/** evacuationTimeout bounds, seconds (Hadoop stores it as an int; negative = forever). */
export const MAX_EVACUATION_TIMEOUT_S = 10 * 365 * 24 * 3600;
/**
 * The two fields' bare numbers are in different units (timeout: ms, FLIP-224; evacuationTimeout:
 * seconds, YARN's graceful decommission), so a bare number only one reading can mean is refused
 * and a duration with a unit says it plainly: a bare timeout under a second (seconds sent as ms),
 * a bare evacuationTimeout over a day (milliseconds sent as seconds: 600000 = 6.9 days).
 */
export const MIN_BARE_TIMEOUT_MS = 1000;
export const MAX_BARE_EVACUATION_TIMEOUT_S = 86_400;

/** Flink's duration syntax with an explicit unit (config/duration.ts): "600 s", "10 min", "2h", "1500 ms". */
const WITH_UNIT = /^\s*-?\d+(\.\d+)?\s*[a-zA-Z]+\s*$/;

export type EndSpec = { type: 'permanent' } | { type: 'at'; at: number } | { type: 'after'; ms: number };

export interface ItemRef {
  id: string;
  kind: ItemKind;
  node: string;
  containerId?: string;
}

export interface BlockSpec extends ItemRef {
  action: BlockAction;
  end: EndSpec;
  cause: string;
  /** The request's scope; `cluster` when it named none (a new block's default). */
  scope: Scope;
  /** The request named no scope (FLIP-224 has no such field): a merge keeps the stored block's scope. */
  scopeOmitted?: true;
  evacuationTimeout?: number;
  /** What created the block (model/item.ts BlockedItem.source); absent = by hand. */
  source?: string;
  allowMerge: boolean;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/**
 * How the API's JSON parser hands over a number literal a JS number cannot hold exactly (an
 * integer beyond 2^53, 1e300): as a string of its text after this mark (api/json-body.ts), so a
 * time field decides from the text the client sent, and a text field (a cause, an id) is not
 * fooled into taking a number for a string.
 */
export const NUMBER_TEXT_MARK = '\u0000#';
/** A string the client sent as a string (not a number literal the parser kept as text). */
const isText = (v: unknown): v is string => typeof v === 'string' && !v.startsWith(NUMBER_TEXT_MARK);

/** The body fields a block request may carry (besides `id` in a batch). */
export const BLOCK_FIELDS = ['action', 'endTimestamp', 'timeout', 'cause', 'allowMerge', 'evacuationTimeout', 'scope', 'source'] as const;

/** Longest `source`: room for `exclude-file:` and a Linux PATH_MAX path. */
export const SOURCE_MAX = 4096 + 64;

/**
 * `source`: a label a program sets to find its own blocks again (`exclude-file:/abs/path`).
 * Printable text without leading/trailing blanks; absent or null = made by hand.
 */
export function parseSource(v: unknown, errors: string[]): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isText(v)) {
    errors.push("source must be a string such as 'exclude-file:/etc/hadoop/conf/yarn.exclude'");
    return undefined;
  }
  if (v.trim() === '') errors.push('source must not be empty; omit it for a block made by hand');
  else if (v !== v.trim()) errors.push('source must not start or end with blanks');
  else if (v.length > SOURCE_MAX) errors.push(`source is longer than ${SOURCE_MAX} characters`);
  else if (/[\u0000-\u001f\u007f]/.test(v)) errors.push('source contains control characters');
  else return v;
  return undefined;
}

/**
 * Parses an item id. `kind` comes from the endpoint when there is one; in a batch it is taken from
 * the id's shape: `node` or `node/containerId`.
 */
export function parseItemRef(raw: unknown, kind?: ItemKind): Validated<ItemRef> {
  if (!isText(raw)) return { ok: false, errors: ['id must be a string'] };
  const slash = raw.indexOf('/');
  // In a batch a rack is told by its leading '/' (a rack path), a task manager by an inner '/'.
  const effectiveKind: ItemKind = kind ?? (slash === 0 ? 'rack' : slash > 0 ? 'taskmanager' : 'node');
  if (effectiveKind === 'rack') {
    const r = validateRackPath(raw);
    return r.ok ? { ok: true, value: { id: raw, kind: 'rack', node: raw } } : { ok: false, errors: [r.error] };
  }
  if (effectiveKind === 'node') {
    if (slash >= 0 && !raw.startsWith('/')) {
      return { ok: false, errors: [`node id '${raw}' contains '/'; a task manager is blocked as <node>/<containerId> under /blocklist/taskmanagers`] };
    }
    const h = validateHostName(raw);
    return h.ok ? { ok: true, value: { id: raw, kind: 'node', node: raw } } : { ok: false, errors: [h.error] };
  }
  if (slash < 0) {
    return { ok: false, errors: [`task manager id '${raw}' must be <node>/<containerId>, e.g. node1/container_e01_1652313600000_0001_01_000002`] };
  }
  const node = raw.slice(0, slash);
  const container = raw.slice(slash + 1);
  const errors: string[] = [];
  const h = validateHostName(node);
  if (!h.ok) errors.push(`task manager id '${raw}': ${h.error}`);
  const c = parseContainerId(container);
  if (!c.ok) errors.push(`task manager id '${raw}': ${c.error}`);
  if (errors.length) return { ok: false, errors };
  return { ok: true, value: { id: raw, kind: 'taskmanager', node, containerId: container } };
}

/** What a field's number means, for error messages: a relative timeout is not a duration string. */
function longMeaning(field: string): string {
  if (field === 'timeout') return "milliseconds (a number or a string of digits, e.g. 600000 for 10 minutes) or a duration with a unit ('10 min', '2h')";
  if (field === 'evacuationTimeout') return "whole seconds (a number or a string of digits, e.g. 600 for 10 minutes; negative = forever) or a duration with a unit ('90 s', '10 min', 'forever')";
  return 'epoch milliseconds (a number or a string of digits)';
}

/**
 * A JSON number or a string of decimal digits (FLIP-224's examples send "1652317200000"), as exact text.
 * A JS number holds integers exactly only up to 2^53: anything beyond is refused, except Java's
 * Long.MAX_VALUE written exactly (the permanent end). The API's JSON parser hands numbers it
 * cannot hold exactly over as their literal text (api/json-body.ts), so `9223372036854775807`
 * sent as a number arrives here as that text, and `1e300` or `18446744073709551616` are refused
 * instead of rounding to a permanent block.
 */
function parseLong(v: unknown, field: string, errors: string[]): string | undefined {
  const tooBig = (shown: string) =>
    errors.push(`${field} ${shown} is beyond 2^53 and cannot be held exactly; for a permanent block omit it or send exactly ${LONG_MAX_TEXT}`);
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v))) tooBig(String(v));
    else if (!Number.isInteger(v)) errors.push(`${field} must be an integer number of milliseconds, got ${v}`);
    else return String(v);
    return undefined;
  }
  // A number literal the parser kept as its text: judged as the number it is.
  if (typeof v === 'string' && v.startsWith(NUMBER_TEXT_MARK)) v = v.slice(NUMBER_TEXT_MARK.length);
  if (typeof v === 'string') {
    const t = v.trim();
    if (t === LONG_MAX_TEXT) return t;
    // Up to 19 digits the text itself is kept exactly; the caller's range checks speak for it.
    if (/^-?\d{1,19}$/.test(t)) return t;
    if (/^-?\d+$/.test(t)) {
      tooBig(t.length > 40 ? `${t.slice(0, 40)}…` : t);
      return undefined;
    }
    // A number literal the JSON parser kept as text (1e300, 9.3e18): out of range, or a fraction.
    if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t) && Math.abs(Number(t)) >= 2 ** 53) {
      tooBig(t);
      return undefined;
    }
    errors.push(`${field} must be ${longMeaning(field)}, got ${JSON.stringify(v).slice(0, 40)}`);
    return undefined;
  }
  errors.push(`${field} must be ${longMeaning(field)}, got ${v === null ? 'null' : typeof v}`);
  return undefined;
}

export function parseBoolean(v: unknown, field: string, errors: string[]): boolean | undefined {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  errors.push(`${field} must be true or false (or "true"/"false"), got ${JSON.stringify(v)?.slice(0, 40)}`);
  return undefined;
}

/**
 * `cluster`, one application id, or several joined with ',' (model/scope.ts: the wire form of a
 * block for several jobs, as a merge writes it). Duplicates are dropped; cluster among them wins.
 */
export function parseScope(v: unknown, errors: string[]): Scope | undefined {
  if (v === undefined || v === null || v === CLUSTER_SCOPE) return CLUSTER_SCOPE;
  const what = `scope must be 'cluster' or a YARN application id (several joined with ',')`;
  if (!isText(v)) {
    errors.push(what);
    return undefined;
  }
  const apps = v.split(',').map((a) => a.trim());
  if (apps.length > SCOPE_APPS_MAX) {
    errors.push(`scope names ${apps.length} applications (at most ${SCOPE_APPS_MAX}); use 'cluster'`);
    return undefined;
  }
  for (const app of apps) {
    const a = app === CLUSTER_SCOPE ? undefined : parseApplicationId(app);
    if (a && !a.ok) {
      errors.push(`${what}: ${a.error}`);
      return undefined;
    }
  }
  if (apps.includes(CLUSTER_SCOPE)) return CLUSTER_SCOPE;
  return formatScope(apps);
}

/** The text as sent is judged (its length, control characters), then stored trimmed. */
export function parseCause(v: unknown, errors: string[]): string | undefined {
  if (!isText(v)) {
    errors.push(v === undefined ? 'cause is required' : 'cause must be a string');
    return undefined;
  }
  const c = v.trim();
  if (!c) errors.push('cause must not be empty');
  else if (causeTokens(c).length === 0) errors.push("cause must hold some text besides ',' (causes of merged blocks are joined with ',')");
  else if (v.length > CAUSE_MAX) errors.push(`cause is longer than ${CAUSE_MAX} characters`);
  else if (/[\u0000-\u001f\u007f]/.test(v)) errors.push('cause contains control characters (newlines and tabs included)');
  else return c;
  return undefined;
}

/**
 * Validates a block request body for the given item. Collects every problem, so one 400 names them
 * all. `now` is needed to refuse an endTimestamp that has already passed.
 */
export function parseBlockRequest(ref: ItemRef, body: unknown, now: number): Validated<BlockSpec> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, errors: ['request body must be a JSON object'] };
  }
  const b = body as Record<string, unknown>;
  const errors: string[] = [];
  for (const k of Object.keys(b)) {
    if (k !== 'id' && !(BLOCK_FIELDS as readonly string[]).includes(k)) errors.push(`unknown field '${k}'`);
  }

  let action: BlockAction | undefined;
  if (b.action === undefined) errors.push(`action is required (${ACTIONS.join(' or ')})`);
  else if (isText(b.action) && (ACTIONS as readonly string[]).includes(b.action)) action = b.action as BlockAction;
  else errors.push(`action must be ${ACTIONS.join(' or ')}, got ${JSON.stringify(b.action)?.slice(0, 60)}`);

  const cause = parseCause(b.cause, errors);

  let end: EndSpec | undefined;
  const hasEnd = b.endTimestamp !== undefined && b.endTimestamp !== null;
  const hasTimeout = b.timeout !== undefined && b.timeout !== null;
  if (hasEnd && hasTimeout) {
    errors.push('give either timeout or endTimestamp, not both');
  } else if (hasEnd) {
    const t = parseLong(b.endTimestamp, 'endTimestamp', errors);
    if (t !== undefined) {
      if (t === LONG_MAX_TEXT) end = { type: 'permanent' };
      else {
        const at = Number(t);
        if (at <= 0) errors.push(`endTimestamp must be a positive epoch in milliseconds, got ${t}`);
        else if (at > MAX_END) errors.push(`endTimestamp ${t} is beyond year 9999; omit it (or send ${LONG_MAX_TEXT}) for a permanent block`);
        else if (at <= now) errors.push(`endTimestamp ${t} (${new Date(at).toISOString()}) is not in the future (now is ${new Date(now).toISOString()})`);
        else end = { type: 'at', at };
      }
    }
  } else if (hasTimeout) {
    const ms = parseTimeout(b.timeout, errors);
    if (ms !== undefined) end = { type: 'after', ms };
  } else {
    end = { type: 'permanent' };
  }

  let allowMerge: boolean | undefined = false;
  if (b.allowMerge !== undefined) allowMerge = parseBoolean(b.allowMerge, 'allowMerge', errors);

  const evacuationTimeout = b.evacuationTimeout !== undefined && b.evacuationTimeout !== null ? parseEvacuationTimeoutField(b.evacuationTimeout, errors) : undefined;

  const scope = parseScope(b.scope, errors);
  const source = parseSource(b.source, errors);

  if (errors.length || !action || !cause || !end || allowMerge === undefined || !scope) return { ok: false, errors };
  const spec: BlockSpec = { ...ref, action, end, cause, scope, allowMerge };
  if (b.scope === undefined || b.scope === null) spec.scopeOmitted = true;
  if (evacuationTimeout !== undefined) spec.evacuationTimeout = evacuationTimeout;
  if (source !== undefined) spec.source = source;
  return { ok: true, value: spec };
}

/** A duration with an explicit unit, in ms; undefined (and an error) when it is not one. */
function withUnit(v: string, field: string, errors: string[]): number | undefined {
  try {
    return parseDuration(v, { allowNegative: true });
  } catch (e) {
    errors.push(`${field} ${(e as Error).message}`);
    return undefined;
  }
}

/** `timeout`: milliseconds as a number or digits (FLIP-224), or a duration with a unit ("10 min"). */
function parseTimeout(v: unknown, errors: string[]): number | undefined {
  let ms: number | undefined;
  let shown: string;
  if (typeof v === 'string' && WITH_UNIT.test(v)) {
    ms = withUnit(v, 'timeout', errors);
    shown = `'${v.trim()}'`;
  } else {
    const t = parseLong(v, 'timeout', errors);
    if (t === undefined) return undefined;
    ms = Number(t);
    shown = `${t} ms`;
    if (ms > 0 && ms < MIN_BARE_TIMEOUT_MS) {
      errors.push(`timeout ${t} is milliseconds (a block of under a second): send milliseconds (${ms * 1000} for ${ms} s) or a duration with a unit ('${ms} s', '10 min')`);
      return undefined;
    }
  }
  if (ms === undefined) return undefined;
  if (ms <= 0) errors.push(`timeout must be a positive number of milliseconds or a duration such as '10 min', got ${shown}`);
  else if (ms > MAX_TIMEOUT_MS) errors.push(`timeout ${shown} is more than 100 years; omit it for a permanent block`);
  else return ms;
  return undefined;
}

/**
 * `evacuationTimeout`: whole seconds as a number or digits (YARN's graceful decommission), or a
 * duration with a unit ("90 s", "10 min", "forever"); negative = wait forever (stored as -1).
 */
function parseEvacuationTimeoutField(v: unknown, errors: string[]): number | undefined {
  const range = `between -1 (forever) and ${MAX_EVACUATION_TIMEOUT_S} seconds`;
  if (typeof v === 'string' && v.trim().toLowerCase() === 'forever') return -1;
  if (typeof v === 'string' && WITH_UNIT.test(v)) {
    const ms = withUnit(v, 'evacuationTimeout', errors);
    if (ms === undefined) return undefined;
    if (ms % 1000 !== 0) errors.push(`evacuationTimeout '${v.trim()}' must be whole seconds`);
    else if (Math.abs(ms / 1000) > MAX_EVACUATION_TIMEOUT_S) errors.push(`evacuationTimeout '${v.trim()}' must be ${range}`);
    else return ms < 0 ? -1 : ms / 1000;
    return undefined;
  }
  const t = parseLong(v, 'evacuationTimeout', errors);
  if (t === undefined) return undefined;
  const s = Number(t);
  if (s > MAX_EVACUATION_TIMEOUT_S || s < -MAX_EVACUATION_TIMEOUT_S) errors.push(`evacuationTimeout must be ${range}, got ${t}`);
  else if (s > MAX_BARE_EVACUATION_TIMEOUT_S) {
    errors.push(`evacuationTimeout ${t} is seconds (${humanSeconds(s)}): if you meant milliseconds send '${t} ms'; a bare number above ${MAX_BARE_EVACUATION_TIMEOUT_S} (a day) needs a unit ('${t} s', '${Math.round(s / 86_400)} d')`);
  } else return s < 0 ? -1 : s;
  return undefined;
}

function humanSeconds(s: number): string {
  return s >= 86_400 ? `${(s / 86_400).toFixed(1)} days` : `${(s / 3600).toFixed(1)} hours`;
}

/** The absolute endTimestamp a spec asks for at time `now`. */
export function resolveEnd(end: EndSpec, now: number): number {
  switch (end.type) {
    case 'permanent':
      return PERMANENT;
    case 'at':
      return end.at;
    case 'after':
      return now + end.ms;
  }
}
