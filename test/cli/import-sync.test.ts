/**
 * `blocklist import FILE --sync`: `yarn rmadmin -refreshNodes` semantics on an exclude file, as a
 * child process against a real sidecar and on an SQLite store file (--store). Only the blocks the
 * file created are lifted when their host leaves it; blocks made by hand never are.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TestSidecar, http, startTestSidecar, tempDir } from '../support/sidecar';
import { CliResult, expectCode, runCli } from './run';

type Item = { id: string; cause: string; source?: string; updatedBy?: string };
type ImportDoc = { dryRun: boolean; source: string; results: { id: string; outcome: string }[]; lifted: Item[]; effect?: { blacklistRemovals: string[]; blacklistAdditions: string[] } };
const json = <T>(r: CliResult): T => JSON.parse(r.stdout) as T;

describe('cli: import --sync (exclude-file sync) against a sidecar', function () {
  this.timeout(60_000);
  let s: TestSidecar;
  let dir: string;
  let env: Record<string, string>;
  const cli = (...args: string[]) => runCli(args, { env, cwd: dir });
  // Set-up and checks through the REST API: only the commands under test are spawned.
  const list = async () => (await http(s.url, 'GET', '/blocklist')).body as Record<string, Item>;
  const block = async (id: string, cause: string, allowMerge = false) =>
    assert.ok([201, 202].includes((await http(s.url, 'PUT', `/blocklist/nodes/${id}`, { action: 'MARK_BLOCKED', cause, allowMerge })).status));

  before(async () => {
    dir = tempDir('blocklist-sync-');
    s = await startTestSidecar();
    env = { BLOCKLIST_SERVER: s.url };
  });
  after(async () => {
    await s?.close();
  });

  it('lifts only what the file created and no longer names; manual blocks stay; --dry-run shows both sides', async () => {
    const file = path.join(dir, 'yarn.exclude');
    const source = `exclude-file:${file}`;
    await block('nodec', 'by hand');
    await block('manual1', 'by hand');

    fs.writeFileSync(file, 'nodea\nnodeb\nnodec\n');
    const first = json<ImportDoc>(expectCode(await cli('import', 'yarn.exclude', '--sync', '--action', 'block', '-o', 'json'), 0, 'first sync'));
    assert.equal(first.source, source, 'the source is the absolute path, whatever the working directory');
    assert.deepEqual(first.results.map((r) => `${r.id}:${r.outcome}`), ['nodea:created', 'nodeb:created', 'nodec:merged'], '--sync merges into blocks that exist');
    assert.deepEqual(first.lifted, []);
    let l = await list();
    assert.equal(l.nodea.source, source);
    assert.equal(((await http(s.url, 'GET', '/blocklist/nodes/nodea')).body as Item).source, source, 'GET of one item shows it');
    assert.equal(l.nodec.source, undefined, 'a manual block stays manual when the file merges into it');

    // Someone merges into a block the file created: the file still owns it (the report names who changed it).
    await block('nodea', 'disk', true);

    fs.writeFileSync(file, 'nodeb\n');
    const dry = json<ImportDoc>(expectCode(await cli('import', file, '--sync', '--action', 'block', '--dry-run', '-o', 'json'), 0, 'dry run'));
    assert.equal(dry.dryRun, true);
    assert.deepEqual(dry.results.map((r) => `${r.id}:${r.outcome}`), ['nodeb:unchanged']);
    assert.deepEqual(dry.lifted.map((i) => i.id), ['nodea'], 'nodec (manual) is not lifted though it left the file');
    assert.deepEqual(dry.effect?.blacklistRemovals, ['nodea']);
    assert.ok((await list()).nodea, 'a dry run changes nothing');

    const human = expectCode(await cli('import', file, '--sync', '--action', 'block'), 0, 'sync');
    assert.match(human.stdout, /lifted 1 block\(s\) exclude-file:.*yarn\.exclude created whose host is no longer in the file:/);
    assert.match(human.stdout, /lift\s+nodea .*last changed by/);
    assert.deepEqual(Object.keys(await list()).sort(), ['manual1', 'nodeb', 'nodec']);

    // An empty exclude file recommissions every host it held (refreshNodes with an empty file).
    fs.writeFileSync(file, '# nothing excluded\n');
    const empty = expectCode(await cli('import', file, '--sync'), 0, 'empty file sync');
    assert.match(empty.stdout, /lifted 1 block/);
    assert.deepEqual(Object.keys(await list()).sort(), ['manual1', 'nodec']);
  });

  it('a plain import records the source too; --source names it; list -o wide and show name it; --sync refuses a JSON export', async () => {
    const file = path.join(dir, 'other.exclude');
    fs.writeFileSync(file, 'nodex\n');
    expectCode(await cli('import', file, '--source', 'puppet:excludes'), 0, 'import with --source');
    assert.equal((await list()).nodex.source, 'puppet:excludes');
    const [show, wide, bad, badSource] = await Promise.all([
      cli('show', 'nodex'),
      cli('list', '-o', 'wide'),
      (fs.writeFileSync(path.join(dir, 'export.json'), '[]'), cli('import', 'export.json', '--sync')),
      cli('import', file, '--source', ' '),
    ]);
    assert.match(expectCode(show, 0, 'show').stdout, /Source:\s+puppet:excludes/);
    assert.match(expectCode(wide, 0, 'list -o wide').stdout, /SOURCE[\s\S]*puppet:excludes/);
    assert.match(expectCode(bad, 2, 'json --sync').stderr, /--sync applies to exclude files/);
    assert.match(expectCode(badSource, 2, 'blank --source').stderr, /--source: source must not be empty/);
  });
});

describe('cli: import --sync on --store sqlite: (no sidecar)', function () {
  this.timeout(60_000);
  it('creates with the source, then lifts what left the file and keeps a manual block', async () => {
    const dir = tempDir('blocklist-sync-store-');
    const env = { BLOCKLIST_STORE: `sqlite:${path.join(dir, 'store.db')}` };
    const cli = (...args: string[]) => runCli(args, { env, cwd: dir });
    fs.writeFileSync(path.join(dir, 'ex.txt'), 'nodea\nnodeb\n');
    expectCode(await cli('import', 'ex.txt', '--sync'), 0, 'first sync');
    expectCode(await cli('block', 'nodem', '--cause', 'by hand'), 0, 'manual');
    fs.writeFileSync(path.join(dir, 'ex.txt'), 'nodeb\nnodem\n');
    const doc = json<ImportDoc>(expectCode(await cli('import', 'ex.txt', '--sync', '-o', 'json'), 0, 'second sync'));
    assert.deepEqual(doc.lifted.map((i) => i.id), ['nodea']);
    fs.writeFileSync(path.join(dir, 'ex.txt'), '');
    expectCode(await cli('import', 'ex.txt', '--sync'), 0, 'empty sync');
    const l = json<Record<string, Item>>(expectCode(await cli('list', '-o', 'json'), 0, 'list'));
    assert.deepEqual(Object.keys(l), ['nodem'], 'the manual block stays although the file named it and then dropped it');
  });
});
