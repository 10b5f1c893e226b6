import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { describeStoreConformance } from './conformance';
import { strict as assert } from 'node:assert';
import { newItem } from '../../src/model/merge';
import { tempDir } from '../support/paths';

for (const writeThread of [false, true, 'always'] as const) {
  const how = { false: '', true: ', concurrent writes on a worker thread (the sidecar)', always: ', every write on a worker thread' }[String(writeThread) as 'false' | 'true' | 'always'];
  describeStoreConformance(`sqlite${how}`, async () => {
    const dir = tempDir('blocklist-sqlite-');
    const file = path.join(dir, 'blocklist.db');
    return {
      open: async () => new SqliteStore(file, { writeThread }),
      async writeRaw(id, text) {
        // A second connection, as a hand edit would be; end_ts NULL = never expires.
        const db = new Database(file);
        try {
          db.prepare('INSERT OR REPLACE INTO items(id, end_ts, data) VALUES (?, NULL, ?)').run(id, text);
        } finally {
          db.close();
        }
      },
      cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  });
}

for (const writeThread of [false, 'always'] as const) {
describe(`sqlite store${writeThread ? ' (writes on a worker thread)' : ''}: group commit and the list cache`, () => {
  const actor = { by: 't', from: 't' };
  const item = (id: string, cause = 'x', at = 1000) =>
    newItem({ id, kind: 'node', node: id, action: 'MARK_BLOCKED', end: { type: 'permanent' }, cause, scope: 'cluster', allowMerge: true }, at, actor);
  let file: string;
  beforeEach(() => (file = path.join(tempDir('blocklist-sqlite-gc-'), 'b.db')));

  it('concurrent adds share one commit; a request on a corrupt row fails alone, the others land', async () => {
    const store = new SqliteStore(file, { writeThread });
    const raw = new Database(file);
    raw.prepare('INSERT INTO items(id, end_ts, data) VALUES (?, NULL, ?)').run('bad', '{not json');
    raw.close();
    const results = await Promise.allSettled([store.add({ item: item('a'), allowMerge: false }), store.add({ item: item('bad'), allowMerge: true }), store.add({ item: item('c'), allowMerge: false })]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    await store.close();
    const again = new SqliteStore(file, { writeThread });
    assert.ok(await again.get('a'));
    assert.ok(await again.get('c'));
    await again.close();
  });

  it('a batch that meets a corrupt row is rolled back whole, a single add beside it lands; the version moves once for the group', async () => {
    const store = new SqliteStore(file, { writeThread });
    const raw = new Database(file);
    raw.prepare('INSERT INTO items(id, end_ts, data) VALUES (?, NULL, ?)').run('bad', '{not json');
    raw.close();
    const v0 = await store.version();
    const results = await Promise.allSettled([
      store.addMany([
        { item: item('b1'), allowMerge: false },
        { item: item('bad'), allowMerge: true },
      ]),
      store.add({ item: item('s1'), allowMerge: false }),
      store.add({ item: item('s2'), allowMerge: false }),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'fulfilled', 'fulfilled']);
    assert.equal(await store.get('b1'), undefined, "the batch's first item went with it");
    assert.ok(await store.get('s1'));
    assert.ok(await store.get('s2'));
    assert.notEqual(await store.version(), v0);
    const v1 = await store.version();
    assert.equal((await store.add({ item: item('s1'), allowMerge: false })).outcome, 'conflict');
    assert.equal(await store.version(), v1, 'a write that changed nothing does not move it');
    await store.close();
  });

  it('list() stays exact through local writes (kept incrementally) and another process\'s writes (reloaded)', async () => {
    const a = new SqliteStore(file, { writeThread });
    const b = new SqliteStore(file, { writeThread });
    const ids = async (s: SqliteStore) => (await s.list()).map((i) => `${i.id}:${i.cause}`);
    await a.add({ item: item('n2'), allowMerge: false });
    assert.deepEqual(await ids(a), ['n2:x']);
    await Promise.all([a.add({ item: item('n1'), allowMerge: false }), a.add({ item: item('n3'), allowMerge: false })]);
    await a.add({ item: item('n2', 'y'), allowMerge: true });
    assert.deepEqual(await ids(a), ['n1:x', 'n2:x,y', 'n3:x']);
    await b.add({ item: item('n0'), allowMerge: false });
    await b.remove('n3');
    assert.deepEqual(await ids(a), ['n0:x', 'n1:x', 'n2:x,y']);
    await a.remove('n1');
    await a.add({ item: { ...item('e1'), endTimestamp: 5000 }, allowMerge: false });
    assert.deepEqual(await ids(a), ['e1:x', 'n0:x', 'n2:x,y']);
    await a.removeExpired(6000);
    assert.deepEqual(await ids(a), ['n0:x', 'n2:x,y']);
    assert.deepEqual(await ids(b), await ids(a));
    await a.close();
    await b.close();
  });
});
}

describe('sqlite store: writes on a worker thread', () => {
  const actor = { by: 't', from: 't' };
  const item = (id: string) => newItem({ id, kind: 'node', node: id, action: 'MARK_BLOCKED', end: { type: 'permanent' }, cause: 'x', scope: 'cluster', allowMerge: true }, 1000, actor);
  let file: string;
  beforeEach(() => (file = path.join(tempDir('blocklist-sqlite-wt-'), 'b.db')));

  it("with writeThread on, commits on the store's own connection leave the WAL's checkpoints to the thread, and the WAL stays bounded", async () => {
    const store = new SqliteStore(file, { writeThread: true });
    const walPages = () => fs.statSync(`${file}-wal`).size / 4096;
    let most = 0;
    const writeMany = async (from: number) => {
      for (let k = from; k < from + 600; k++) {
        await store.add({ item: item(`w${String(k).padStart(4, '0')}`), allowMerge: false });
        most = Math.max(most, walPages());
      }
    };
    // 1,200 lone commits add ~1.3 pages each: without checkpoints the WAL would hold ~1,600
    // pages. The thread checkpoints every 25 commits, and once the WAL is past 1,000 pages it
    // makes it start over (a RESTART checkpoint: a commit can land during every PASSIVE one).
    await writeMany(0);
    await writeMany(600);
    // The commits that found a RESTART checkpoint holding the lock went to the thread: a few.
    assert.ok(store.writes.thread <= 5, `lone writes commit here (${JSON.stringify(store.writes)})`);
    assert.ok(most < 1250, `the WAL reached ${most.toFixed(0)} pages over 1,200 commits`);
    const other = new Database(file, { readonly: true });
    assert.equal((other.prepare('SELECT count(*) AS n FROM items').get() as { n: number }).n, 1200);
    other.close();
    await store.close();
  });

  it('the event loop keeps turning while a commit runs; adds that arrive meanwhile are acknowledged after it, durable', async () => {
    const store = new SqliteStore(file, { writeThread: 'always' });
    await store.add({ item: item('warm'), allowMerge: false }); // the thread is started
    let turns = 0;
    let done = false;
    const first = store.add({ item: item('a'), allowMerge: false }).then((o) => ((done = true), o));
    const later: Promise<unknown>[] = [];
    while (!done) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      turns++;
      if (turns <= 3 && !done) later.push(store.add({ item: item(`b${turns}`), allowMerge: false }));
    }
    assert.ok(turns >= 2, `the loop turned ${turns} time(s) during one commit`);
    assert.equal((await first).outcome, 'created');
    for (const o of (await Promise.all(later)) as { outcome: string }[]) assert.equal(o.outcome, 'created');
    await store.close();
    const again = new SqliteStore(file);
    assert.deepEqual((await again.list()).map((i) => i.id), ['a', ...later.map((_, k) => `b${k + 1}`), 'warm']);
    await again.close();
  });

  it("keeps no second copy of what it wrote: a created item's outcome is the request's own object, a merged one shares its strings", async () => {
    const store = new SqliteStore(file, { writeThread: 'always' });
    assert.deepEqual(await store.list(), []); // the list cache exists from here on
    const a = item('a');
    const created = await store.add({ item: a, allowMerge: false });
    assert.equal(created.outcome, 'created');
    assert.ok(created.outcome === 'created' && created.item === a, 'the request item itself, not the copy from the thread');
    assert.ok((await store.list())[0] === a, 'and that object is what list() hands out');
    const merged = await store.add({ item: { ...item('a'), cause: 'y', created: { ...a.created, at: 2000 }, updated: { ...a.updated, at: 2000 } }, allowMerge: true });
    assert.equal(merged.outcome, 'merged');
    if (merged.outcome === 'merged') {
      assert.equal(merged.item.cause, 'x,y');
      assert.ok(merged.item.node === merged.item.id);
    }
    await store.close();
  });

  it('with writeThread on and fast commits (the default 2 ms), a burst of concurrent writes stays on the store\'s own connection', async () => {
    const store = new SqliteStore(file, { writeThread: true, slowCommitMs: 1e9 });
    const burst = await Promise.all(Array.from({ length: 20 }, (_, k) => store.add({ item: item(`c${k}`), allowMerge: false })));
    assert.ok(burst.every((o) => o.outcome === 'created'));
    assert.equal(store.writes.thread, 0, JSON.stringify(store.writes));
    assert.equal((await store.list()).length, 20);
    await store.close();
  });

  it('list() during a stream of writes is always a state the store was in, and ends exact', async () => {
    const store = new SqliteStore(file, { writeThread: 'always' });
    const writes: Promise<unknown>[] = [];
    const seen: number[] = [];
    for (let k = 0; k < 200; k++) {
      writes.push(store.add({ item: item(`h${String(k).padStart(3, '0')}`), allowMerge: false }));
      if (k % 20 === 0) {
        const ids = (await store.list()).map((i) => i.id);
        // Adds commit in order of arrival: a listing is always a prefix of them.
        assert.deepEqual(ids, ids.map((_, j) => `h${String(j).padStart(3, '0')}`));
        seen.push(ids.length);
      }
    }
    await Promise.all(writes);
    assert.equal((await store.list()).length, 200);
    assert.deepEqual(seen, [...seen].sort((x, y) => x - y));
    await store.close();
  });

  it('with writeThread on, a lone write that finds another connection holding the lock goes to the thread: the event loop keeps turning while it waits', async () => {
    const store = new SqliteStore(file, { writeThread: true });
    await store.add({ item: item('first'), allowMerge: false });
    const other = new Database(file);
    other.prepare('BEGIN IMMEDIATE').run();
    let done = false;
    const waiting = store.add({ item: item('second'), allowMerge: false }).then((o) => ((done = true), o));
    let turns = 0;
    const t0 = Date.now();
    while (Date.now() - t0 < 150) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      turns++;
    }
    assert.equal(done, false, 'still waiting for the lock');
    assert.ok(turns > 10, `the loop turned ${turns} times while the write waited`);
    other.prepare('COMMIT').run();
    other.close();
    assert.equal((await waiting).outcome, 'created');
    assert.equal(store.writes.thread, 1, JSON.stringify(store.writes));
    assert.deepEqual((await store.list()).map((i) => i.id), ['first', 'second']);
    await store.close();
  });

  it('with writeThread on, a lone write commits on the store\'s own connection at once; concurrent writes go to the thread once commits here are slow, in order', async () => {
    // slowCommitMs 0: every commit here counts as slow (on a fast disk the burst would stay here).
    const store = new SqliteStore(file, { writeThread: true, slowCommitMs: 0 });
    await store.add({ item: item('lone1'), allowMerge: false });
    await store.remove('lone1');
    await store.add({ item: item('lone2'), allowMerge: false });
    assert.deepEqual(store.writes, { here: 3, thread: 0 }, 'one write at a time: no hand-off to a thread');
    const burst = await Promise.all(Array.from({ length: 20 }, (_, k) => store.add({ item: item(`c${k}`), allowMerge: false })));
    assert.ok(burst.every((o) => o.outcome === 'created'));
    // The burst was one group, committed here and found slow: the writes right after it go to the thread.
    await store.remove('c0');
    assert.ok(store.writes.thread >= 1, `writes after a slow concurrent commit reached the thread (${JSON.stringify(store.writes)})`);
    const expected = [...Array.from({ length: 19 }, (_, k) => `c${k + 1}`), 'lone2'].sort();
    assert.deepEqual((await store.list()).map((i) => i.id), expected);
    await store.close();
    const again = new SqliteStore(file);
    assert.equal((await again.list()).length, 20);
    await again.close();
  });
});
