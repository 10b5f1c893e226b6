/**
 * GET /blocklist served from a serialisation cached per store version.
 *
 * What a listing costs without it: every request read the whole store, built a response object per
 * item and serialised all of it — for 100,000 items (37 MB) about a second of CPU on the event loop
 * per request, so 30 concurrent listings kept /healthz waiting for seconds.
 *
 * Here the stored part of every item (`"id":{…wire fields`, all but the closing brace) is
 * serialised once per store version, in slices that yield to the event loop, and shared by every
 * request until the version moves (concurrent requests for a new version share one build). What is
 * live — the task managers on the node and the item's sync state, which change without the store
 * changing — is appended per request; those values repeat (`[]`, `{"state":"applied"}`), so their
 * JSON is memoised. A request then costs little more than writing the bytes, and a large body is
 * produced in slices, one per event-loop turn and only as the socket takes it, so no request holds
 * the loop for the whole body and the other requests (/healthz, /metrics) are served in between.
 *
 * Order is by id (code-unit order), which is what `?after=` pages on.
 */
import { Readable } from 'node:stream';
import { BlockedItem, toWire } from '../model/item';
import { isExpired } from '../model/effective';
import { scopeMatches } from '../model/scope';

/** A full listing with more entries than this is streamed in slices; below it one string is faster. */
export const STREAM_ABOVE = 2_000;
/** Entries serialised per event-loop turn (build and stream). */
const SLICE = 500;
/** The memo of live JSON fragments is dropped when it grows past this (values are few in practice). */
const MEMO_MAX = 4096;

export interface ListingEntry {
  item: BlockedItem;
  /** `"<id>":{<stored fields>` — the item's JSON without its closing brace. */
  head: string;
}

/** What the route adds per item at request time. */
export interface LiveParts {
  taskManagers: readonly string[];
  sync?: object;
}

export interface ListingFilter {
  kind?: string;
  scope?: string;
  action?: string;
}

export interface ListingSource {
  version(): Promise<string>;
  list(): Promise<BlockedItem[]>;
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

async function buildEntries(items: BlockedItem[]): Promise<ListingEntry[]> {
  const sorted = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const out: ListingEntry[] = new Array<ListingEntry>(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0 && i % SLICE === 0) await turn();
    const item = sorted[i];
    const wire = JSON.stringify(toWire(item));
    out[i] = { item, head: `${JSON.stringify(item.id)}:${wire.slice(0, -1)}` };
  }
  return out;
}

/** The stored part of the listing, per store version. */
export class ListingCache {
  private current: { version: string; entries: ListingEntry[] } | undefined;
  private building: { version: string; promise: Promise<ListingEntry[]> } | undefined;
  private readonly memo = new Map<string, string>();
  /** The unfiltered full listing being sent right now, whose slices later requests may share. */
  private shared: SharedListing | undefined;

  constructor(private readonly store: ListingSource) {}

  /**
   * A full unfiltered listing joins one that started less than SHARE_MS ago on the same entries
   * and is still being sent: its slices are built once and written to every socket. The price is
   * that the live parts (sync state, task managers) of a joiner are up to SHARE_MS old.
   */
  share(entries: ListingEntry[], now: number): SharedListing {
    const s = this.shared;
    if (s && s.entries === entries && s.readers > 0 && now >= s.now && now - s.now <= SHARE_MS) return s;
    const fresh: SharedListing = { entries, now, readers: 0, slices: [], done: () => this.shared === fresh && (this.shared = undefined) };
    this.shared = fresh;
    return fresh;
  }

  /** The entries of the store's current version, sorted by id (built once per version). */
  async entries(): Promise<ListingEntry[]> {
    // The version is read before the list: a write in between makes the cache newer than its tag,
    // so the next request rebuilds — never older than its tag.
    const version = await this.store.version();
    if (this.current?.version === version) return this.current.entries;
    if (this.building?.version === version) return this.building.promise;
    const promise = this.store.list().then(buildEntries);
    const b = { version, promise };
    this.building = b;
    try {
      const entries = await promise;
      if (this.building === b) this.current = { version, entries };
      return entries;
    } finally {
      if (this.building === b) this.building = undefined;
    }
  }

  /** `,"taskManagers":[…],"sync":{…}}` — the live tail of one item's JSON. */
  tail(live: LiveParts): string {
    const tms = live.taskManagers.length === 0 ? '[]' : JSON.stringify(live.taskManagers);
    if (!live.sync) return `,"taskManagers":${tms}}`;
    return `,"taskManagers":${tms},"sync":${this.json(live.sync)}}`;
  }

  /** JSON of a small value that repeats across items (a sync state), memoised by its shape. */
  private json(v: object): string {
    const s = v as { state?: unknown; detail?: unknown; evacuation?: unknown };
    // Evacuation states carry a countdown: always fresh.
    if (s.evacuation !== undefined || Object.keys(v).length > 2) return JSON.stringify(v);
    const key = `${String(s.state)}\u0000${s.detail === undefined ? '\u0001' : String(s.detail)}`;
    let out = this.memo.get(key);
    if (out === undefined) {
      out = JSON.stringify(v);
      if (this.memo.size >= MEMO_MAX) this.memo.clear();
      this.memo.set(key, out);
    }
    return out;
  }
}

/** How long a running full listing may be joined (its live parts are as old as that). */
export const SHARE_MS = 1000;

interface SharedListing {
  entries: ListingEntry[];
  /** The clock when it started: expiry and live parts are as of then. */
  now: number;
  readers: number;
  /** Built slices (Buffers: encoded once, written to every reader); index = slice number. */
  slices: Buffer[];
  /** Forget it once nobody reads it (it holds the body). */
  done: () => unknown;
}

/** Does the entry count for this request (not expired, matches the filter)? */
function keep(e: ListingEntry, now: number, f: ListingFilter): boolean {
  const item = e.item;
  return !isExpired(item, now) && (!f.kind || item.kind === f.kind) && (!f.scope || scopeMatches(item.scope, f.scope)) && (!f.action || item.action === f.action);
}

/** First index whose id is > after (entries are sorted by id). */
function startAfter(entries: ListingEntry[], after: string | undefined): number {
  if (after === undefined) return 0;
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid].item.id <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface ListingPage {
  body: string;
  count: number;
  /** The id to pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/** One page: at most `limit` entries with id > after, as one JSON map, and the next cursor. */
export function listingPage(cache: ListingCache, entries: ListingEntry[], o: { now: number; filter: ListingFilter; after?: string; limit: number; live: (item: BlockedItem) => LiveParts }): ListingPage {
  const parts: string[] = [];
  let i = startAfter(entries, o.after);
  let last: string | undefined;
  for (; i < entries.length && parts.length < o.limit; i++) {
    const e = entries[i];
    if (!keep(e, o.now, o.filter)) continue;
    parts.push(e.head + cache.tail(o.live(e.item)));
    last = e.item.id;
  }
  let more = false;
  for (; i < entries.length; i++) {
    if (keep(entries[i], o.now, o.filter)) {
      more = true;
      break;
    }
  }
  return { body: `{${parts.join(',')}}`, count: parts.length, ...(more && last !== undefined ? { next: last } : {}) };
}

/**
 * The whole listing: one string when small, else a stream producing SLICE entries per event-loop
 * turn, only when the consumer (the socket) asks for more.
 */
export function fullListing(cache: ListingCache, entries: ListingEntry[], o: { now: number; filter: ListingFilter; live: (item: BlockedItem) => LiveParts }): string | Readable {
  if (entries.length <= STREAM_ABOVE) {
    return listingPage(cache, entries, { ...o, limit: Number.MAX_SAFE_INTEGER }).body;
  }
  if (!o.filter.kind && !o.filter.scope && !o.filter.action) return sharedStream(cache, cache.share(entries, o.now), o.live);
  let i = 0;
  let first = true;
  let scheduled = false;
  const produce = (): void => {
    scheduled = false;
    if (stream.destroyed) return;
    const parts: string[] = [];
    // Bounded per turn also when a filter skips most entries.
    for (let scanned = 0; i < entries.length && parts.length < SLICE && scanned < SLICE * 8; i++, scanned++) {
      const e = entries[i];
      if (keep(e, o.now, o.filter)) parts.push(e.head + cache.tail(o.live(e.item)));
    }
    const done = i >= entries.length;
    let chunk = '';
    if (parts.length) {
      chunk = (first ? '{' : ',') + parts.join(',');
      first = false;
    }
    if (done) chunk += first ? '{}' : '}';
    if (chunk) stream.push(chunk);
    if (done) stream.push(null);
    else if (!chunk) {
      scheduled = true;
      setImmediate(produce);
    }
  };
  const stream = new Readable({
    read() {
      if (scheduled) return;
      scheduled = true;
      setImmediate(produce);
    },
  });
  return stream;
}

/** One reader of a shared listing: slice k is built by whichever reader needs it first. */
function sharedStream(cache: ListingCache, s: SharedListing, live: (item: BlockedItem) => LiveParts): Readable {
  const entries = s.entries;
  const count = Math.ceil(entries.length / SLICE);
  let k = 0;
  let scheduled = false;
  let released = false;
  s.readers++;
  const release = (): void => {
    if (released) return;
    released = true;
    if (--s.readers === 0) s.done();
  };
  const build = (n: number): Buffer => {
    const parts: string[] = [];
    for (let i = n * SLICE; i < Math.min(entries.length, (n + 1) * SLICE); i++) {
      const e = entries[i];
      if (keep(e, s.now, {})) parts.push(e.head + cache.tail(live(e.item)));
    }
    return Buffer.from(parts.join(','));
  };
  const OPEN = Buffer.from('{');
  const COMMA = Buffer.from(',');
  let wroteAny = false;
  const produce = (): void => {
    scheduled = false;
    if (stream.destroyed) return;
    // One slice per event-loop turn; a slice another reader built is written as is (no copy).
    let pushed = false;
    while (k < count && !pushed) {
      let b = s.slices[k];
      if (b === undefined) s.slices[k] = b = build(k);
      k++;
      if (b.length > 0) {
        stream.push(wroteAny ? COMMA : OPEN);
        stream.push(b);
        wroteAny = true;
        pushed = true;
      }
    }
    if (k >= count) {
      stream.push(wroteAny ? '}' : '{}');
      release();
      stream.push(null);
    } else if (!pushed) {
      scheduled = true;
      setImmediate(produce);
    }
  };
  const stream = new Readable({
    read() {
      if (scheduled) return;
      scheduled = true;
      setImmediate(produce);
    },
    destroy(err, cb) {
      release();
      cb(err);
    },
  });
  return stream;
}
