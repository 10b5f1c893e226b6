/**
 * Lifting a block never fails on a full disk: the SQLite store keeps space aside (a reserve file
 * beside the database) that a removal may use when the disk is full, and an add never does. The
 * full disk is SQLite's own SQLITE_FULL (PRAGMA max_page_count: SQLite refuses to grow the file as
 * on a full file system); the reserve given to the store here frees that much when released.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileReserve, RESERVE_BYTES, SpaceReserve } from '../../src/store/sqlite/space-reserve';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { nodeItem } from '../sync/items';
import { tempDir } from '../support/paths';

describe('store/sqlite: the space kept for lifting blocks on a full disk', () => {
  it('FileReserve: made really (not sparse) beside the database, released once, made again later', () => {
    const file = path.join(tempDir('blocklist-reserve-'), 'b.db.reserve');
    let t = 0;
    const r = new FileReserve(file, RESERVE_BYTES, () => t);
    r.ensure();
    assert.equal(fs.statSync(file).size, RESERVE_BYTES);
    assert.ok(fs.statSync(file).blocks * 512 >= RESERVE_BYTES, 'allocated, not a hole');
    assert.equal(r.release(), true);
    assert.equal(fs.existsSync(file), false);
    assert.equal(r.release(), false, 'nothing left to give');
    r.ensure();
    assert.equal(fs.existsSync(file), false, 'not made again at once after a release (the disk was full)');
    t += 30_000;
    r.ensure();
    assert.equal(fs.existsSync(file), true);
  });

  it('the store opens with its reserve; on a full disk a DELETE and the expiry use it and land, an add does not', async () => {
    const dir = tempDir('blocklist-full-');
    const file = path.join(dir, 'b.db');
    const plain = new SqliteStore(file);
    assert.equal(fs.statSync(`${file}.reserve`).size, RESERVE_BYTES, 'made at open');
    await plain.close();

    let released = 0;
    let room = false;
    const reserve: SpaceReserve = {
      ensure: () => undefined,
      release: () => {
        released++;
        room = true;
        return true;
      },
    };
    const store = new SqliteStore(file, { reserve });
    // The disk is full for every write (adds and removals alike) until space is released: SQLite's own error.
    const route = (store as unknown as { route: { run: (...a: unknown[]) => Promise<unknown> } }).route;
    const run = route.run.bind(route);
    route.run = async (...a: unknown[]) => {
      if (!room) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      return run(...a);
    };
    try {
      room = true;
      await store.add({ item: nodeItem('keep1'), allowMerge: false });
      await store.add({ item: nodeItem('old1', { start: 1, end: 2 }), allowMerge: false });
      room = false;
      await assert.rejects(store.add({ item: nodeItem('new1'), allowMerge: false }), /full/);
      assert.equal(released, 0, 'an add never uses the reserve: a new block waits for space');
      assert.equal((await store.remove('keep1'))?.id, 'keep1', 'the block is lifted');
      assert.equal(released, 1);
      assert.equal(await store.get('keep1'), undefined);
      room = false;
      assert.deepEqual((await store.removeExpired(10)).map((i) => i.id), ['old1'], 'expiry lifts ended blocks too');
      assert.equal(released, 2);
    } finally {
      await store.close();
    }
  });
});
