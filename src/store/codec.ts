/**
 * How an item is written into a store: JSON with timestamps as decimal text (so Long.MAX survives),
 * versioned by a `v` field. Decoding validates every field: a store edited by hand or by a newer
 * version must not crash the sidecar or turn into an empty blocklist.
 */
import { ACTIONS, BlockAction, BlockedItem, ItemKind, LONG_MAX_TEXT, PERMANENT, Stamp, formatTimestamp } from '../model/item';
import { storedItemProblems } from './row-rules';

export const CODEC_VERSION = 1;

interface Encoded {
  v: number;
  id: string;
  kind: ItemKind;
  node: string;
  containerId?: string;
  action: BlockAction;
  start: string;
  end: string;
  cause: string;
  scope: string;
  evacuationTimeout?: number;
  evacuationSince?: string;
  source?: string;
  created: { by: string; from: string; at: string };
  updated: { by: string; from: string; at: string };
}

const stampOut = (s: Stamp) => ({ by: s.by, from: s.from, at: formatTimestamp(s.at) });

export function encodeItem(item: BlockedItem): string {
  const e: Encoded = {
    v: CODEC_VERSION,
    id: item.id,
    kind: item.kind,
    node: item.node,
    action: item.action,
    start: formatTimestamp(item.startTimestamp),
    end: formatTimestamp(item.endTimestamp),
    cause: item.cause,
    scope: item.scope,
    created: stampOut(item.created),
    updated: stampOut(item.updated),
  };
  if (item.containerId !== undefined) e.containerId = item.containerId;
  if (item.evacuationTimeout !== undefined) e.evacuationTimeout = item.evacuationTimeout;
  if (item.evacuationSince !== undefined) e.evacuationSince = formatTimestamp(item.evacuationSince);
  if (item.source !== undefined) e.source = item.source;
  return JSON.stringify(e);
}

export class CorruptItemError extends Error {
  /** The stored id whose data this is, when known. */
  id?: string;
}

/**
 * Decodes the data stored under `id`: the codec's checks, that the data names that id, and a
 * request's rules (row-rules.ts). A failure is a CorruptItemError that names the id (the row is
 * quarantined, see quarantine.ts).
 */
export function decodeStored(id: string, text: string, where = `item '${id}'`): BlockedItem {
  let item: BlockedItem;
  try {
    item = decodeItem(text);
  } catch (e) {
    throw corrupt(id, `${where} cannot be decoded: ${(e as Error).message}`);
  }
  if (item.id !== id) throw corrupt(id, `${where} holds id '${item.id}', not '${id}'`);
  const problems = storedItemProblems(item);
  if (problems.length) throw corrupt(id, `${where} holds what the API refuses: ${problems.join('; ')}`);
  return item;
}

function corrupt(id: string, message: string): CorruptItemError {
  const e = new CorruptItemError(message);
  e.id = id;
  return e;
}

function ts(v: unknown, field: string): number {
  if (v === LONG_MAX_TEXT) return PERMANENT;
  if (typeof v === 'string' && /^\d{1,16}$/.test(v)) return Number(v);
  throw new CorruptItemError(`bad ${field}: ${JSON.stringify(v)}`);
}
function str(v: unknown, field: string): string {
  if (typeof v !== 'string') throw new CorruptItemError(`bad ${field}`);
  return v;
}
/**
 * Low-cardinality strings (scope, principal, origin, action, kind) repeat across every item; a
 * store of 100,000 items would otherwise hold 100,000 copies of each (JSON.parse makes new
 * strings). Bounded, so a store of unique values cannot grow it without limit.
 */
const INTERN_MAX = 4096;
const interned = new Map<string, string>();
function intern(s: string): string {
  const hit = interned.get(s);
  if (hit !== undefined) return hit;
  if (s.length <= 128 && interned.size < INTERN_MAX) interned.set(s, s);
  return s;
}

function stampIn(v: unknown, field: string): Stamp {
  if (!v || typeof v !== 'object') throw new CorruptItemError(`bad ${field}`);
  const o = v as Record<string, unknown>;
  return { by: intern(str(o.by, `${field}.by`)), from: intern(str(o.from, `${field}.from`)), at: ts(o.at, `${field}.at`) };
}

const sameStamp = (a: Stamp, b: Stamp): boolean => a.by === b.by && a.from === b.from && a.at === b.at;

const KINDS: Record<string, ItemKind> = { node: 'node', taskmanager: 'taskmanager', rack: 'rack' };
const ACTION_OF = new Map<string, BlockAction>(ACTIONS.map((a) => [a, a]));

/**
 * The sharing decodeItem gives (interned scope, principal, origin and source; a node's host is its
 * id; a never-merged item's two stamps are one), for an item that arrived another way: a copy
 * from the store's write thread, which would otherwise hold its own copy of every such string.
 */
export function compactItem(item: BlockedItem): BlockedItem {
  const stamp = (x: Stamp): Stamp => ({ by: intern(x.by), from: intern(x.from), at: x.at });
  const created = stamp(item.created);
  const out: BlockedItem = {
    ...item,
    kind: KINDS[item.kind] ?? item.kind,
    action: ACTION_OF.get(item.action) ?? item.action,
    node: item.node === item.id ? item.id : item.node,
    scope: intern(item.scope),
    created,
    updated: sameStamp(created, item.updated) ? created : stamp(item.updated),
  };
  if (item.source !== undefined) out.source = intern(item.source);
  return out;
}

export function decodeItem(text: string): BlockedItem {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new CorruptItemError('not JSON');
  }
  if (!o || typeof o !== 'object') throw new CorruptItemError('not an object');
  if (o.v !== CODEC_VERSION) throw new CorruptItemError(`unknown codec version ${JSON.stringify(o.v)}`);
  const kind = o.kind;
  if (kind !== 'node' && kind !== 'taskmanager' && kind !== 'rack') throw new CorruptItemError('bad kind');
  // The registry's own string: JSON.parse gives each row a copy of its action (32 B × 100,000 items).
  const action = typeof o.action === 'string' ? ACTION_OF.get(o.action) : undefined;
  if (action === undefined) throw new CorruptItemError('bad action');
  const id = str(o.id, 'id');
  const node = str(o.node, 'node');
  const created = stampIn(o.created, 'created');
  const updated = stampIn(o.updated, 'updated');
  const item: BlockedItem = {
    id,
    kind,
    // A node item's host is its id: one string, not two.
    node: node === id ? id : node,
    action,
    startTimestamp: ts(o.start, 'start'),
    endTimestamp: ts(o.end, 'end'),
    cause: str(o.cause, 'cause'),
    scope: intern(str(o.scope, 'scope')),
    created,
    // Never merged items were created and last changed by the same act (as newItem builds them).
    updated: sameStamp(created, updated) ? created : updated,
  };
  if (o.containerId !== undefined) item.containerId = str(o.containerId, 'containerId');
  if (o.evacuationTimeout !== undefined) {
    if (typeof o.evacuationTimeout !== 'number' || !Number.isInteger(o.evacuationTimeout)) throw new CorruptItemError('bad evacuationTimeout');
    item.evacuationTimeout = o.evacuationTimeout;
  }
  // Written by versions before per-job starts (model/item.ts evacuationSince): kept, never written anew.
  if (o.evacuationSince !== undefined) item.evacuationSince = ts(o.evacuationSince, 'evacuationSince');
  // Rows written before the field existed have none: made by hand, as far as anyone knows.
  if (o.source !== undefined) item.source = intern(str(o.source, 'source'));
  return item;
}
