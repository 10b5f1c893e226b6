/**
 * Concurrency (50 parallel PUTs through real HTTP) and durability (SIGKILL of a real sidecar
 * process in the middle of a stream of acknowledged writes).
 */
import { strict as assert } from 'node:assert';
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { cliMain } from '../support/paths';
import { listeningUrl } from '../support/child-sidecar';
import { http, startTestSidecar, tempDir } from '../support/sidecar';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';

describe('REST API: concurrency', () => {
  it('50 parallel merging PUTs to one id → one item, every cause once, the max endTimestamp', async () => {
    const s = await startTestSidecar();
    try {
      const base = Date.now() + 3_600_000;
      const rs = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          http(s.url, 'PUT', '/blocklist/nodes/hot1', { action: i % 7 ? 'MARK_BLOCKED' : 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: `c${i}`, endTimestamp: base + i * 1000, allowMerge: true }),
        ),
      );
      assert.deepEqual([...new Set(rs.map((r) => r.status))].sort(), [201, 202]);
      assert.equal(rs.filter((r) => r.status === 201).length, 1);
      const items = await s.store.list();
      assert.equal(items.length, 1);
      const causes = items[0].cause.split(',');
      assert.equal(causes.length, 50);
      assert.deepEqual(new Set(causes), new Set(Array.from({ length: 50 }, (_, i) => `c${i}`)));
      assert.equal(items[0].endTimestamp, base + 49_000);
      assert.equal(items[0].action, 'MARK_BLOCKED_AND_EVACUATE_TASKS');
    } finally {
      await s.close();
    }
  });

  it('50 parallel non-merging PUTs to one id → exactly one 201 and 49 409s', async () => {
    const s = await startTestSidecar();
    try {
      const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => http(s.url, 'PUT', '/blocklist/nodes/hot2', { action: 'MARK_BLOCKED', cause: `c${i}` })));
      assert.equal(rs.filter((r) => r.status === 201).length, 1);
      assert.equal(rs.filter((r) => r.status === 409).length, 49);
      const item = await s.store.get('hot2');
      const winner = rs.find((r) => r.status === 201)?.body as { cause: string };
      assert.equal(item?.cause, winner.cause);
    } finally {
      await s.close();
    }
  });
});

async function startProcess(db: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [cliMain, 'sidecar', '-Drest.port=0', `-Dcluster.resource-blocklist.store.sqlite.path=${db}`, '-Dlog.level=warn', '-Dlog.format=json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BLOCKLIST_CONFIG_FILE: '' },
  });
  return { child, url: (await listeningUrl(child)).url };
}

describe('SQLite store: durability under SIGKILL', () => {
  it('every acknowledged write is there after the sidecar is killed mid-stream and restarted', async function () {
    this.timeout(30_000);
    const dir = tempDir();
    const db = path.join(dir, 'blocklist.db');
    const { child, url } = await startProcess(db);
    const exited = new Promise((r) => child.once('exit', r));
    const acked: string[] = [];
    let killed = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !killed; i++) {
        const id = `w${w}-n${i}`;
        try {
          const r = await http(url, 'PUT', `/blocklist/nodes/${id}`, { action: 'MARK_BLOCKED', cause: `write ${i}` });
          if (r.status === 201) acked.push(id);
        } catch {
          return; // connection reset by the kill: this write was never acknowledged
        }
      }
    });
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (acked.length >= 200) {
          clearInterval(check);
          child.kill('SIGKILL');
          killed = true;
          resolve();
        }
      }, 5);
    });
    await Promise.all(writers);
    await exited;
    assert.ok(acked.length >= 200);
    // The store file as the killed process left it (WAL included), opened by a fresh process's code.
    const store = new SqliteStore(db);
    const ids = new Set((await store.list()).map((x) => x.id));
    await store.close();
    const lost = acked.filter((id) => !ids.has(id));
    assert.deepEqual(lost, [], `${lost.length} of ${acked.length} acknowledged writes lost`);
    // And a restarted sidecar serves them.
    const again = await startProcess(db);
    try {
      const list = (await http(again.url, 'GET', '/blocklist')).body as Record<string, unknown>;
      for (const id of acked) assert.ok(id in list, id);
    } finally {
      again.child.kill('SIGTERM');
    }
  });

  it('SIGTERM mid-stream: the process exits by itself (the write thread released), every acknowledged write is in the file', async function () {
    this.timeout(20_000);
    const db = path.join(tempDir(), 'blocklist.db');
    const { child, url } = await startProcess(db);
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const acked: string[] = [];
    let stopped = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stopped; i++) {
        try {
          const r = await http(url, 'PUT', `/blocklist/nodes/t${w}-n${i}`, { action: 'MARK_BLOCKED', cause: `write ${i}` });
          if (r.status === 201) acked.push(`t${w}-n${i}`);
        } catch {
          return; // the server closed: never acknowledged
        }
      }
    });
    while (acked.length < 100) await new Promise((r) => setTimeout(r, 5));
    const t0 = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    const took = Date.now() - t0;
    stopped = true;
    await Promise.all(writers);
    // Well under the 4 s forced exit (STOP_DEADLINE_MS): a keep-alive connection left open, or a
    // write thread left running, would hold the process until then (it did: 4,016-4,057 ms).
    assert.ok(!stderr.includes('shutdown not finished'), stderr);
    assert.ok(took < 3_500, `exited ${took} ms after SIGTERM`);
    assert.equal(code, 0);
    const store = new SqliteStore(db);
    const ids = new Set((await store.list()).map((x) => x.id));
    await store.close();
    assert.deepEqual(acked.filter((id) => !ids.has(id)), []);
  });
});
