/**
 * The blocklist item: one blocked node, or one blocked task manager container on a node.
 * Pure data; the wire shape (timestamps as strings of digits) lives in toWire().
 */

export const ACTIONS = ['MARK_BLOCKED', 'MARK_BLOCKED_AND_EVACUATE_TASKS'] as const;
export type BlockAction = (typeof ACTIONS)[number];
export const MARK_BLOCKED: BlockAction = 'MARK_BLOCKED';
export const EVACUATE: BlockAction = 'MARK_BLOCKED_AND_EVACUATE_TASKS';

/**
 * `rack`: every node of a rack, named by its rack path as YARN names it (`/default-rack`,
 * `/dc1/rack7`: the RM's `rack` of a node). YARN's blacklist takes rack names as well as hosts.
 */
export type ItemKind = 'node' | 'taskmanager' | 'rack';

/** `cluster` applies to every job sharing the store; otherwise one YARN application id. */
export type Scope = string;
export const CLUSTER_SCOPE = 'cluster';

/**
 * endTimestamp of a permanent item. Inside the program it is Infinity, so comparisons and max()
 * need no special case; on the wire it is Java's Long.MAX_VALUE, written as exact text
 * (a JS number cannot hold 9223372036854775807).
 */
export const PERMANENT = Number.POSITIVE_INFINITY;
export const LONG_MAX_TEXT = '9223372036854775807';

/** Who did something, from where, when. */
export interface Stamp {
  by: string;
  from: string;
  at: number;
}

export interface BlockedItem {
  /** node host name, or `<node>/<containerId>` for a task manager. */
  id: string;
  kind: ItemKind;
  /** The host: the id itself for a node, the part before '/' for a task manager; for a rack, its path (the id). */
  node: string;
  /** Only for task managers. */
  containerId?: string;
  action: BlockAction;
  startTimestamp: number;
  /** PERMANENT (Infinity) when the block never ends. */
  endTimestamp: number;
  cause: string;
  scope: Scope;
  /** Seconds; negative = wait forever; 0 = release at once. Absent = the configured default. */
  evacuationTimeout?: number;
  /**
   * One evacuation start for every job, as versions before per-job starts stored it (the first
   * job to put the node on its blacklist wrote it). No longer written: each job keeps its own start
   * (src/sync/evacuation-starts.ts), since a job whose safety cap held the block back starts later.
   * Kept as it is read (codec) and through merges, so an older sidecar sharing the store still
   * finds it; a job adopts it only where it had applied the block already.
   */
  evacuationSince?: number;
  /**
   * What created the block, when a program did and wants to find its own blocks again, e.g.
   * `exclude-file:/etc/hadoop/conf/yarn.exclude` for `blocklist import FILE`. Absent = made by
   * hand. Set at creation and kept by every merge, like the start time: it names the creator, and
   * `blocklist import --sync` lifts only the blocks its file created (a block an operator made by
   * hand is never lifted by a file).
   */
  source?: string;
  created: Stamp;
  updated: Stamp;
}

export function isPermanent(end: number): boolean {
  return end === PERMANENT;
}

/** Epoch ms as FLIP-224's examples write it: a JSON string of decimal digits. */
export function formatTimestamp(ms: number): string {
  return isPermanent(ms) ? LONG_MAX_TEXT : String(Math.trunc(ms));
}

/** The wire shape of an item (FLIP-224 field names; timestamps as strings). */
export interface WireItem {
  id: string;
  kind: ItemKind;
  action: BlockAction;
  startTimestamp: string;
  endTimestamp: string;
  cause: string;
  scope: string;
  evacuationTimeout?: number;
  source?: string;
  createdBy: string;
  createdFrom: string;
  createdAt: string;
  updatedBy: string;
  updatedFrom: string;
  updatedAt: string;
}

export function toWire(item: BlockedItem): WireItem {
  const w: WireItem = {
    id: item.id,
    kind: item.kind,
    action: item.action,
    startTimestamp: formatTimestamp(item.startTimestamp),
    endTimestamp: formatTimestamp(item.endTimestamp),
    cause: item.cause,
    scope: item.scope,
    createdBy: item.created.by,
    createdFrom: item.created.from,
    createdAt: formatTimestamp(item.created.at),
    updatedBy: item.updated.by,
    updatedFrom: item.updated.from,
    updatedAt: formatTimestamp(item.updated.at),
  };
  if (item.evacuationTimeout !== undefined) w.evacuationTimeout = item.evacuationTimeout;
  if (item.source !== undefined) w.source = item.source;
  return w;
}

/**
 * The item's version, as HTTP's entity tag (an `ETag`, sent back in `If-Match`): its creation and
 * last-change instants, from the wire's createdAt and updatedAt. It moves with every write that
 * changes the item (a merge stamps updatedAt; a block lifted and made again has a new createdAt),
 * not with the engine's own evacuation stamp. A client that confirms a change it previewed sends
 * it, so the change lands only on the block it showed (console, `import --sync`).
 */
export function itemTag(item: Pick<BlockedItem, 'created' | 'updated'>): string {
  return wireTag({ createdAt: formatTimestamp(item.created.at), updatedAt: formatTimestamp(item.updated.at) });
}

/** The same tag from the wire shape (what a client read from GET /blocklist). */
export function wireTag(w: Pick<WireItem, 'createdAt' | 'updatedAt'>): string {
  return `"${w.createdAt}.${w.updatedAt}"`;
}

/** Whether an If-Match header value names this item's version (`*`: any version; absent item: never). */
export function tagMatches(ifMatch: string, item: Pick<BlockedItem, 'created' | 'updated'> | undefined): boolean {
  if (!item) return false;
  const tag = itemTag(item);
  return ifMatch.split(',').some((t) => t.trim() === '*' || t.trim() === tag);
}

/** Items sort by start time, then id: the "oldest first" order the safety cap keeps. */
export function byAge(a: BlockedItem, b: BlockedItem): number {
  return a.startTimestamp - b.startTimestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Two items are the same state (used to tell a no-op merge from a real change). Audit stamps aside. */
export function sameState(a: BlockedItem, b: BlockedItem): boolean {
  return (
    a.id === b.id &&
    a.action === b.action &&
    a.startTimestamp === b.startTimestamp &&
    a.endTimestamp === b.endTimestamp &&
    a.cause === b.cause &&
    a.scope === b.scope &&
    a.evacuationTimeout === b.evacuationTimeout &&
    a.evacuationSince === b.evacuationSince &&
    a.source === b.source
  );
}
