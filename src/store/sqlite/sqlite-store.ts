/**
 * The embedded store: one SQLite file (better-sqlite3 12.x).
 *
 * - Every write is a durable transaction (sqlite/writes.ts: WAL, synchronous=FULL, BEGIN
 *   IMMEDIATE, numbered migrations); a write resolves only after its commit.
 * - With `writeThread` (the sidecar) the store has a worker thread with a connection of its own.
 *   Writes still commit here, at once (handing one to a thread and back adds two thread wake-ups,
 *   which cost more than a fast fsync), except: a write that finds another process holding the
 *   lock goes to the thread, which waits for it while the event loop serves reads; and after a
 *   concurrent group commit here was slow (slowCommitMs), writes go to the thread for a while,
 *   where whatever arrives during a commit forms the next group (the rules: write-route.ts).
 *   Reads stay on this thread's connection (WAL lets a reader and a writer work at once).
 *   Without it (the CLI, an in-memory database) every write runs here.
 * - busy_timeout lets a second process wait for the lock instead of failing at once.
 */
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BlockedItem } from '../../model/item';
import { AddOutcome, AddRequest, BlocklistStore, ItemChangedError, StoreUnavailableError, checkRecordKey } from '../store';
import { compactItem, decodeStored } from '../codec';
import { Logger, silentLogger } from '../../core/logger';
import { Quarantine, QuarantinedRow } from '../quarantine';
import { ItemListing } from './item-listing';
import { AddsDone, OpOf, WriteOp, WriteResults, SQLITE_SCHEMA_VERSION, fromWire, openWritable } from './writes';
import { openProblem, probeWriteAccess } from './open-problem';
import { FileReserve, SpaceReserve, isDiskFull } from './space-reserve';
import { ThreadWriter } from './writer';
import { WriteRoute } from './write-route';
import { CallAnswer, GroupCommit, GroupShape } from './group-commit';

export { SQLITE_SCHEMA_VERSION };

export interface SqliteStoreOptions {
  /** How long a writer waits for another process's lock before failing (ms). */
  busyTimeoutMs?: number;
  readonly?: boolean;
  /** Where a quarantined row is reported. */
  logger?: Logger;
  /**
   * Run concurrent writes on a worker thread (ignored for ':memory:' and read-only stores): for a
   * long-running process, whose event loop then keeps serving while a commit is fsync'd.
   * `'always'`: every write, lone ones too (tests of the thread's path).
   */
  writeThread?: boolean | 'always';
  /**
   * With `writeThread: true`: concurrent writes go to the thread for a while after a group commit
   * here took at least this long (ms, default 20). Commits here do not wait for the disk (the WAL
   * is synced off the loop, wal-sync.ts), so only a commit that is slow on the CPU (a huge batch)
   * or behind a slow write() sends writes there.
   */
  slowCommitMs?: number;
  /** How the WAL is synced in libuv's pool (tests inject a controllable one; default fs.fdatasync). A lone write's sync on the loop (WalSync.inline) is always fs.fdatasyncSync. */
  walSync?: (fd: number) => Promise<void>;
  /** The clock WalSync times its syncs with, to decide whether a lone write syncs on the loop (tests). */
  walSyncClock?: () => number;
  /** Space kept aside for removals on a full disk (space-reserve.ts); default `<file>.reserve`, false = none. */
  reserve?: SpaceReserve | false;
}

/**
 * An outcome as this thread keeps it. A created item is the request's own item (model/decide
 * writes it as it is), so the copy that came back from the write thread is dropped; a merged one
 * gets the strings it shares with every other item (codec.ts compactItem). Without this a bulk
 * load through the write thread would hold a second copy of each repeated string per item.
 */
function own(o: AddOutcome, req: AddRequest): AddOutcome {
  if (o.outcome === 'created' && o.item.id === req.item.id) return { outcome: 'created', item: req.item };
  if (o.outcome === 'merged') return { outcome: 'merged', item: compactItem(o.item), previous: o.previous };
  return o;
}

/** SQLite errors that mean "the store cannot take this now", not "the request is wrong". */
function unavailable(e: unknown, what: string): never {
  if (e instanceof StoreUnavailableError) throw e;
  const code = (e as { code?: unknown }).code;
  if (e instanceof Database.SqliteError || (typeof code === 'string' && /^(SQLITE_|E[A-Z]+$)/.test(code))) {
    throw new StoreUnavailableError(`sqlite store: ${what} failed: ${(e as Error).message}${typeof code === 'string' ? ` (${code})` : ''}`, e);
  }
  throw e;
}

export class SqliteStore implements BlocklistStore {
  readonly description: string;
  /** This thread's connection: every read, and the writes too unless they run on the write thread. */
  private readonly db: Database.Database;
  /** The write thread, when the store has one. */
  private readonly thread: ThreadWriter | undefined;
  /** Where each write runs (write-route.ts). */
  private readonly route: WriteRoute;
  private readonly stmts: {
    get: Database.Statement<[string], { data: string }>;
    readRecord: Database.Statement<[string], { value: string }>;
    recordKeys: Database.Statement<[], { key: string }>;
  };

  /** list() and its cache (item-listing.ts). */
  private readonly listing: ItemListing;
  private readonly quarantine: Quarantine;
  private readonly log: Logger;
  /** Space for removals on a full disk; undefined for read-only and in-memory stores. */
  private readonly reserve: SpaceReserve | undefined;

  /** Adds waiting for, or in, a group commit (group-commit.ts). */
  private readonly adds: GroupCommit<AddRequest[], AddOutcome[]>;

  constructor(
    readonly file: string,
    opts: SqliteStoreOptions = {},
  ) {
    this.description = `sqlite:${file}`;
    this.quarantine = new Quarantine(opts.logger ?? silentLogger, this.description);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
    try {
      this.db = opts.readonly ? new Database(file, { readonly: true, timeout: busyTimeoutMs }) : openWritable(file, busyTimeoutMs);
    } catch (e) {
      // SQLITE_CANTOPEN and SQLITE_READONLY say nothing of why: a read-only mount, a folder or file not ours.
      const why = !opts.readonly && file !== ':memory:' && /CANTOPEN|READONLY/.test(String((e as { code?: unknown }).code)) ? openProblem(file, probeWriteAccess(file)) : undefined;
      if (why) throw new StoreUnavailableError(`sqlite store: cannot open ${file} for writing: ${why} (${String((e as { code?: unknown }).code)})`, e);
      unavailable(e, `opening ${file}`);
    }
    this.thread = opts.writeThread && !opts.readonly && file !== ':memory:' ? new ThreadWriter({ file: path.resolve(file), busyTimeoutMs }) : undefined;
    this.route = new WriteRoute(this.db, this.thread, { always: opts.writeThread === 'always', slowCommitMs: opts.slowCommitMs ?? 20, busyTimeoutMs, ...(opts.walSync ? { walSync: opts.walSync } : {}), ...(opts.walSyncClock ? { walSyncClock: opts.walSyncClock } : {}) });
    this.stmts = {
      get: this.db.prepare('SELECT data FROM items WHERE id = ?'),
      readRecord: this.db.prepare('SELECT value FROM records WHERE key = ?'),
      recordKeys: this.db.prepare('SELECT key FROM records'),
    };
    this.listing = new ItemListing(this.db, this.thread, this.quarantine);
    this.adds = new GroupCommit((groups, shape) => this.commitAdds(groups, shape), { walSync: this.route.wal !== undefined });
    this.log = opts.logger ?? silentLogger;
    this.reserve = opts.readonly || file === ':memory:' || opts.reserve === false ? undefined : (opts.reserve ?? new FileReserve(`${file}.reserve`));
    this.reserve?.ensure();
  }

  /**
   * A removal lifts a block: on a full disk it may use the reserved space (tried once more after
   * releasing it), where an add waits for space. Said loudly, since the disk needs an operator.
   */
  private async lifting<T>(what: string, write: () => Promise<T>): Promise<T> {
    try {
      const out = await write();
      this.reserve?.ensure();
      return out;
    } catch (e) {
      if (!isDiskFull(e) || !this.reserve?.release()) throw e;
      this.log.error(`sqlite store ${this.file}: the disk is full; released the reserved space to ${what} (new blocks are refused until there is room again)`);
      return write();
    }
  }

  async add(req: AddRequest): Promise<AddOutcome> {
    return (await this.addMany([req]))[0];
  }

  /**
   * Group commit (group-commit.ts): concurrent adds share one transaction and so one fsync; each
   * promise resolves only after that commit. Each request runs in its own savepoint, so a request
   * that fails on bad stored data (a corrupt row) is rolled back alone; an I/O failure fails the
   * whole group and acknowledges none of it.
   */
  addMany(reqs: AddRequest[]): Promise<AddOutcome[]> {
    return this.adds.add(reqs);
  }

  /** Writes one group of addMany calls; resolves once durable with each call's outcomes or its corrupt row. */
  private async commitAdds(groups: AddRequest[][], { concurrent, lone }: GroupShape): Promise<CallAnswer<AddOutcome[]>[]> {
    let results: AddsDone['results'] = [];
    try {
      // The cache takes the change as soon as it is committed (what any reader of the file can
      // see from then on); the callers hear of it once it is durable.
      const committed = (done: AddsDone): void => {
        const mine = done.results.map((r, i) => ('outcomes' in r ? { outcomes: r.outcomes.map((o, j) => own(o, groups[i][j])) } : r));
        results = mine;
        this.listing.afterWrite(done.versions, (cache) => {
          const changed: BlockedItem[] = [];
          for (const r of mine) {
            if (!('outcomes' in r)) continue;
            for (const o of r.outcomes) if (o.outcome === 'created' || o.outcome === 'merged') changed.push(o.item);
          }
          cache.upsertAll(changed);
        });
      };
      await this.route.run({ op: 'adds', groups }, concurrent, committed, lone);
    } catch (e) {
      unavailable(e, 'write');
    }
    return results.map((r) => ('outcomes' in r ? { kind: 'done', value: r.outcomes } : { kind: 'failed', error: fromWire(r.corrupt) }));
  }

  durable(): Promise<void> | undefined {
    return this.route.wal?.settled();
  }

  /** Write transactions run on this thread and on the write thread so far (for tests and diagnostics). */
  get writes(): { here: number; thread: number } {
    return this.route.writes;
  }

  /**
   * One write besides the adds' group commits; resolves once durable; `committed` runs as soon as
   * the transaction committed (write-route.ts). It is lone while no group commit is in flight.
   */
  private write<K extends WriteOp['op']>(op: OpOf<K>, committed?: (r: WriteResults[K]) => void): Promise<WriteResults[K]> {
    return this.route.run<K>(op, false, committed, this.adds.quiet);
  }

  async get(id: string): Promise<BlockedItem | undefined> {
    try {
      const row = this.stmts.get.get(id);
      return row ? decodeStored(id, row.data) : undefined;
    } catch (e) {
      unavailable(e, 'read');
    }
  }

  async list(): Promise<readonly BlockedItem[]> {
    try {
      return await this.listing.list();
    } catch (e) {
      unavailable(e, 'read');
    }
  }

  async remove(id: string, ifMatch?: string): Promise<BlockedItem | undefined> {
    let removed: WriteResults['remove'];
    try {
      removed = await this.lifting(`lift ${id}`, () =>
        this.write({ op: 'remove', id, ...(ifMatch !== undefined ? { ifMatch } : {}) }, (r) => {
          if (r && 'versions' in r) this.listing.afterWrite(r.versions, (cache) => cache.delete(id));
        }),
      );
    } catch (e) {
      unavailable(e, 'write');
    }
    if (removed && 'changed' in removed) throw new ItemChangedError(removed.changed);
    return removed?.item;
  }

  quarantined(): QuarantinedRow[] {
    return this.quarantine.list();
  }

  async removeQuarantined(id: string): Promise<QuarantinedRow | undefined> {
    try {
      const done = await this.lifting(`remove the quarantined row ${id}`, () =>
        this.write({ op: 'removeQuarantined', id }, (r) => {
          if (r) this.listing.afterWrite(r.versions, (cache) => cache.delete(id));
        }),
      );
      if (!done) return undefined;
      this.quarantine.drop(id);
      return done.row;
    } catch (e) {
      unavailable(e, 'write');
    }
  }

  /** Rows past their end; one that cannot be decoded is skipped (quarantined, never expired). */
  async removeExpired(now: number): Promise<BlockedItem[]> {
    try {
      const done = await this.lifting('delete ended blocks', () => this.write({ op: 'removeExpired', now }, (r) => this.listing.afterWrite(r.versions, (cache) => cache.deleteAll(r.gone.map((it) => it.id)))));
      return done.gone;
    } catch (e) {
      unavailable(e, 'write');
    }
  }

  async version(): Promise<string> {
    try {
      return String(this.listing.currentVersion());
    } catch (e) {
      unavailable(e, 'read');
    }
  }

  async readRecord(key: string): Promise<string | undefined> {
    checkRecordKey(key);
    try {
      return this.stmts.readRecord.get(key)?.value;
    } catch (e) {
      unavailable(e, `read record '${key}'`);
    }
  }

  async writeRecord(key: string, value: string): Promise<void> {
    checkRecordKey(key);
    try {
      await this.write({ op: 'writeRecord', key, value });
    } catch (e) {
      unavailable(e, `write record '${key}'`);
    }
  }

  async recordKeys(prefix: string): Promise<string[]> {
    try {
      return this.stmts.recordKeys.all().map((r) => r.key).filter((k) => k.startsWith(prefix));
    } catch (e) {
      unavailable(e, `list records '${prefix}*'`);
    }
  }

  async removeRecord(key: string, expected: string): Promise<boolean> {
    checkRecordKey(key);
    try {
      return await this.write({ op: 'removeRecord', key, expected });
    } catch (e) {
      unavailable(e, `remove record '${key}'`);
    }
  }

  async replaceRecord(key: string, expected: string | undefined, value: string): Promise<boolean> {
    checkRecordKey(key);
    try {
      return await this.write({ op: 'writeRecord', key, value, expected: expected ?? null });
    } catch (e) {
      unavailable(e, `replace record '${key}'`);
    }
  }

  async close(): Promise<void> {
    // Adds still waiting for their group commit are written first, as a caller that awaited them expects.
    await this.adds.drained();
    await this.thread?.close();
    await this.route.close();
    if (this.db.open) this.db.close();
  }
}
