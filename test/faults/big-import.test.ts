/**
 * Exclude-file imports of any size (issue: "an 8,000-host XML exclude file fails with 413, even
 * with --store"): the CLI (a child process) sends chunks to a sidecar, each all or nothing, and
 * says what was imported when a later chunk fails; with --store it writes the file directly.
 * Loopback only; one 8,000-host file (~1.2 MB of batch JSON, over the 1 MiB request limit).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { AddressInfo } from 'node:net';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { TestSidecar, startTestSidecar, tempDir } from '../support/sidecar';
import { expectCode, runCli } from '../cli/run';
import { count, printFigures } from '../fuzz/figures';

const HOSTS = 8_000;
const host = (i: number): string => `worker-${String(i).padStart(5, '0')}.rack${i % 40}.dc1.prod.hadoop.example.internal`;

function writeXml(file: string): void {
  const lines = ['<?xml version="1.0"?>', '<hosts>'];
  for (let i = 0; i < HOSTS; i++) lines.push(i % 3 === 0 ? `  <host><name>${host(i)}</name><timeout>${600 + i}</timeout></host>` : `  <host><name>${host(i)}</name></host>`);
  lines.push('</hosts>', '');
  fs.writeFileSync(file, lines.join('\n'));
}

/**
 * A TCP-level fault in front of a real sidecar: forwards every request, except that the
 * `failAt`-th write (POST /blocklist without dryRun) loses its connection before reaching it.
 */
async function faultyFront(target: string, failAt: number): Promise<{ url: string; writes: () => number; close: () => Promise<void> }> {
  let writes = 0;
  const server = http.createServer((req, res) => {
    const isWrite = req.method === 'POST' && req.url?.startsWith('/blocklist') && !req.url.includes('dryRun');
    if (isWrite && ++writes === failAt) {
      req.socket.destroy();
      return;
    }
    const up = http.request(target + (req.url ?? '/'), { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    writes: () => writes,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('faults: exclude-file imports of 8,000 hosts (CLI as a child process)', function () {
  this.timeout(120_000);
  let s: TestSidecar | undefined;
  let dir: string;
  let xml: string;

  before(() => {
    dir = tempDir('blocklist-bigimport-');
    xml = path.join(dir, 'excludes.xml');
    writeXml(xml);
  });

  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    printFigures('big imports', ['hosts imported through a sidecar in chunks', 'hosts imported with --store', 'hosts imported before a failed chunk']);
  });

  it('through a sidecar: in chunks under its request limit, every host imported with its own timeout', async () => {
    s = await startTestSidecar();
    const r = expectCode(await runCli(['import', xml, '-g', '300', '-o', 'json'], { env: { BLOCKLIST_SERVER: s.url }, cwd: dir, timeoutMs: 90_000 }), 0, 'import');
    const out = JSON.parse(r.stdout) as { results: { id: string; outcome: string; item: { evacuationTimeout?: number } }[] };
    assert.equal(out.results.length, HOSTS);
    assert.ok(out.results.every((x) => x.outcome === 'created'));
    const items = await s.store.list();
    assert.equal(items.length, HOSTS);
    const byId = new Map(items.map((i) => [i.id, i]));
    assert.equal(byId.get(host(3))?.evacuationTimeout, 603, 'a host keeps its own <timeout>');
    assert.equal(byId.get(host(4))?.evacuationTimeout, 300, '-g for hosts without one');
    count('hosts imported through a sidecar in chunks', items.length);
    // Again without --merge: refused whole (the conflict check is chunked too), nothing changes.
    const again = expectCode(await runCli(['import', xml], { env: { BLOCKLIST_SERVER: s.url }, cwd: dir, timeoutMs: 90_000 }), 3, 'import again');
    assert.match(again.stderr, /8000 of 8000 host\(s\) are already blocked; nothing was imported/);
  });

  it('with --store: the whole file directly, no 413', async () => {
    const file = path.join(dir, 'direct.db');
    const r = expectCode(await runCli(['import', xml, '--store', `sqlite:${file}`], { cwd: dir, timeoutMs: 90_000 }), 0, 'import --store');
    assert.match(r.stdout, /^imported 8000 item\(s\) from .*excludes\.xml \(YARN XML\): 8000 created\n/);
    const store = new SqliteStore(file);
    try {
      assert.equal((await store.list()).length, HOSTS);
      count('hosts imported with --store', HOSTS);
    } finally {
      await store.close();
    }
  });

  it('a later chunk fails (connection lost): the error says how many were imported and up to which host; --merge finishes it', async () => {
    s = await startTestSidecar();
    const front = await faultyFront(s.url, 3);
    try {
      const r = await runCli(['import', xml], { env: { BLOCKLIST_SERVER: front.url }, cwd: dir, timeoutMs: 90_000 });
      assert.equal(r.code, 5, r.stderr);
      const m = /(\d+) of 8000 item\(s\) were imported before this \(the first \d+ of the file, up to '([^']+)'\), the other (\d+) were not; re-run with --merge/.exec(r.stderr);
      assert.ok(m, r.stderr);
      const imported = Number(m[1]);
      assert.equal(imported + Number(m[3]), HOSTS);
      const ids = (await s.store.list()).map((i) => i.id).sort();
      assert.equal(ids.length, imported, 'exactly what the message says is in the store');
      const expected = Array.from({ length: imported }, (_, i) => host(i)).sort();
      assert.deepEqual(ids, expected, 'the first N hosts of the file');
      assert.equal(m[2], host(imported - 1));
      count('hosts imported before a failed chunk', imported);
    } finally {
      await front.close();
    }
    expectCode(await runCli(['import', xml, '--merge'], { env: { BLOCKLIST_SERVER: s.url }, cwd: dir, timeoutMs: 90_000 }), 0, 'import --merge');
    assert.equal((await s.store.list()).length, HOSTS);
  });
});
