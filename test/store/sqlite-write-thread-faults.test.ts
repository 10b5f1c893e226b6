/**
 * The SQLite store's write thread when it dies: terminated in the middle of a stream of writes, or
 * crashed by an uncaught exception (which Node reports as 'error' and then, later, 'exit').
 * Real SQLite file, real worker threads (every write on the thread: `writeThread: 'always'`). What must hold: a write is either acknowledged and in
 * the file, or rejected as "store unavailable" (a 503 at the API), never acknowledged and lost;
 * the next write starts a new thread; the list cache ends equal to the file.
 */
import Database from 'better-sqlite3';
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { StoreUnavailableError } from '../../src/store/store';
import { ThreadWriter } from '../../src/store/sqlite/writer';
import { newItem } from '../../src/model/merge';
import { tempDir } from '../support/paths';

const actor = { by: 't', from: 't' };
const item = (id: string) => newItem({ id, kind: 'node', node: id, action: 'MARK_BLOCKED', end: { type: 'permanent' }, cause: 'x', scope: 'cluster', allowMerge: true }, 1000, actor);

/** The store's current write thread (fault injection reaches into the private writer on purpose). */
function writeThreadOf(store: SqliteStore): Worker {
  const writer = store['thread'];
  assert.ok(writer instanceof ThreadWriter);
  const w = writer['worker'];
  assert.ok(w, 'the write thread is running');
  return w;
}

function idsInFile(file: string): Set<string> {
  const db = new Database(file, { readonly: true });
  try {
    return new Set(db.prepare('SELECT id FROM items').all().map((r) => (r as { id: string }).id));
  } finally {
    db.close();
  }
}

describe('sqlite store: the write thread dies', function () {
  this.timeout(15_000);
  let file: string;
  beforeEach(() => (file = path.join(tempDir('blocklist-sqlite-wtf-'), 'b.db')));

  it('terminated mid-stream: every acknowledged add is in the file, the others fail as unavailable, the next write restarts it', async () => {
    const store = new SqliteStore(file, { writeThread: 'always' });
    await store.add({ item: item('warm'), allowMerge: false });
    const acked: string[] = [];
    const failed: unknown[] = [];
    const writer = async (w: number) => {
      for (let i = 0; i < 60; i++) {
        const id = `w${w}-${String(i).padStart(2, '0')}`;
        try {
          await store.add({ item: item(id), allowMerge: false });
          acked.push(id);
        } catch (e) {
          failed.push(e);
        }
      }
    };
    const writers = Promise.all([0, 1, 2, 3].map(writer));
    // Once the stream is well under way, the thread is killed while a group is posted to it and unanswered.
    const threadWriter = store['thread'];
    assert.ok(threadWriter instanceof ThreadWriter);
    while (acked.length < 60 || !threadWriter.inFlight) await new Promise<void>((resolve) => setImmediate(resolve));
    void writeThreadOf(store).terminate();
    await writers;
    for (const e of failed) assert.ok(e instanceof StoreUnavailableError, String(e));
    // The thread was restarted for the writes after the kill: most of the stream landed.
    assert.ok(acked.length >= 200, `${acked.length} of 240 acknowledged (${failed.length} failed)`);
    const inFile = idsInFile(file);
    assert.deepEqual(acked.filter((id) => !inFile.has(id)), [], 'acknowledged and not in the file');
    // The cache (kept from the thread's answers, reloaded when they went missing) equals the file.
    assert.deepEqual((await store.list()).map((i) => i.id), [...inFile].sort());
    await store.close();
  });

  it("crashed by an uncaught exception: the old thread's later 'exit' does not fail the writes already on its replacement", async () => {
    const store = new SqliteStore(file, { writeThread: 'always' });
    await store.add({ item: item('warm'), allowMerge: false });
    const old = writeThreadOf(store);
    const exited = new Promise<void>((resolve) => old.once('exit', () => resolve()));
    // Node emits 'error' for the uncaught exception and 'exit' only once the thread has been torn
    // down; a write that arrives in between goes to a new thread.
    const onNewThread = new Promise<Promise<unknown>>((resolve) =>
      old.once('error', () => {
        resolve(store.writeRecord('after-crash', 'v').then(() => store.add({ item: item('after'), allowMerge: false })));
      }),
    );
    // Not an object: the thread's message handler throws outside its per-write try.
    old.postMessage(5);
    const writes = await onNewThread;
    await exited;
    assert.equal(((await writes) as { outcome: string }).outcome, 'created');
    assert.equal(await store.readRecord('after-crash'), 'v');
    assert.notEqual(writeThreadOf(store), old);
    await store.close();
    assert.ok(idsInFile(file).has('after'));
  });
});

describe('sqlite store (write thread): read your writes beside another writer', function () {
  this.timeout(15_000);
  let file: string;
  beforeEach(() => (file = path.join(tempDir('blocklist-sqlite-ryw-'), 'b.db')));

  it('a list() after an acknowledged add or remove always shows it, while another connection writes the same file', async () => {
    const store = new SqliteStore(file, { writeThread: true });
    // Another writer on the file (the CLI's inline store: its own connection, its own commits).
    const other = new SqliteStore(file);
    const misses: string[] = [];
    let checks = 0;
    const writer = async (w: number) => {
      for (let i = 0; i < 40; i++) {
        const id = `w${w}-${String(i).padStart(2, '0')}`;
        await store.add({ item: item(id), allowMerge: false });
        if (!(await store.list()).some((x) => x.id === id)) misses.push(`add ${id}`);
        checks++;
        if (i % 4 === 3) {
          const gone = `w${w}-${String(i - 2).padStart(2, '0')}`;
          await store.remove(gone);
          if ((await store.list()).some((x) => x.id === gone)) misses.push(`remove ${gone}`);
          checks++;
        }
      }
    };
    const cli = async () => {
      for (let i = 0; i < 40; i++) {
        await other.add({ item: item(`cli-${String(i).padStart(2, '0')}`), allowMerge: false });
        await new Promise((r) => setTimeout(r, 1));
      }
    };
    await Promise.all([writer(0), writer(1), writer(2), writer(3), cli()]);
    assert.deepEqual(misses, [], `${misses.length} of ${checks} reads missed an acknowledged write`);
    // And the cache ends equal to the file, the other writer's rows included.
    assert.deepEqual((await store.list()).map((x) => x.id), [...idsInFile(file)].sort());
    assert.equal((await store.list()).filter((x) => x.id.startsWith('cli-')).length, 40);
    await other.close();
    await store.close();
  });
});
