/**
 * Makes the store's commits durable off the event loop. With synchronous=FULL SQLite fsyncs the WAL
 * inside every commit, on the thread that commits: for the sidecar's own connection that is the
 * event loop, which then serves nothing while the disk works (on a busy NodeManager disk, for
 * milliseconds per commit). So that connection commits with synchronous=NORMAL — in WAL mode a
 * commit then writes its frames to the WAL without syncing, and only checkpoints sync — and a
 * write is acknowledged only after an fdatasync of the WAL, run in libuv's thread pool, that began
 * after the commit: the same guarantee as FULL (an acknowledged write survives a power cut), with
 * the wait off the loop, and one fdatasync shared by every commit made while the previous one ran.
 *
 * What is different from FULL: between the commit and the fdatasync other readers (this process's
 * sync pass, another process) can see a write that a power cut would still undo; its caller has
 * no answer yet. The engine is level-triggered, so a block pushed to YARN from such a write is
 * taken back by the first pass after a restart finds it gone.
 *
 * The WAL is one file for the connection's whole life (SQLite unlinks it only when the last
 * connection closes, and this one is open), so one descriptor serves; checkpoints, which copy the
 * WAL into the database and may let it be reused, run on the write thread's own connection with
 * synchronous=FULL (write-route.ts), so the database file is synced before frames are overwritten.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';

const fdatasync: (fd: number) => Promise<void> = promisify(fs.fdatasync);
const noop = (): void => undefined;

/** A lone commit is synced on the caller's thread while syncs take less than this (ms). */
const INLINE_BELOW_MS = 1;

export class WalSync {
  private fd: number | undefined;
  /** The fdatasync running now. */
  private running: Promise<void> | undefined;
  /** The one that starts when it ends, shared by every commit made meanwhile. */
  private queued: Promise<void> | undefined;
  /** fdatasyncs run so far (tests, diagnostics). */
  syncs = 0;

  /** `now`: the clock syncs are timed with (whether the last one was fast; tests make it exact). */
  constructor(
    private readonly wal: string,
    private readonly syncFd: (fd: number) => Promise<void> = fdatasync,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Resolves once everything committed before this call is on disk. `lone`: the commit is the only
   * write in flight (no other request waits for the disk or to be committed).
   */
  durable(lone = false): Promise<void> {
    if (lone && !this.running && this.fd !== undefined && this.lastMs < INLINE_BELOW_MS) return this.inline(this.fd);
    if (!this.running) return this.start();
    // A sync already running may have begun before this commit: wait for the next one.
    this.queued ??= this.running.then(
      () => this.startQueued(),
      () => this.startQueued(),
    );
    return this.queued;
  }

  /**
   * Resolves once every commit that asked for durability so far is on disk (never rejects);
   * undefined when none waits. The running sync covers the commits made before it began, the
   * queued one every commit made since.
   */
  settled(): Promise<void> | undefined {
    return (this.queued ?? this.running)?.then(noop, noop);
  }

  /** Waits for the syncs in flight, then lets the descriptor go. */
  async close(): Promise<void> {
    await Promise.allSettled([this.running, this.queued]);
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  /**
   * A lone write is synced here, on the caller's thread, when the last sync was fast: a hand-off to
   * the pool costs two thread wake-ups and lets whatever the loop does next (a pass of
   * milliseconds) run before the answer, where an fdatasync of a fraction of a millisecond here
   * answers at once. Under concurrent writes the pool is worth it: the loop serves the others while
   * the disk works. A slow disk (the last sync took INLINE_BELOW_MS or more) always goes to the pool.
   */
  private inline(fd: number): Promise<void> {
    const t0 = this.now();
    this.syncs++;
    try {
      fs.fdatasyncSync(fd);
    } catch (e) {
      return Promise.reject(e);
    } finally {
      this.lastMs = this.now() - t0;
    }
    return Promise.resolve();
  }

  /** How long the last sync took (ms), in the pool or here. */
  private lastMs = Infinity;

  private startQueued(): Promise<void> {
    this.queued = undefined;
    return this.start();
  }

  private start(): Promise<void> {
    const p = this.sync().finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }

  private async sync(): Promise<void> {
    this.syncs++;
    const t0 = this.now();
    try {
      await this.syncOnce();
    } finally {
      this.lastMs = this.now() - t0;
    }
  }

  private async syncOnce(): Promise<void> {
    if (this.fd === undefined) {
      // The WAL's directory entry too, once: it was created when the database was opened, and a
      // power cut must not lose the file itself (SQLite syncs the directory on a new WAL's first sync).
      const fd = fs.openSync(this.wal, 'r');
      const dir = fs.openSync(path.dirname(this.wal), 'r');
      try {
        fs.fsyncSync(dir);
      } finally {
        fs.closeSync(dir);
      }
      this.fd = fd;
    }
    await this.syncFd(this.fd);
  }
}
