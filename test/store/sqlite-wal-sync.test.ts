/**
 * The sidecar's SQLite store syncs its WAL off the event loop (wal-sync.ts): its own connection
 * commits with synchronous=NORMAL and a write is acknowledged only after an fdatasync of the WAL
 * that began after the commit. Real SQLite file; the fdatasync is the real one except where a test
 * holds it (an injected sync it releases by hand) to see what happens in between.
 */
import Database from 'better-sqlite3';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { StoreUnavailableError } from '../../src/store/store';
import { newItem } from '../../src/model/merge';
import { tempDir } from '../support/paths';

const actor = { by: 't', from: 't' };
const item = (id: string) => newItem({ id, kind: 'node', node: id, action: 'MARK_BLOCKED', end: { type: 'permanent' }, cause: 'x', scope: 'cluster', allowMerge: true }, 1000, actor);
const realSync: (fd: number) => Promise<void> = promisify(fs.fdatasync);

/** A sync the test lets go of: each call waits until release() (or fails on fail()). */
function heldSync() {
  const waiting: { fd: number; go: () => void; no: (e: Error) => void }[] = [];
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    get waiting() {
      return waiting.length;
    },
    sync: (fd: number) =>
      new Promise<void>((resolve, reject) => {
        calls++;
        waiting.push({ fd, go: () => realSync(fd).then(resolve, reject), no: reject });
      }),
    release() {
      for (const w of waiting.splice(0)) w.go();
    },
    fail(e: Error) {
      for (const w of waiting.splice(0)) w.no(e);
    },
  };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

function idsInFile(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare('SELECT id FROM items ORDER BY id')
      .all()
      .map((r) => (r as { id: string }).id);
  } finally {
    db.close();
  }
}

describe('sqlite store: the WAL synced off the event loop', function () {
  this.timeout(15_000);

  it('a write is acknowledged only after a sync that began after its commit; other readers see it committed meanwhile', async () => {
    const file = path.join(tempDir('walsync'), 'b.db');
    const held = heldSync();
    const store = new SqliteStore(file, { writeThread: true, walSync: held.sync });
    try {
      let acked = false;
      const add = store.add({ item: item('h1.example'), allowMerge: false }).then((o) => {
        acked = true;
        return o;
      });
      await turns(5);
      assert.equal(held.calls, 1, 'one sync asked for');
      assert.equal(acked, false, 'not acknowledged while the sync runs');
      assert.deepEqual(idsInFile(file), ['h1.example'], 'committed: another connection reads it');
      assert.deepEqual(
        (await store.list()).map((i) => i.id),
        ['h1.example'],
        "the store's own list shows what is committed",
      );
      held.release();
      assert.equal((await add).outcome, 'created');
      assert.equal(acked, true);
    } finally {
      held.release();
      await store.close();
    }
  });

  it('writes committed while a sync runs share the next one: 40 concurrent adds, a handful of syncs, each add acknowledged after a sync that began after it', async () => {
    const file = path.join(tempDir('walsync'), 'b.db');
    const held = heldSync();
    const store = new SqliteStore(file, { writeThread: true, walSync: held.sync });
    try {
      const first = store.add({ item: item('h000.example'), allowMerge: false });
      await turns(5);
      assert.equal(held.waiting, 1);
      const acked: string[] = [];
      const rest = Array.from({ length: 40 }, (_, i) => `h${String(i + 1).padStart(3, '0')}.example`).map((id) =>
        store.add({ item: item(id), allowMerge: false }).then(() => acked.push(id)),
      );
      await turns(20);
      assert.equal(acked.length, 0, 'none acknowledged while the first sync is held');
      assert.equal(held.calls, 1, 'the second sync waits for the first to end');
      held.release();
      await first;
      await turns(20);
      assert.equal(acked.length, 0, 'writes committed during the first sync wait for the second');
      while (acked.length < 40) {
        held.release();
        await turns(5);
      }
      await Promise.all(rest);
      assert.ok(held.calls <= 6, `${held.calls} syncs for 41 writes`);
      assert.equal(idsInFile(file).length, 41);
    } finally {
      held.release();
      await store.close();
    }
  });

  it('a failed sync fails the writes waiting on it as "store unavailable" (committed, not known durable); the next write syncs anew and works', async () => {
    const file = path.join(tempDir('walsync'), 'b.db');
    const held = heldSync();
    const store = new SqliteStore(file, { writeThread: true, walSync: held.sync });
    try {
      const add = store.add({ item: item('h1.example'), allowMerge: false });
      await turns(5);
      held.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
      await assert.rejects(add, (e: unknown) => e instanceof StoreUnavailableError && /syncing the WAL failed.*EIO/.test((e as Error).message));
      const again = store.add({ item: item('h2.example'), allowMerge: false });
      await turns(5);
      held.release();
      assert.equal((await again).outcome, 'created');
      assert.deepEqual(idsInFile(file), ['h1.example', 'h2.example']);
    } finally {
      held.release();
      await store.close();
    }
  });

  it('a lone write after a fast sync is synced on the loop (no hand-off to the pool); a write among others is not', async () => {
    const file = path.join(tempDir('walsync'), 'b.db');
    const held = heldSync();
    // Syncs timed by a clock that stands still: each took 0 ms, however long the loaded machine
    // let the test take to release it (timed by performance.now, a release after a few turns could
    // measure more than the 1 ms of a fast sync, and the lone write below then went to the pool).
    const store = new SqliteStore(file, { writeThread: true, walSync: held.sync, walSyncClock: () => 0 });
    try {
      const first = store.add({ item: item('h0.example'), allowMerge: false });
      await turns(5);
      held.release(); // the first sync opens the WAL and goes to the pool
      await first;
      const wal = store['route'].wal;
      assert.ok(wal);
      const syncs = wal.syncs;
      assert.equal((await store.add({ item: item('h1.example'), allowMerge: false })).outcome, 'created');
      assert.equal(held.calls, 1, 'the lone write did not wait for the pool');
      assert.equal(wal.syncs, syncs + 1, 'it was synced all the same');
      const many = Array.from({ length: 5 }, (_, i) => store.add({ item: item(`m${i}.example`), allowMerge: false }));
      await turns(10);
      assert.ok(held.calls >= 2, 'concurrent writes sync in the pool');
      while (held.waiting > 0) {
        held.release();
        await turns(5);
      }
      await Promise.all(many);
      assert.equal(idsInFile(file).length, 7);
    } finally {
      held.release();
      await store.close();
    }
  });

  it('a lone write after a slow sync goes to the pool too (a slow disk never holds the loop)', async () => {
    const file = path.join(tempDir('walsync'), 'b.db');
    const held = heldSync();
    // Each reading of the clock is 5 ms after the last: every sync measures slow.
    let t = 0;
    const store = new SqliteStore(file, { writeThread: true, walSync: held.sync, walSyncClock: () => (t += 5) });
    try {
      const first = store.add({ item: item('h0.example'), allowMerge: false });
      await turns(5);
      held.release();
      await first;
      const second = store.add({ item: item('h1.example'), allowMerge: false });
      await turns(5);
      assert.equal(held.calls, 2, 'the lone write waits for a sync in the pool');
      held.release();
      assert.equal((await second).outcome, 'created');
      assert.equal(idsInFile(file).length, 2);
    } finally {
      held.release();
      await store.close();
    }
  });

  it("with the real fdatasync: acknowledged writes are in the file after close; the store's connection commits with synchronous=NORMAL, a store without a write thread (the CLI) with FULL", async () => {
    const file = path.join(tempDir('walsync'), 'b.db');
    const store = new SqliteStore(file, { writeThread: true });
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.add({ item: item(`h${i}.example`), allowMerge: false })));
    assert.equal((store['db'] as Database.Database).pragma('synchronous', { simple: true }), 1, 'NORMAL');
    assert.ok((store['route'].wal?.syncs ?? 0) >= 1);
    await store.close();
    assert.equal(idsInFile(file).length, 30);
    const cli = new SqliteStore(file);
    try {
      assert.equal((cli['db'] as Database.Database).pragma('synchronous', { simple: true }), 2, 'FULL');
      assert.equal(cli['route'].wal, undefined);
    } finally {
      await cli.close();
    }
  });
});
