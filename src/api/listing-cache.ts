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
import { Clock, systemClock } from '../core/clock';
import { BlockedItem } from '../model/item';
import { TurnBudget } from './event-loop-budget';
import { ListingEntries, ListingSource, buildEntries } from './listing-entries';

/** The memo of live JSON fragments is dropped when it grows past this (values are few in practice). */
const MEMO_MAX = 4096;
/** Work of all streamed listings (and cache builds) per event-loop turn, all together. */
const TURN_BUDGET_MS = 8;
/** How long a full listing may be joined or reused (its live parts are as old as that). */
export const SHARE_MS = 1000;
/** A finished full listing up to this size is kept for SHARE_MS for the next request to reuse. */
const RECENT_MAX_BYTES = 16 * 1024 * 1024;
/** How long the serialisation is kept after its last use (rest.listing.cache-retention's default). */
export const DEFAULT_RETENTION_MS = 30_000;

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

/** The live parts of an item, as of the listing's clock. */
export type Live = (item: BlockedItem) => LiveParts;

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

  /** Runs `step` in a later event-loop turn, within the turn budget every listing shares (event-loop-budget.ts). */
  pace(step: () => void): void {
    this.turns.run(step);
  }

  private readonly turns = new TurnBudget(TURN_BUDGET_MS);
}

export interface Reader {
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
export interface ChunkSource {
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

export interface SharedListing extends ChunkSource {
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

