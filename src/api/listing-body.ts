/**
 * The body of a GET /blocklist response from the cached entries (listing-cache.ts): a page
 * (`?after=&limit=`) or the whole listing, the stored heads with each item's live tail, filtered and
 * cut at the request's clock. A large body is a stream of chunks built only as the socket takes
 * them, each within the cache's per-turn budget, and an unfiltered one may be shared by listings
 * that start within SHARE_MS of each other.
 */
import { Readable } from 'node:stream';
import { BlockedItem } from '../model/item';
import { isExpired } from '../model/effective';
import { scopeCovers, scopeMatches } from '../model/scope';
import { ListingEntries, headOf } from './listing-entries';
import { ChunkSource, ListingCache, ListingFilter, Live, Reader, SHARE_MS, SharedListing } from './listing-cache';

/** A full listing with more entries than this is streamed in slices; below it one buffer is faster. */
export const STREAM_ABOVE = 2_000;
/** Most items in one chunk of a streamed listing. */
const CHUNK_MAX = 500;
/** A chunk ends after this much work even if it holds fewer items (an item's live part can be costly). */
const CHUNK_MS = 2;

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from('}');
const EMPTY_MAP = Buffer.from('{}');

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
  const { nextChunk, release } = chunkReader(cache, e, o);
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

/**
 * One listing's reader of the chunks: shared with the unfiltered listings that start within
 * SHARE_MS (each chunk built once for all), else its own. `release` lets go of the cache (and of the
 * share) once, at the end or when the socket goes.
 */
function chunkReader(cache: ListingCache, e: ListingEntries, o: { now: number; filter: ListingFilter; live: Live }): { nextChunk(): Buffer | undefined; release(): void } {
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
  return { nextChunk, release };
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
