/**
 * Store faults through the REST API: a full disk (SQLITE_FULL, made real with PRAGMA
 * max_page_count: SQLite refuses to grow the file exactly as on a full filesystem) and a write
 * lock held by another process (a CLI, a backup) past the busy timeout. In both: a clear 503,
 * nothing acknowledged that is not stored, nothing audited as done, reads keep working, and
 * writes work again once the fault is gone.
 */
import { strict as assert } from 'node:assert';
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from '../../src/config/config';
import { MemoryAudit } from '../../src/model/audit';
import { silentLogger } from '../../src/core/logger';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { repoRoot } from '../support/paths';
import { http, tempDir } from '../support/sidecar';
import { count, printFigures } from '../fuzz/figures';

interface Rig {
  s: Sidecar;
  db: Database.Database;
  file: string;
  audit: MemoryAudit;
}

async function rig(busyTimeoutMs = 5000, writeThread = false): Promise<Rig> {
  const dir = tempDir('blocklist-storefault-');
  const file = path.join(dir, 'blocklist.db');
  const store = new SqliteStore(file, { busyTimeoutMs, writeThread });
  const config = loadConfig({ env: {}, dynamic: { 'rest.port': '0', 'cluster.resource-blocklist.store.sqlite.path': file, 'rest.rate-limit.max-mutations': '0' } });
  const audit = new MemoryAudit();
  const s = await startSidecar({ config, store, audit, logger: silentLogger });
  // The store's own connection: PRAGMA max_page_count is per connection, so it must be this one.
  const db = (store as unknown as { db: Database.Database }).db;
  return { s, db, file, audit };
}

async function close(r: Rig): Promise<void> {
  await r.s.close();
  await r.s.store.close();
}

const body = (i: number) => ({ action: 'MARK_BLOCKED', cause: `fill ${i} ${'x'.repeat(900)}` });
const errorsOf = (b: unknown) => ((b as { errors?: string[] }).errors ?? []).join('\n');

describe('faults: the store', function () {
  this.timeout(30_000);
  after(() => printFigures('store faults', ['store faults injected', 'acknowledged writes checked after store faults', 'acknowledged writes lost after store faults']));

  it('disk full (SQLITE_FULL): 503 naming the cause, nothing acknowledged falsely, reads go on, writes resume when space returns', async () => {
    const r = await rig();
    try {
      const pages = r.db.pragma('page_count', { simple: true }) as number;
      r.db.pragma(`max_page_count = ${pages + 8}`);
      count('store faults injected');
      const acked: string[] = [];
      let refused: { id: string; status: number; text: string } | undefined;
      for (let i = 0; i < 400 && !refused; i++) {
        const id = `full${i}`;
        const res = await http(r.s.url, 'PUT', `/blocklist/nodes/${id}`, body(i));
        if (res.status === 201) acked.push(id);
        else refused = { id, status: res.status, text: res.text };
      }
      assert.ok(refused, 'the store never filled up');
      assert.ok(acked.length > 0);
      assert.equal(refused.status, 503, refused.text);
      assert.match(errorsOf(JSON.parse(refused.text)), /store unavailable: .*(full|SQLITE_FULL).*nothing was changed/i);
      // A batch is refused whole, and a delete is refused too (it also needs a page).
      const batch = await http(r.s.url, 'POST', '/blocklist', [{ id: 'fullb1', ...body(1) }, { id: 'fullb2', ...body(2) }]);
      assert.ok(batch.status === 503, batch.text);
      assert.equal((await http(r.s.url, 'GET', '/blocklist')).status, 200);
      assert.equal((await http(r.s.url, 'GET', '/healthz')).status, 200);
      // Nothing refused was audited as done.
      const done = new Set(r.audit.records.filter((a) => a.outcome === 'created').map((a) => a.id));
      assert.ok(!done.has(refused.id) && !done.has('fullb1') && !done.has('fullb2'));
      // Space comes back: writes work again.
      r.db.pragma('max_page_count = 1073741823');
      assert.equal((await http(r.s.url, 'PUT', `/blocklist/nodes/${refused.id}`, body(0))).status, 201);
      acked.push(refused.id);
      await close(r);
      // What a fresh process finds in the file: every acknowledged write, nothing refused.
      const again = new SqliteStore(r.file);
      const ids = new Set((await again.list()).map((x) => x.id));
      await again.close();
      const lost = acked.filter((id) => !ids.has(id));
      count('acknowledged writes checked after store faults', acked.length);
      count('acknowledged writes lost after store faults', lost.length);
      assert.deepEqual(lost, []);
      assert.ok(!ids.has('fullb1') && !ids.has('fullb2'));
    } finally {
      await close(r).catch(() => undefined);
    }
  });

  it('a write lock held by another process past the busy timeout: 503 (SQLITE_BUSY), reads go on; a short hold is waited out', async () => {
    const r = await rig(300);
    let holder: ChildProcess | undefined;
    try {
      assert.equal((await http(r.s.url, 'PUT', '/blocklist/nodes/before', body(0))).status, 201);
      holder = await holdLock(r.file);
      count('store faults injected');
      const t0 = Date.now();
      const res = await http(r.s.url, 'PUT', '/blocklist/nodes/locked1', body(1));
      assert.equal(res.status, 503, res.text);
      assert.match(errorsOf(res.body), /store unavailable: .*(locked|SQLITE_BUSY).*nothing was changed/i);
      assert.ok(Date.now() - t0 < 3000, 'the busy timeout bounds the wait');
      const list = (await http(r.s.url, 'GET', '/blocklist')).body as Record<string, unknown>;
      assert.ok('before' in list && !('locked1' in list));
      assert.ok(!r.audit.records.some((a) => a.id === 'locked1' && a.outcome === 'created'));
      await release(holder);
      holder = undefined;
      assert.equal((await http(r.s.url, 'PUT', '/blocklist/nodes/locked1', body(1))).status, 201);
      // A lock released within the busy timeout is waited out, not failed.
      holder = await holdLock(r.file, 100);
      count('store faults injected');
      assert.equal((await http(r.s.url, 'PUT', '/blocklist/nodes/locked2', body(2))).status, 201);
      const ids = (await r.s.store.list()).map((x) => x.id);
      count('acknowledged writes checked after store faults', 3);
      assert.deepEqual(ids.sort(), ['before', 'locked1', 'locked2']);
    } finally {
      if (holder) await release(holder);
      await close(r).catch(() => undefined);
    }
  });

  it("on the write thread (as the sidecar runs): another process commits, then holds the lock; the waiting write gets its 503, reads answer at once with the other process's row", async () => {
    const r = await rig(1500, true);
    let holder: ChildProcess | undefined;
    try {
      assert.equal((await http(r.s.url, 'PUT', '/blocklist/nodes/before', body(0))).status, 201);
      assert.deepEqual(Object.keys((await http(r.s.url, 'GET', '/blocklist')).body as object), ['before']);
      // The CLI's import in chunks: one chunk committed (the version moved), the next holding the lock.
      holder = await holdLock(r.file, 60_000, 'cli-row');
      count('store faults injected');
      const t0 = Date.now();
      const waiting = http(r.s.url, 'PUT', '/blocklist/nodes/locked1', body(1));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const t1 = Date.now();
      const list = (await http(r.s.url, 'GET', '/blocklist')).body as Record<string, unknown>;
      const readMs = Date.now() - t1;
      assert.deepEqual(Object.keys(list).sort(), ['before', 'cli-row']);
      // Reads need not wait for a write queued behind another process's lock (WAL): it took the
      // rest of the busy timeout (1,411 ms) when list() waited for the write thread to settle; 104 ms
      // now (list() waits at most 100 ms for the thread's answers, then reads the rows).
      assert.ok(readMs < 700, `GET /blocklist took ${readMs} ms while a write waited for the lock`);
      const res = await waiting;
      assert.equal(res.status, 503, res.text);
      assert.match(errorsOf(res.body), /store unavailable: .*(locked|SQLITE_BUSY).*nothing was changed/i);
      assert.ok(Date.now() - t0 < 3000, 'the busy timeout bounds the wait');
      await release(holder);
      holder = undefined;
      assert.equal((await http(r.s.url, 'PUT', '/blocklist/nodes/locked1', body(1))).status, 201);
      const ids = (await r.s.store.list()).map((x) => x.id);
      count('acknowledged writes checked after store faults', 2);
      assert.deepEqual(ids.sort(), ['before', 'cli-row', 'locked1']);
    } finally {
      if (holder) await release(holder);
      await close(r).catch(() => undefined);
    }
  });
});

/**
 * Another process takes SQLite's write lock (BEGIN IMMEDIATE) and holds it until told, or for
 * holdMs; with `commitFirst` it first commits a block of that node through the store's own code
 * (the version moves), as a CLI importing in chunks does between two chunks.
 */
function holdLock(file: string, holdMs = 60_000, commitFirst?: string): Promise<ChildProcess> {
  const first = commitFirst
    ? `
    const { SqliteStore } = require('./dist/src/store/sqlite/sqlite-store');
    const { newItem } = require('./dist/src/model/merge');
    const id = ${JSON.stringify(commitFirst)};
    const store = new SqliteStore(${JSON.stringify(file)});
    await store.add({ item: newItem({ id, kind: 'node', node: id, action: 'MARK_BLOCKED', end: { type: 'permanent' }, cause: 'cli', scope: 'cluster', allowMerge: false }, Date.now(), { by: 'cli', from: 'cli' }), allowMerge: false });
    await store.close();`
    : '';
  const script = `(async () => {${first}
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    db.prepare("UPDATE meta SET value = value WHERE key = 'version'").run();
    process.stdout.write('locked\\n');
    const done = () => { try { db.exec('COMMIT'); db.close(); } finally { process.exit(0); } };
    setTimeout(done, ${holdMs});
    process.stdin.on('data', done);
  })();`;
  const child = spawn(process.execPath, ['-e', script], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.on('error', () => undefined); // it may have let go (holdMs) before we tell it to
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout?.once('data', () => resolve(child));
    child.once('exit', (code) => code !== 0 && reject(new Error(`lock holder exited (${code}): ${err}`)));
  });
}

async function release(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.stdin?.write('go\n');
  await exited;
}
