/**
 * GET /blocklist served from a serialisation cached per store version.
 *
 * What a listing costs without it: every request read the whole store, built a response object per
 * item and serialised all of it — for 100,000 items (37 MB) about a second of CPU on the event loop
 * per request, so 30 concurrent listings kept /healthz waiting for seconds.
 *
 * Here the stored part of every item (`"id":{…wire fields`, all but the closing brace) is
 * serialised once per store version, in slices that yield to the event loop, and shared by every
 * request until the version moves (concurrent requests for a new version share one build). The
 * bytes live in one slab per slice of 500 items, written into pages of up to 8 MB (off the V8 heap: 100,000 items are ~37 MB that
 * the garbage collector neither scans nor counts towards its heap growth). What is
 * live — the task managers on the node and the item's sync state, which change without the store
 * changing — is appended per request; those values repeat (`[]`, `{"state":"applied"}`), so their
 * JSON is memoised. A request then costs little more than writing the bytes, and a large body is
 * produced in chunks (500 items or 2 ms of work), only as the socket takes them, every listing's
 * steps sharing one budget of work per event-loop turn, so no request — nor thirty at once — holds
 * the loop for long and the other requests (/healthz, /metrics) are served in between.
 *
 * The serialisation is released once no listing has used it for a quiet interval
 * (`rest.listing.cache-retention`, 30 s by default): at 100,000 items it is ~33 MB of the process's
 * memory that an idle sidecar would otherwise hold until the store's version next moves, which on a
 * quiet blocklist is never. A client polling faster than that keeps it; the first listing after a
 * release builds it again (one pass over the items, paced like a listing).
 *
 * Order is by id (code-unit order), which is what `?after=` pages on.
 */
import { Readable } from 'node:stream';
import { Clock, systemClock } from '../core/clock';
import { BlockedItem, toWire } from '../model/item';
import { isExpired } from '../model/effective';
import { scopeCovers, scopeMatches } from '../model/scope';
import { TurnBudget } from './turn-budget';

/** A full listing with more entries than this is streamed in slices; below it one buffer is faster. */
export const STREAM_ABOVE = 2_000;
/** Entries serialised per step of a cache build, and per stored slab. */
const SLICE = 500;
/** The memo of live JSON fragments is dropped when it grows past this (values are few in practice). */
const MEMO_MAX = 4096;
/** Most items in one chunk of a streamed listing. */
const CHUNK_MAX = 500;
/** A chunk ends after this much work even if it holds fewer items (an item's live part can be costly). */
const CHUNK_MS = 2;
/** Work of all streamed listings (and cache builds) per event-loop turn, all together. */
const TURN_BUDGET_MS = 8;
/** How long a full listing may be joined or reused (its live parts are as old as that). */
export const SHARE_MS = 1000;
/** A finished full listing up to this size is kept for SHARE_MS for the next request to reuse. */
const RECENT_MAX_BYTES = 16 * 1024 * 1024;
/** How long the serialisation is kept after its last use (rest.listing.cache-retention's default). */
export const DEFAULT_RETENTION_MS = 30_000;

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from('}');
const EMPTY_MAP = Buffer.from('{}');

/**
 * The stored part of one store version: items sorted by id, and per slice of SLICE items one slab
 * holding their heads back to back (`"<id>":{<stored fields>`, each without its closing brace),
 * with offsets[k][j]..offsets[k][j+1] the bytes of item k*SLICE+j.
 */
export interface ListingEntries {
  items: BlockedItem[];
  slabs: Buffer[];
  offsets: Uint32Array[];
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
  /** An application id: the items that apply to it (model/scope.ts scopeCovers). */
  appliesTo?: string;
}

export interface ListingSource {
  version(): Promise<string>;
  list(): Promise<BlockedItem[]>;
}

async function buildEntries(list: BlockedItem[], turn: () => Promise<void>): Promise<ListingEntries> {
  const items = [...list].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const slabs: Buffer[] = [];
  const offsets: Uint32Array[] = [];
  const pages = new PageWriter();
  for (let start = 0; start < items.length; start += SLICE) {
    if (start > 0) await turn();
    const n = Math.min(SLICE, items.length - start);
    const heads: string[] = new Array<string>(n);
    const off = new Uint32Array(n + 1);
    for (let j = 0; j < n; j++) {
      const item = items[start + j];
      const wire = JSON.stringify(toWire(item));
      heads[j] = `${JSON.stringify(item.id)}:${wire.slice(0, -1)}`;
      off[j + 1] = off[j] + Buffer.byteLength(heads[j]);
    }
    slabs.push(pages.put(heads.join(''), off[n], (off[n] / n) * (items.length - start)));
    offsets.push(off);
  }
  return { items, slabs, offsets };
}

/**
 * The slabs are written into pages of up to PAGE_BYTES, not allocated one by one: glibc's malloc
 * serves a block below its mmap threshold (which rises up to 32 MB as large blocks are freed) from
 * its heap, and freed heap blocks stay in the process for reuse. 200 slabs of ~165 KB released
 * after the retention gave back 5-7 MB of 33 MB; pages this large are mapped on their own and
 * unmapped when released. A page is never larger than what is left to write, so a small listing
 * takes no more than it needs.
 */
const PAGE_BYTES = 8 * 1024 * 1024;

class PageWriter {
  private page: Buffer | undefined;
  private used = 0;

  /** `text`'s UTF-8 bytes (`bytes` long) in the current page, or in a new one sized for `remaining` bytes (an estimate, this slab's included). */
  put(text: string, bytes: number, remaining: number): Buffer {
    if (this.page === undefined || this.page.length - this.used < bytes) {
      this.page = Buffer.allocUnsafeSlow(Math.max(bytes, Math.min(PAGE_BYTES, Math.ceil(remaining * 1.05))));
      this.used = 0;
    }
    const at = this.used;
    this.page.write(text, at, 'utf8');
    this.used += bytes;
    return this.page.subarray(at, at + bytes);
  }
}

const headOf = (e: ListingEntries, i: number): Buffer => {
  const k = Math.floor(i / SLICE);
  const j = i - k * SLICE;
  const off = e.offsets[k];
  return e.slabs[k].subarray(off[j], off[j + 1]);
};

export interface ListingCacheOptions {
  /** The clock of the retention timer. */
  clock?: Clock;
  /**
   * How long (ms) the serialisation is kept after the last listing that used it ended
   * (rest.listing.cache-retention); 0 = released as soon as no listing uses it.
   */
  retentionMs?: number;
}

/** The stored part of the listing, per store version. */
export class ListingCache {
  private current: { version: string; entries: ListingEntries } | undefined;
  private building: { version: string; promise: Promise<ListingEntries> } | undefined;
  private readonly memo = new Map<string, Buffer>();
  /** The unfiltered full listing being sent right now, whose slices later requests may share. */
  private shared: SharedListing | undefined;
  private readonly clock: Clock;
  private readonly retentionMs: number;
  /** Streamed listings being sent now: the serialisation is not released under them. */
  private inUse = 0;
  /** When a listing last used the serialisation (the clock's ms). */
  private lastUse = 0;
  private cancelRelease: (() => void) | undefined;

  constructor(
    private readonly store: ListingSource,
    opts: ListingCacheOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.retentionMs = Math.max(0, opts.retentionMs ?? DEFAULT_RETENTION_MS);
  }

  /** The entries of the store's current version, sorted by id (built once per version). */
  async entries(): Promise<ListingEntries> {
    try {
      return await this.currentEntries();
    } finally {
      this.used();
    }
  }

  private async currentEntries(): Promise<ListingEntries> {
    // The version is read before the list: a write in between makes the cache newer than its tag,
    // so the next request rebuilds — never older than its tag.
    const version = await this.store.version();
    if (this.current?.version === version) return this.current.entries;
    if (this.building?.version === version) return this.building.promise;
    const promise = this.store.list().then((list) => buildEntries(list, () => new Promise((r) => this.pace(r))));
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

  /** Whether a serialisation is held now (built and not yet released). */
  get held(): boolean {
    return this.current !== undefined;
  }

  /** A streamed listing starts sending from the serialisation; the returned function says it ended. */
  hold(): () => void {
    this.inUse++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inUse--;
      this.used();
    };
  }

  /** Stops the retention timer (the server is closing). */
  close(): void {
    this.cancelRelease?.();
    this.cancelRelease = undefined;
  }

  /** A listing used the serialisation now: it is kept for retentionMs from here (or from the end of the streams in flight). */
  private used(): void {
    this.lastUse = this.clock.now();
    if (this.cancelRelease === undefined && this.current !== undefined) this.armRelease(this.retentionMs);
  }

  private armRelease(delayMs: number): void {
    this.cancelRelease = this.clock.setTimer(delayMs, () => {
      this.cancelRelease = undefined;
      // A stream in flight re-arms the timer when it ends (hold's release calls used()).
      if (this.inUse > 0 || this.current === undefined) return;
      const quiet = this.clock.now() - this.lastUse;
      if (quiet < this.retentionMs) return this.armRelease(this.retentionMs - quiet);
      this.current = undefined;
      this.memo.clear();
      if (this.shared && this.shared.readers.size === 0) this.shared = undefined;
    });
  }

  /** `,"taskManagers":[…],"sync":{…}}` — the live tail of one item's JSON, as bytes. */
  tail(live: LiveParts): Buffer {
    const s = live.sync as { state?: unknown; detail?: unknown; evacuation?: unknown } | undefined;
    // The common tails repeat (no task managers, a plain state): memoised by their content.
    // Evacuation states carry a countdown and task managers are per node: always fresh.
    if (live.taskManagers.length > 0 || (s && (s.evacuation !== undefined || Object.keys(s).length > 2))) {
      return Buffer.from(s ? `,"taskManagers":${JSON.stringify(live.taskManagers)},"sync":${JSON.stringify(s)}}` : `,"taskManagers":${JSON.stringify(live.taskManagers)}}`);
    }
    const key = s ? `${String(s.state)}\u0000${s.detail === undefined ? '\u0001' : String(s.detail)}` : '\u0002';
    let out = this.memo.get(key);
    if (out === undefined) {
      out = Buffer.from(s ? `,"taskManagers":[],"sync":${JSON.stringify(s)}}` : `,"taskManagers":[]}`);
      if (this.memo.size >= MEMO_MAX) this.memo.clear();
      this.memo.set(key, out);
    }
    return out;
  }

  /**
   * A full unfiltered listing joins one that started less than SHARE_MS ago on the same entries
   * and is still being sent: its chunks are built once and written to every socket. The price is
   * that the live parts (sync state, task managers) of a joiner are up to SHARE_MS old.
   */
  share(entries: ListingEntries, now: number, live: Live): SharedListing {
    const s = this.shared;
    if (s && s.entries === entries && (s.readers.size > 0 || s.complete) && s.dropped === 0 && now >= s.now && now < s.until) return s;
    // Valid for SHARE_MS, and never past the first end of an item it lists (expiry is exact).
    let until = now + SHARE_MS;
    for (const item of entries.items) if (item.endTimestamp > now && item.endTimestamp < until) until = item.endTimestamp;
    const fresh: SharedListing = {
      entries,
      now,
      filter: {},
      live,
      chunks: [],
      next: 0,
      until,
      readers: new Set(),
      complete: false,
      dropped: 0,
      openedAt: performance.now(),
      done: () => {
        if (this.shared !== fresh) return;
        // A small finished body is kept briefly: a client polling the list gets it for the cost
        // of writing the bytes. Anything else is forgotten at once (it holds the whole body).
        const bytes = fresh.chunks.reduce((n, b) => n + (b?.length ?? Infinity), 0);
        if (fresh.next >= entries.items.length && fresh.dropped === 0 && bytes <= RECENT_MAX_BYTES) {
          fresh.complete = true;
          setTimeout(() => {
            if (this.shared === fresh) this.shared = undefined;
          }, SHARE_MS).unref();
        } else this.shared = undefined;
      },
    };
    this.shared = fresh;
    return fresh;
  }

  /** Runs `step` in a later event-loop turn, within the turn budget every listing shares (turn-budget.ts). */
  pace(step: () => void): void {
    this.turns.run(step);
  }

  private readonly turns = new TurnBudget(TURN_BUDGET_MS);
}

interface Reader {
  /** The next chunk this reader will send. */
  at: number;
}

/**
 * The body of one full listing as chunks of members (`"id":{…}` joined by commas, no braces), built
 * on demand from `next` on. A chunk ends after CHUNK_MAX items or CHUNK_MS of work, whichever comes
 * first, so one chunk never holds the event loop long whatever an item costs (the live part of an
 * item whose host the RM does not know is the names nearest to it: an edit distance against every
 * known host, the first time a node list is seen).
 */
interface ChunkSource {
  entries: ListingEntries;
  /** The clock of the listing: expiry and live parts are as of then. */
  now: number;
  filter: ListingFilter;
  live: Live;
  /** Built chunks; undefined once every reader is past one (dropped to free its bytes). */
  chunks: (Buffer | undefined)[];
  /** The index of the first item not yet in a chunk. */
  next: number;
}

interface SharedListing extends ChunkSource {
  /** Joinable while the clock is before this. */
  until: number;
  readers: Set<Reader>;
  /** Every chunk built and still held: reusable after its readers are gone. */
  complete: boolean;
  /** Chunks before this index have been dropped. */
  dropped: number;
  /** When the first reader started (performance.now()): after SHARE_MS nobody joins any more. */
  openedAt: number;
  /** Forget it once nobody reads it (it holds the body). */
  done: () => unknown;
}

/** Builds the next chunk of `src` (CHUNK_MAX items or CHUNK_MS of work); empty when nothing in it counts. */
function buildChunk(cache: ListingCache, src: ChunkSource): Buffer {
  const { items } = src.entries;
  const deadline = performance.now() + CHUNK_MS;
  const parts: Buffer[] = [];
  let i = src.next;
  const stop = Math.min(items.length, i + CHUNK_MAX);
  while (i < stop) {
    const item = items[i];
    if (keep(item, src.now, src.filter)) {
      if (parts.length > 0) parts.push(COMMA);
      parts.push(headOf(src.entries, i), cache.tail(src.live(item)));
    }
    i++;
    if (performance.now() > deadline) break;
  }
  src.next = i;
  const b = parts.length ? Buffer.concat(parts) : EMPTY_MAP.subarray(0, 0);
  src.chunks.push(b);
  return b;
}

/** Does item i count for this request (not expired, matches the filter)? */
function keep(item: BlockedItem, now: number, f: ListingFilter): boolean {
  return !isExpired(item, now) && (!f.kind || item.kind === f.kind) && (!f.scope || scopeMatches(item.scope, f.scope)) && (!f.action || item.action === f.action) && (!f.appliesTo || scopeCovers(item.scope, f.appliesTo));
}

/** First index whose id is > after (items are sorted by id). */
function startAfter(items: BlockedItem[], after: string | undefined): number {
  if (after === undefined) return 0;
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (items[mid].id <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface ListingPage {
  body: Buffer;
  count: number;
  /** The id to pass as `after` for the next page; absent on the last page. */
  next?: string;
}

type Live = (item: BlockedItem) => LiveParts;

/** The JSON members of items [from, to) that count, comma separated (no braces). */
function members(cache: ListingCache, e: ListingEntries, from: number, to: number, now: number, filter: ListingFilter, live: Live, max = Number.MAX_SAFE_INTEGER): { parts: Buffer[]; count: number; next: number; last?: string } {
  const parts: Buffer[] = [];
  let count = 0;
  let i = from;
  let last: string | undefined;
  for (; i < to && count < max; i++) {
    const item = e.items[i];
    if (!keep(item, now, filter)) continue;
    if (count > 0) parts.push(COMMA);
    parts.push(headOf(e, i), cache.tail(live(item)));
    count++;
    last = item.id;
  }
  return { parts, count, next: i, ...(last !== undefined ? { last } : {}) };
}

/** One page: at most `limit` items with id > after, as one JSON map, and the next cursor. */
export function listingPage(cache: ListingCache, e: ListingEntries, o: { now: number; filter: ListingFilter; after?: string; limit: number; live: Live }): ListingPage {
  const m = members(cache, e, startAfter(e.items, o.after), e.items.length, o.now, o.filter, o.live, o.limit);
  let more = false;
  for (let i = m.next; i < e.items.length; i++) {
    if (keep(e.items[i], o.now, o.filter)) {
      more = true;
      break;
    }
  }
  return { body: Buffer.concat([OPEN, ...m.parts, CLOSE]), count: m.count, ...(more && m.last !== undefined ? { next: m.last } : {}) };
}

/**
 * The whole listing: one buffer when small, else a stream producing one chunk at a time, only when
 * the consumer (the socket) asks for more, each step paced by the cache's per-turn budget (so
 * however many listings are in flight, their work per event-loop turn stays bounded and the other
 * requests are served in between). Backpressure is the stream's: a step runs only when the
 * socket has taken what was pushed before, so at most about one chunk per reader waits in memory.
 */
export function fullListing(cache: ListingCache, e: ListingEntries, o: { now: number; filter: ListingFilter; live: Live }): Buffer | Readable {
  if (e.items.length <= STREAM_ABOVE) return listingPage(cache, e, { ...o, limit: Number.MAX_SAFE_INTEGER }).body;
  const unfiltered = !o.filter.kind && !o.filter.scope && !o.filter.action && !o.filter.appliesTo;
  const shared = unfiltered ? cache.share(e, o.now, o.live) : undefined;
  const src: ChunkSource = shared ?? { entries: e, now: o.now, filter: o.filter, live: o.live, chunks: [], next: 0 };
  const total = e.items.length;
  const reader: Reader = { at: 0 };
  shared?.readers.add(reader);
  const unhold = cache.hold();
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    unhold();
    if (!shared) return;
    shared.readers.delete(reader);
    if (shared.readers.size === 0) shared.done();
  };
  /** This reader's next chunk, built if nobody has yet; undefined past the end. */
  const nextChunk = (): Buffer | undefined => {
    const j = reader.at;
    let b = src.chunks[j];
    if (b === undefined) {
      if (src.next >= total) return undefined;
      b = buildChunk(cache, src);
    }
    reader.at = j + 1;
    if (shared) dropBehind(shared);
    else src.chunks[j] = undefined;
    return b;
  };
  let wroteAny = false;
  let queued = false;
  const step = (): void => {
    queued = false;
    if (stream.destroyed) return;
    const b = nextChunk();
    if (b === undefined) {
      stream.push(wroteAny ? CLOSE : EMPTY_MAP);
      release();
      stream.push(null);
      return;
    }
    if (b.length === 0) {
      // Nothing in this chunk counts (filtered or expired): take the next one in a later step.
      queued = true;
      cache.pace(step);
      return;
    }
    stream.push(wroteAny ? COMMA : OPEN);
    wroteAny = true;
    // push() asks for more (read() again) only while the stream's buffer has room.
    stream.push(b);
  };
  const stream = new Readable({
    read() {
      if (queued) return;
      queued = true;
      cache.pace(step);
    },
    destroy(err, cb) {
      release();
      cb(err);
    },
  });
  return stream;
}

/** Once nobody can join any more, a chunk every reader has passed is not needed again. */
function dropBehind(s: SharedListing): void {
  if (performance.now() - s.openedAt <= SHARE_MS) return;
  let min = Infinity;
  for (const r of s.readers) min = Math.min(min, r.at);
  if (min === Infinity) return;
  for (let j = s.dropped; j < min; j++) s.chunks[j] = undefined;
  s.dropped = Math.max(s.dropped, min);
}
