/**
 * The SQLite store's writes, on one connection: the schema, the pragmas that make a commit durable,
 * and every write transaction. The store runs them either on its own connection (inline) or on a
 * connection owned by a worker thread (sqlite/write-thread.ts), so the fsync of a commit does not
 * hold the event loop; both run this one code, and everything a write returns is plain data that
 * crosses a thread by structured clone.
 *
 * - WAL + synchronous=FULL: a commit is fsync'd before it returns, so an acknowledged write
 *   survives SIGKILL and power loss. synchronous is a per-connection setting: every writing
 *   connection sets it here.
 * - Writes run in BEGIN IMMEDIATE transactions: the merge is read-modify-write under SQLite's
 *   write lock, atomic across threads and processes (the CLI may open the same file).
 * - Schema migrations are numbered and recorded in PRAGMA user_version.
 */
import Database from 'better-sqlite3';
import { BlockedItem, isPermanent, tagMatches } from '../../model/item';
import { decide } from '../../model/decide';
import { AddOutcome, AddRequest, StoreUnavailableError, outcomeOf } from '../store';
import { CorruptItemError, decodeStored, encodeItem } from '../codec';
import { QuarantinedRow, quarantinedRow } from '../quarantine';

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

/** The store version before and after a write transaction (equal: nothing changed). */
export type Versions = [before: number, after: number];

/** A failure as data: what crosses back from the write thread and becomes the same error again. */
export type WireError = { kind: 'corrupt'; message: string; id?: string } | { kind: 'sqlite'; message: string; code?: string } | { kind: 'other'; message: string };

/** One addMany call of a group commit: its outcomes, or the corrupt stored row that failed it alone. */
export type GroupResult = { outcomes: AddOutcome[] } | { corrupt: WireError };

export interface AddsDone {
  results: GroupResult[];
  versions: Versions;
}
/** `changed`: an If-Match named another version (nothing removed). */
export type RemoveDone = { item: BlockedItem; versions: Versions } | { changed: BlockedItem } | undefined;
export type RemoveQuarantinedDone = { row: QuarantinedRow; versions: Versions } | undefined;
export interface RemoveExpiredDone {
  gone: BlockedItem[];
  versions: Versions;
}

const endColumn = (item: BlockedItem): number | null => (isPermanent(item.endTimestamp) ? null : item.endTimestamp);

export function toWire(e: unknown): WireError {
  if (e instanceof CorruptItemError) return { kind: 'corrupt', message: e.message, ...(e.id !== undefined ? { id: e.id } : {}) };
  const code = (e as { code?: unknown } | null)?.code;
  if (e instanceof Database.SqliteError || typeof code === 'string') return { kind: 'sqlite', message: e instanceof Error ? e.message : String(e), ...(typeof code === 'string' ? { code } : {}) };
  if (e instanceof StoreUnavailableError) return { kind: 'sqlite', message: e.message };
  return { kind: 'other', message: e instanceof Error ? e.message : String(e) };
}

/** The error a WireError stands for (a sqlite one keeps its code, so the store maps it to "unavailable"). */
export function fromWire(w: WireError): Error {
  if (w.kind === 'corrupt') {
    const e = new CorruptItemError(w.message);
    if (w.id !== undefined) e.id = w.id;
    return e;
  }
  if (w.kind === 'sqlite') return Object.assign(new Error(w.message), { code: w.code ?? 'SQLITE_ERROR' });
  return new Error(w.message);
}

/** Opens a connection that writes: WAL, synchronous=FULL, the schema migrated. */
export function openWritable(file: string, busyTimeoutMs: number): Database.Database {
  const db = new Database(file, { timeout: busyTimeoutMs });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    migrate(db, file);
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

function migrate(db: Database.Database, file: string): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new StoreUnavailableError(`sqlite store ${file} has schema version ${current}, newer than this program (${MIGRATIONS.length}); upgrade the sidecar`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}

/** WAL frames (pages) above which the thread's checkpoint makes the WAL start over (~4 MB). */
const RESTART_ABOVE_FRAMES = 1000;

export class SqliteWrites {
  private readonly stmts: {
    get: Database.Statement<[string], { data: string }>;
    insert: Database.Statement<[string, number | null, string]>;
    update: Database.Statement<[number | null, string, string]>;
    del: Database.Statement<[string]>;
    expired: Database.Statement<[number], { id: string; data: string }>;
    version: Database.Statement<[], { value: number }>;
    bump: Database.Statement<[]>;
    writeRecord: Database.Statement<[string, string]>;
    readRecord: Database.Statement<[string], { value: string }>;
    removeRecord: Database.Statement<[string, string]>;
  };
  /**
   * The group commit's transaction and each call's savepoint, made once: better-sqlite3 builds a
   * transaction function with four wrappers and their properties on every db.transaction() call,
   * which per request cost more than the savepoint's two statements.
   */
  private readonly adds: { group: Database.Transaction<(groups: readonly AddRequest[][]) => AddsDone>; call: Database.Transaction<(reqs: readonly AddRequest[]) => AddOutcome[]> };

  constructor(private readonly db: Database.Database) {
    this.stmts = {
      get: db.prepare('SELECT data FROM items WHERE id = ?'),
      insert: db.prepare('INSERT INTO items(id, end_ts, data) VALUES (?, ?, ?)'),
      update: db.prepare('UPDATE items SET end_ts = ?, data = ? WHERE id = ?'),
      del: db.prepare('DELETE FROM items WHERE id = ?'),
      expired: db.prepare('SELECT id, data FROM items WHERE end_ts IS NOT NULL AND end_ts <= ?'),
      version: db.prepare("SELECT value FROM meta WHERE key = 'version'"),
      bump: db.prepare("UPDATE meta SET value = value + 1 WHERE key = 'version'"),
      writeRecord: db.prepare('INSERT INTO records(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      readRecord: db.prepare('SELECT value FROM records WHERE key = ?'),
      removeRecord: db.prepare('DELETE FROM records WHERE key = ? AND value = ?'),
    };
    // Inside the group's transaction, the call's db.transaction() runs as a savepoint.
    const call = db.transaction((reqs: readonly AddRequest[]) => reqs.map((r) => this.addOne(r)));
    const group = db.transaction((groups: readonly AddRequest[][]): AddsDone => {
      const before = this.version();
      let changed = false;
      const results = groups.map((reqs): GroupResult => {
        try {
          // A call of one request needs no savepoint: the only failure it survives (a corrupt
          // stored row, CorruptItemError) is thrown by the decode, before it writes anything; any
          // other failure fails the whole group. That spares two statements per PUT.
          const outcomes = reqs.length === 1 ? [this.addOne(reqs[0])] : call(reqs);
          if (outcomes.some((o) => o.outcome === 'created' || o.outcome === 'merged')) changed = true;
          return { outcomes };
        } catch (e) {
          if (e instanceof CorruptItemError) return { corrupt: toWire(e) };
          throw e;
        }
      });
      // The version moves once per transaction that changed something (as an expiry pass moves it
      // once for all it removed), not once per row: one statement per group instead of per PUT.
      if (changed) this.stmts.bump.run();
      return { results, versions: [before, this.version()] };
    });
    this.adds = { group, call };
  }

  private version(): number {
    return this.stmts.version.get()?.value ?? 0;
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
    }
    return outcomeOf(d);
  }

  /**
   * One transaction, so one fsync, for several addMany calls. Each call runs in its own savepoint:
   * a call that fails on bad stored data (a corrupt row) is rolled back alone; any other failure
   * (I/O, a full disk) throws and commits none of them.
   */
  commitAdds(groups: readonly AddRequest[][]): AddsDone {
    return this.adds.group.immediate(groups);
  }

  remove(id: string, ifMatch?: string): RemoveDone {
    return this.db
      .transaction((): RemoveDone => {
        const row = this.stmts.get.get(id);
        if (!row) return undefined;
        // A row that cannot be decoded is not removed here (CorruptItemError): removeQuarantined.
        const item = decodeStored(id, row.data);
        if (ifMatch !== undefined && !tagMatches(ifMatch, item)) return { changed: item };
        return { item, versions: this.deleteRow(id) };
      })
      .immediate();
  }

  /** Deletes one row and moves the store's version, as every removal does; the versions around it. */
  private deleteRow(id: string): Versions {
    const before = this.version();
    this.stmts.del.run(id);
    this.stmts.bump.run();
    return [before, this.version()];
  }

  removeQuarantined(id: string): RemoveQuarantinedDone {
    return this.db
      .transaction((): RemoveQuarantinedDone => {
        const row = this.stmts.get.get(id);
        if (!row) return undefined;
        try {
          decodeStored(id, row.data);
          return undefined; // decodable: not quarantined, not removed here
        } catch (e) {
          if (!(e instanceof CorruptItemError)) throw e;
          return { row: quarantinedRow(e, id), versions: this.deleteRow(id) };
        }
      })
      .immediate();
  }

  /** Rows past their end; one that cannot be decoded is skipped (quarantined, never expired). */
  removeExpired(now: number): RemoveExpiredDone {
    return this.db
      .transaction((): RemoveExpiredDone => {
        const before = this.version();
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
        return { gone, versions: [before, this.version()] };
      })
      .immediate();
  }

  /**
   * Writes a record; with `expected` only if the stored text is still exactly that (null: absent),
   * read and written under one write lock (BEGIN IMMEDIATE). false = changed meanwhile, nothing written.
   */
  writeRecord(key: string, value: string, expected?: string | null): boolean {
    if (expected === undefined) {
      this.stmts.writeRecord.run(key, value);
      return true;
    }
    return this.db
      .transaction((): boolean => {
        if ((this.stmts.readRecord.get(key)?.value ?? null) !== expected) return false;
        this.stmts.writeRecord.run(key, value);
        return true;
      })
      .immediate();
  }

  /** Deletes a record only if its text is still `expected` (one statement: atomic). */
  removeRecord(key: string, expected: string): boolean {
    return this.stmts.removeRecord.run(key, expected).changes > 0;
  }

  /**
   * Copies what the WAL holds into the database file as far as it can without waiting for anyone
   * (PASSIVE), so the WAL can start over. The write thread runs it for the store's own connection,
   * whose commits do not checkpoint (write-route.ts).
   */
  checkpoint(): void {
    const [r] = this.db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    // The WAL starts over only when a write begins after a checkpoint copied all of it. Under a
    // steady stream a commit lands during every PASSIVE checkpoint, so that moment may never come
    // and the WAL file grows for as long as the stream lasts. Past RESTART_ABOVE_FRAMES a RESTART
    // checkpoint makes it come: it holds new writers back (the loop's writes find the lock taken
    // and follow to this thread) until it has copied everything, and the next commit rewinds the WAL.
    if (r && r.log > RESTART_ABOVE_FRAMES) this.db.pragma('wal_checkpoint(RESTART)');
  }
}

/** Every write the store sends to its writer, and what each returns. */
export type WriteOp =
  | { op: 'adds'; groups: AddRequest[][] }
  | { op: 'remove'; id: string; ifMatch?: string }
  | { op: 'removeQuarantined'; id: string }
  | { op: 'removeExpired'; now: number }
  | { op: 'writeRecord'; key: string; value: string; expected?: string | null }
  | { op: 'removeRecord'; key: string; expected: string }
  | { op: 'checkpoint' };

export interface WriteResults {
  adds: AddsDone;
  remove: RemoveDone;
  removeQuarantined: RemoveQuarantinedDone;
  removeExpired: RemoveExpiredDone;
  writeRecord: boolean;
  removeRecord: boolean;
  checkpoint: undefined;
}

export type OpOf<K extends WriteOp['op']> = Extract<WriteOp, { op: K }>;

/** Runs one write on a connection (the inline writer and the write thread both call this). */
export function runWrite<K extends WriteOp['op']>(w: SqliteWrites, op: OpOf<K>): WriteResults[K];
export function runWrite(w: SqliteWrites, op: WriteOp): WriteResults[WriteOp['op']] {
  switch (op.op) {
    case 'adds':
      return w.commitAdds(op.groups);
    case 'remove':
      return w.remove(op.id, op.ifMatch);
    case 'removeQuarantined':
      return w.removeQuarantined(op.id);
    case 'removeExpired':
      return w.removeExpired(op.now);
    case 'writeRecord':
      return w.writeRecord(op.key, op.value, op.expected);
    case 'removeRecord':
      return w.removeRecord(op.key, op.expected);
    case 'checkpoint':
      w.checkpoint();
      return undefined;
  }
}

/** What the write thread is asked and answers (one message each way per write, matched by id). */
export type ThreadRequest = { id: number; write: WriteOp } | { id: number; close: true };
export type ThreadReply = { id: number; ok: true; value: WriteResults[WriteOp['op']] } | { id: number; ok: false; error: WireError };
export interface ThreadInit {
  file: string;
  busyTimeoutMs: number;
}
