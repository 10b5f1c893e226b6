/**
 * Every CLI command that changes something, run as a child process against a running sidecar over
 * HTTP: each request must be one the server accepts (a body-less POST or DELETE must not carry a
 * content type the server refuses with 415).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FakeClock } from '../../src/core/clock';
import { TestSidecar, startTestSidecar } from '../support/sidecar';
import { expectCode, runCli } from './run';

describe('cli: every command that posts, against a sidecar', () => {
  let s: TestSidecar;
  const clock = new FakeClock(Date.now());
  const cli = (...args: string[]) => runCli([...args, '--server', s.url]);

  before(async () => {
    // The scheduled job must not remove the item before the command does: once a year.
    s = await startTestSidecar({ clock, define: { 'cluster.resource-blocklist.expiry.cron': '0 0 0 1 1 *' } });
  });
  after(() => s.close());

  it('block, block-tm, unblock (DELETE without a body), import (POST), --dry-run of each', async () => {
    expectCode(await cli('block', 'p1.example', '--cause', 'disk'), 0, 'block');
    expectCode(await cli('block', 'p2.example', '--cause', 'disk', '--dry-run'), 0, 'block --dry-run');
    expectCode(await cli('block-tm', 'p1.example/container_e01_1652313600000_0001_01_000002', '--cause', 'slow'), 0, 'block-tm');
    expectCode(await cli('unblock', 'p1.example', '--dry-run'), 0, 'unblock --dry-run');
    expectCode(await cli('unblock', 'p1.example'), 0, 'unblock');
    const file = path.join(s.dir, 'hosts.txt');
    fs.writeFileSync(file, 'i1.example\ni2.example\n');
    expectCode(await cli('import', file, '--cause', 'decommission', '--dry-run'), 0, 'import --dry-run');
    expectCode(await cli('import', file, '--cause', 'decommission'), 0, 'import');
    assert.deepEqual(Object.keys(JSON.parse(expectCode(await cli('list', '-o', 'json'), 0, 'list').stdout)).sort(), [
      'i1.example',
      'i2.example',
      'p1.example/container_e01_1652313600000_0001_01_000002',
    ]);
  });

  it('expire (POST without a body) runs one pass on the sidecar: the ended item is removed', async () => {
    expectCode(await cli('block', 'short.example', '--cause', 'brief', '--timeout', '1s'), 0, 'short block');
    clock.advance(2_000);
    const r = expectCode(await cli('expire', '-o', 'json'), 0, 'expire');
    assert.deepEqual((JSON.parse(r.stdout) as { id: string }[]).map((i) => i.id), ['short.example']);
  });
});
