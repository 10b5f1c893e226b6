/**
 * `blocklist import FILE --sync` beside another writer on the same ids (the real CLI as a child
 * process, a real sidecar on SQLite over HTTP). The sync lists the blocks its file created, then
 * lifts those whose host left the file one DELETE at a time: for a thousand hosts that takes a
 * while. An operator who, meanwhile, lifts one of them and blocks the host again by hand has made
 * a block no file owns, and "blocks made by hand are never lifted". The sync deleted it anyway
 * (it deleted by id what it had listed); now each DELETE names the version it listed (If-Match),
 * and a block that changed hands is left, and said so.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TestSidecar, http, startTestSidecar, tempDir } from '../support/sidecar';
import { CliResult, expectCode, runCli } from './run';

type Item = { id: string; cause: string; source?: string; createdBy?: string };
type ImportDoc = { lifted: Item[]; left?: Item[] };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('cli: import --sync beside an operator re-blocking one of its hosts by hand', function () {
  this.timeout(60_000);
  let s: TestSidecar;
  let dir: string;

  before(async () => {
    dir = tempDir('blocklist-sync-race-');
    s = await startTestSidecar();
  });
  after(async () => {
    await s?.close();
  });

  it('a host lifted and blocked again by hand while the sync lifts a thousand blocks keeps the hand block', async () => {
    const file = path.join(dir, 'yarn.exclude');
    const source = `exclude-file:${file}`;
    const hosts = Array.from({ length: 1000 }, (_, i) => `h${String(i).padStart(4, '0')}.example.com`);
    // What an earlier import of the file made (same source), written at once through the batch endpoint.
    const seeded = await http(s.url, 'POST', '/blocklist', hosts.map((id) => ({ id, action: 'MARK_BLOCKED', cause: 'imported from yarn.exclude', source })));
    assert.equal(seeded.status, 200, seeded.text);
    fs.writeFileSync(file, '# every host is back\n');

    const first = hosts[0];
    const last = hosts[hosts.length - 1];
    const running: Promise<CliResult> = runCli(['import', file, '--sync', '--action', 'block', '-o', 'json'], { env: { BLOCKLIST_SERVER: s.url }, cwd: dir });
    // The sync has listed and started lifting (in id order) once the first host is unblocked.
    const until = Date.now() + 20_000;
    while ((await http(s.url, 'GET', `/blocklist/nodes/${first}`)).status !== 404) {
      assert.ok(Date.now() < until, 'the sync never started lifting');
      await sleep(2);
    }
    assert.equal((await http(s.url, 'DELETE', `/blocklist/nodes/${last}`)).status, 200, 'the operator lifts the last host before the sync gets there');
    assert.equal((await http(s.url, 'PUT', `/blocklist/nodes/${last}`, { action: 'MARK_BLOCKED', cause: 'by hand: PSU failing' })).status, 201);

    const doc = JSON.parse(expectCode(await running, 0, 'import --sync').stdout) as ImportDoc;
    const now = await http(s.url, 'GET', `/blocklist/nodes/${last}`);
    assert.equal(now.status, 200, `the hand block of ${last} was lifted by the sync`);
    assert.equal((now.body as Item).cause, 'by hand: PSU failing');
    assert.equal((now.body as Item).source, undefined);
    assert.ok(!doc.lifted.some((i) => i.id === last), 'the report does not claim it');
    assert.deepEqual((doc.left ?? []).map((i) => i.id), [last], 'the report names the block it left');
    assert.equal(doc.lifted.length, hosts.length - 1);
    assert.deepEqual(Object.keys((await http(s.url, 'GET', '/blocklist')).body as object), [last]);
  });
});
