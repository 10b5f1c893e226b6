/**
 * The embedded store: one SQLite file (better-sqlite3 12.x).
 *
 * - WAL + synchronous=FULL: a commit is fsync'd before add() resolves, so an acknowledged write
 *   survives SIGKILL and power loss.
 * - Writes run in BEGIN IMMEDIATE transactions: the merge is read-modify-write under SQLite's
 *   write lock, atomic across threads and processes (the CLI may open the same file).
 * - busy_timeout lets a second process wait for the lock instead of failing at once.
 * - Schema migrations are numbered and recorded in PRAGMA user_version.
 */
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BlockedItem, isPermanent } from '../model/item';
import { decide } from '../model/decide';
import { AddOutcome, AddRequest, BlocklistStore, StoreUnavailableError, checkRecordKey, outcomeOf } from './store';
import { CorruptItemError, decodeStored, encodeItem } from './codec';
import { Logger, silentLogger } from '../core/logger';
import { Quarantine, QuarantinedRow, quarantinedRow } from './quarantine';
import { ItemCache } from './item-cache';

/** Each entry migrates from version i to i+1. Append only; never edit a shipped step. */
const MIGRATIONS: string[] = [
  `CREATE TABLE items (
     id     TEXT PRIMARY KEY,
     end_ts INTEGER,            -- NULL = permanent; indexed for removeExpired
     data   TEXT NOT NULL       -- codec.ts JSON
   ) WITHOUT ROWID;
   CREATE INDEX items_end ON items(end_ts) WHERE end_ts IS NOT NULL;
   CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
   INSERT INTO meta(key, value) VALUES ('version', 0);`,
  `CREATE TABLE records (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`,
];

export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

export interface SqliteStoreOptions {
  /** How long a writer waits for another process's lock before failing (ms). */
  busyTimeoutMs?: number;
  readonly?: boolean;
  /** Where a quarantined row is reported. */
  logger?: Logger;
}

const endColumn = (item: BlockedItem): number | null => (isPermanent(item.endTimestamp) ? null : item.endTimestamp);

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
  private readonly db: Database.Database;
  private readonly stmts: {
    get: Database.Statement<[string], { data: string }>;
    list: Database.Statement<[], { id: string; data: string }>;
    insert: Database.Statement<[string, number | null, string]>;
    update: Database.Statement<[number | null, string, string]>;
    del: Database.Statement<[string]>;
    expired: Database.Statement<[number], { id: string; data: string }>;
    version: Database.Statement<[], { value: number }>;
    bump: Database.Statement<[]>;
    readRecord: Database.Statement<[string], { value: string }>;
    writeRecord: Database.Statement<[string, string]>;
  };

  /** The last list() and the store version it was read at. */
  private listCache: ItemCache | undefined;
  private readonly quarantine: Quarantine;

  private pendingAdds: { reqs: AddRequest[]; resolve: (o: AddOutcome[]) => void; reject: (e: unknown) => void }[] = [];

  constructor(readonly file: string, opts: SqliteStoreOptions = {}) {
    this.description = `sqlite:${file}`;
    this.quarantine = new Quarantine(opts.logger ?? silentLogger, this.description);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    try {
      this.db = new Database(file, { readonly: opts.readonly ?? false, timeout: opts.busyTimeoutMs ?? 5000 });
      if (!opts.readonly) {
        this.db.pragma('journal_mode = WAL');
        this.db.pragma('synchronous = FULL');
        this.migrate();
      }
    } catch (e) {
      unavailable(e, `opening ${file}`);
    }
    this.stmts = {
      get: this.db.prepare('SELECT data FROM items WHERE id = ?'),
      list: this.db.prepare('SELECT id, data FROM items ORDER BY id'),
      insert: this.db.prepare('INSERT INTO items(id, end_ts, data) VALUES (?, ?, ?)'),
      update: this.db.prepare('UPDATE items SET end_ts = ?, data = ? WHERE id = ?'),
      del: this.db.prepare('DELETE FROM items WHERE id = ?'),
      expired: this.db.prepare('SELECT id, data FROM items WHERE end_ts IS NOT NULL AND end_ts <= ?'),
      version: this.db.prepare("SELECT value FROM meta WHERE key = 'version'"),
      bump: this.db.prepare("UPDATE meta SET value = value + 1 WHERE key = 'version'"),
      readRecord: this.db.prepare('SELECT value FROM records WHERE key = ?'),
      writeRecord: this.db.prepare('INSERT INTO records(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
    };
  }

  private migrate(): void {
    const current = this.db.pragma('user_version', { simple: true }) as number;
    if (current > MIGRATIONS.length) {
      throw new StoreUnavailableError(`sqlite store ${this.file} has schema version ${current}, newer than this program (${MIGRATIONS.length}); upgrade the sidecar`);
    }
    for (let v = current; v < MIGRATIONS.length; v++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[v]);
        this.db.pragma(`user_version = ${v + 1}`);
      }).immediate();
    }
  }

  /**
   * read → decide → write, inside the group's BEGIN IMMEDIATE transaction: SQLite's write lock is
   * held from the read to the write, so the compare-and-set cannot lose and needs no retry.
   */
  private addOne(req: AddRequest): AddOutcome {
    const row = this.stmts.get.get(req.item.id);
    const d = decide(row ? decodeStored(req.item.id, row.data) : undefined, req, req.item.created.at);
    if (d.outcome === 'created' || d.outcome === 'merged') {
      if (row) this.stmts.update.run(endColumn(d.write), encodeItem(d.write), d.write.id);
      else this.stmts.insert.run(d.write.id, endColumn(d.write), encodeItem(d.write));
      this.stmts.bump.run();
    }
    return outcomeOf(d);
  }

  async add(req: AddRequest): Promise<AddOutcome> {
    return (await this.addMany([req]))[0];
  }

  /**
   * Group commit: adds that arrive in the same event-loop turn (concurrent API requests) share one
   * transaction and so one fsync, and each promise resolves only after that commit. Each request
   * runs in its own savepoint, so a request that fails on bad stored data (a corrupt row) is rolled
   * back alone; an I/O failure fails the whole group and acknowledges none of it.
   */
  addMany(reqs: AddRequest[]): Promise<AddOutcome[]> {
    return new Promise((resolve, reject) => {
      this.pendingAdds.push({ reqs, resolve, reject });
      if (this.pendingAdds.length === 1) setImmediate(() => this.commitPendingAdds());
    });
  }

  private commitPendingAdds(): void {
    const group = this.pendingAdds;
    this.pendingAdds = [];
    let results: (AddOutcome[] | CorruptItemError)[];
    let versions: [number, number];
    try {
      [results, versions] = this.db
        .transaction((): [(AddOutcome[] | CorruptItemError)[], [number, number]] => {
          const before = this.currentVersion();
          const out = group.map((g) => {
            try {
              return this.db.transaction(() => g.reqs.map((r) => this.addOne(r)))();
            } catch (e) {
              if (e instanceof CorruptItemError) return e;
              throw e;
            }
          });
          return [out, [before, this.currentVersion()]];
        })
        .immediate();
    } catch (e) {
      let failure: unknown = e;
      try {
        unavailable(e, 'write');
      } catch (mapped) {
        failure = mapped;
      }
      for (const g of group) g.reject(failure);
      return;
    }
    this.afterWrite(versions, (cache) => {
      for (const r of results) {
        if (r instanceof CorruptItemError) continue;
        for (const o of r) if (o.outcome === 'created' || o.outcome === 'merged') cache.upsert(o.item);
      }
    });
    group.forEach((g, i) => {
      const r = results[i];
      if (r instanceof CorruptItemError) g.reject(r);
      else g.resolve(r);
    });
  }

  private currentVersion(): number {
    return this.stmts.version.get()?.value ?? 0;
  }

  /**
   * Keeps the list cache current after a committed write of ours: applied only when the cache
   * reflected the version the write started from (no other process wrote in between).
   */
  private afterWrite([before, after]: [number, number], apply: (cache: ItemCache) => void): void {
    if (before === after || !this.listCache) return;
    if (this.listCache.version !== before) {
      this.listCache = undefined;
      return;
    }
    apply(this.listCache);
    this.listCache.version = after;
  }

  async get(id: string): Promise<BlockedItem | undefined> {
    try {
      const row = this.stmts.get.get(id);
      return row ? decodeStored(id, row.data) : undefined;
    } catch (e) {
      unavailable(e, 'read');
    }
  }

  async list(): Promise<BlockedItem[]> {
    try {
      // One read transaction, so the version and the rows are the same snapshot. An unchanged
      // version means unchanged rows: hand out the items decoded last time instead of decoding
      // every row again (for 10,000 items decoding cost as much as serialising GET /blocklist,
      // docs/benchmarks.md). Callers share the item objects and never mutate them.
      return this.db.transaction(() => {
        const version = this.currentVersion();
        if (this.listCache?.version !== version) {
          // Row by row (iterate, not all()): 100,000 rows' raw JSON is never held at once beside
          // the decoded items, which keeps the sidecar's peak, and so its RSS, lower.
          const items: BlockedItem[] = [];
          const bad: QuarantinedRow[] = [];
          for (const r of this.stmts.list.iterate()) {
            try {
              items.push(decodeStored(r.id, r.data));
            } catch (e) {
              if (!(e instanceof CorruptItemError)) throw e;
              bad.push(quarantinedRow(e, r.id));
            }
          }
          this.quarantine.replace(bad);
          this.listCache = new ItemCache(version, items);
        }
        return this.listCache.snapshot();
      })();
    } catch (e) {
      unavailable(e, 'read');
    }
  }

  async remove(id: string): Promise<BlockedItem | undefined> {
    try {
      const removed = this.db.transaction(() => {
        const row = this.stmts.get.get(id);
        if (!row) return undefined;
        // A row that cannot be decoded is not removed here (CorruptItemError): removeQuarantined.
        const item = decodeStored(id, row.data);
        const before = this.currentVersion();
        this.stmts.del.run(id);
        this.stmts.bump.run();
        return { item, versions: [before, this.currentVersion()] as [number, number] };
      }).immediate();
      if (!removed) return undefined;
      this.afterWrite(removed.versions, (cache) => cache.delete(id));
      return removed.item;
    } catch (e) {
      unavailable(e, 'write');
    }
  }

  quarantined(): QuarantinedRow[] {
    return this.quarantine.list();
  }

  async removeQuarantined(id: string): Promise<QuarantinedRow | undefined> {
    try {
      const done = this.db.transaction(() => {
        const row = this.stmts.get.get(id);
        if (!row) return undefined;
        try {
          decodeStored(id, row.data);
          return undefined; // decodable: not quarantined, not removed here
        } catch (e) {
          if (!(e instanceof CorruptItemError)) throw e;
          const before = this.currentVersion();
          this.stmts.del.run(id);
          this.stmts.bump.run();
          return { row: quarantinedRow(e, id), versions: [before, this.currentVersion()] as [number, number] };
        }
      }).immediate();
      if (!done) return undefined;
      this.quarantine.drop(id);
      this.afterWrite(done.versions, (cache) => cache.delete(id));
      return done.row;
    } catch (e) {
      unavailable(e, 'write');
    }
  }

  /** Rows past their end; one that cannot be decoded is skipped (quarantined, never expired). */
  async removeExpired(now: number): Promise<BlockedItem[]> {
    try {
      const done = this.db.transaction(() => {
        const before = this.currentVersion();
        const gone: BlockedItem[] = [];
        for (const r of this.stmts.expired.all(now)) {
          try {
            gone.push(decodeStored(r.id, r.data));
          } catch (e) {
            if (!(e instanceof CorruptItemError)) throw e;
            continue;
          }
          this.stmts.del.run(r.id);
        }
        if (gone.length) this.stmts.bump.run();
        return { gone, versions: [before, this.currentVersion()] as [number, number] };
      }).immediate();
      this.afterWrite(done.versions, (cache) => done.gone.forEach((it) => cache.delete(it.id)));
      return done.gone;
    } catch (e) {
      unavailable(e, 'write');
    }
  }

  async version(): Promise<string> {
    try {
      return String(this.stmts.version.get()?.value ?? 0);
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
      this.stmts.writeRecord.run(key, value);
    } catch (e) {
      unavailable(e, `write record '${key}'`);
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
