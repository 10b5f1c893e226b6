/**
 * Where each write of the SQLite store runs: on the store's own connection, at once, or on the
 * write thread (writer.ts). The store decides what to write; this decides where, by three rules:
 *  - without a write thread (the CLI, an in-memory database), or with `always` off and nothing
 *    slow seen, a write commits here: handing one to a thread and back adds two thread wake-ups,
 *    which cost more than a fast fsync;
 *  - for CONCURRENT_FOR_MS after a group commit here was both concurrent (several writes in it)
 *    and slow (slowCommitMs), writes go to the thread, where whatever arrives during a commit forms
 *    the next group; then here again, which measures anew;
 *  - while writes are in flight on the thread, the next ones follow them there;
 *  - commits here never checkpoint the WAL; the thread does, every CHECKPOINT_EVERY of them;
 *  - with a write thread, commits here do not sync either (synchronous=NORMAL): a write here
 *    resolves after the WalSync's fdatasync in libuv's pool (wal-sync.ts), not inside the commit
 *    on the event loop; the thread's connection keeps synchronous=FULL;
 *  - a write here never waits for another process's lock on the event loop: it tries the lock once
 *    (busy_timeout 0) and, when it is taken (SQLITE_BUSY at BEGIN IMMEDIATE: nothing was done),
 *    goes to the thread, which waits up to busy_timeout while the loop serves reads.
 * Writes in flight on the thread and one here are concurrent requests (none was acknowledged), so
 * either order is right.
 */
import Database from 'better-sqlite3';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { OpOf, WriteOp, WriteResults } from './writes';
import { InlineWriter, SqliteWriter, ThreadWriter } from './writer';
import { WalSync } from './wal-sync';

/** How long after a sign of concurrent writes they keep going to the write thread (ms). */
const CONCURRENT_FOR_MS = 100;

/**
 * With a write thread, commits here never checkpoint (wal_autocheckpoint 0 on this connection);
 * every this many of them the thread runs a PASSIVE checkpoint instead. SQLite's automatic
 * checkpoint runs inside the commit that crosses 1,000 WAL pages: it copies them into the database
 * file and fsyncs it, on whichever thread committed — here, the event loop, where it would be the
 * commits' slow tail. 25 commits of a group of 20 are about the 1,000 pages at which SQLite would
 * checkpoint; lone writes make far fewer pages, so the WAL stays small.
 */
const CHECKPOINT_EVERY = 25;

export interface WriteRouteOptions {
  /** Every write on the thread, lone ones too (tests of the thread's path). */
  always: boolean;
  /** A concurrent group commit here at least this long (ms) sends writes to the thread for a while. */
  slowCommitMs: number;
  /** The connection's busy_timeout, set back after a no-wait write here. */
  busyTimeoutMs: number;
  /** How the WAL is synced (WalSync's default: fs.fdatasync in libuv's pool). */
  walSync?: (fd: number) => Promise<void>;
  /** The clock WalSync times its syncs with (tests; default performance.now). */
  walSyncClock?: () => number;
}

export class WriteRoute {
  /** Write transactions run here and on the write thread so far (for tests and diagnostics). */
  readonly writes = { here: 0, thread: 0 };
  /** Writes on the store's own connection. */
  private readonly inline: InlineWriter;
  /** busy_timeout off and back on, around a write here that must not wait for another process's lock. */
  private readonly noWait: { off: Database.Statement; on: Database.Statement } | undefined;
  /** Until when (performance.now()) concurrent writes go to the thread. */
  private concurrentUntil = 0;
  /** Commits here since the thread last checkpointed. */
  private sinceCheckpoint = 0;

  constructor(
    db: Database.Database,
    private readonly thread: ThreadWriter | undefined,
    private readonly o: WriteRouteOptions,
  ) {
    if (thread) {
      db.pragma('wal_autocheckpoint = 0');
      db.pragma('synchronous = NORMAL');
      this.wal = new WalSync(`${path.resolve(db.name)}-wal`, o.walSync, o.walSyncClock);
    }
    this.inline = new InlineWriter(db, this.wal);
    this.noWait = thread ? { off: db.prepare('PRAGMA busy_timeout = 0'), on: db.prepare(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(o.busyTimeoutMs))}`) } : undefined;
  }

  /** Syncs of the WAL off the event loop (with a write thread; undefined without one). */
  readonly wal: WalSync | undefined;

  /** Waits for the WAL syncs in flight and releases the WAL's descriptor. */
  async close(): Promise<void> {
    await this.wal?.close();
  }

  /**
   * Runs one write where the rules say and resolves once it is durable; `concurrent`: it carries
   * several requests' writes; `committed`: called as soon as it committed (SqliteWriter.run);
   * `lone`: no other write is in flight (WalSync may sync it here).
   */
  async run<K extends WriteOp['op']>(op: OpOf<K>, concurrent: boolean, committed?: (r: WriteResults[K]) => void, lone = false): Promise<WriteResults[K]> {
    const w = this.writerFor();
    const noWait = this.noWait;
    if (w !== this.inline || !this.thread || !noWait) return w.run<K>(op, committed);
    let here: Promise<WriteResults[K]>;
    noWait.off.get();
    const t0 = performance.now();
    try {
      here = this.inline.run<K>(op, committed, lone);
    } finally {
      const ms = performance.now() - t0;
      if (concurrent && ms >= this.o.slowCommitMs) this.concurrentUntil = performance.now() + CONCURRENT_FOR_MS;
      noWait.on.get();
    }
    try {
      const done = await here;
      this.checkpointNowAndThen();
      return done;
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY')) throw e;
      this.writes.here--;
      this.writes.thread++;
      return this.thread.run<K>(op, committed);
    }
  }

  private checkpointNowAndThen(): void {
    if (!this.thread || ++this.sinceCheckpoint < CHECKPOINT_EVERY) return;
    this.sinceCheckpoint = 0;
    // A failed checkpoint costs nothing but a longer WAL: the next one copies what it left.
    this.thread.background({ op: 'checkpoint' }).catch(() => undefined);
  }

  private writerFor(): SqliteWriter {
    const t = this.thread;
    if (!t) return this.inline;
    // Behind a write still on the thread, a write goes there too: it would find the lock taken
    // here, and commits keep the order they were posted in.
    const onThread = this.o.always || t.inFlight || performance.now() < this.concurrentUntil;
    this.writes[onThread ? 'thread' : 'here']++;
    return onThread ? t : this.inline;
  }
}
