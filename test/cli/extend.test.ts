/**
 * `blocklist extend`: a later end and nothing else, by a duration from the current end or until a
 * time, with the version read (If-Match); never shorter, nothing for a permanent block.
 */
import { strict as assert } from 'node:assert';
import { CliResult, expectCode, runCli } from './run';
import { TestSidecar, startTestSidecar, tempDir } from '../support/sidecar';

type Item = { endTimestamp: string; cause: string; scope: string; action: string };
const json = <T>(r: CliResult): T => JSON.parse(r.stdout) as T;

describe('cli: blocklist extend against a real sidecar', function () {
  this.timeout(60_000);
  let s: TestSidecar;
  let env: Record<string, string>;
  let dir: string;
  const cli = (...args: string[]) => runCli(args, { env, cwd: dir });
  before(async () => {
    s = await startTestSidecar();
    dir = tempDir('blocklist-extend-');
    env = { BLOCKLIST_SERVER: s.url };
  });
  after(async () => {
    await s?.close();
  });

  it('by a duration from the current end, or until a time; keeps action, cause and scope; refuses to shorten; says so for a permanent block', async () => {
    const app = 'application_1652313600000_0002';
    const made = json<Item>(expectCode(await cli('block', 'ext1', '--cause', 'disk', '--evacuate', '--timeout', '1h', '--scope', app, '-o', 'json'), 0, 'block'));
    const end = Number(made.endTimestamp);
    const by = json<Item>(expectCode(await cli('extend', 'ext1', '--by', '2h', '-o', 'json'), 0, 'extend --by'));
    assert.equal(Number(by.endTimestamp), end + 2 * 3_600_000);
    assert.deepEqual([by.action, by.cause, by.scope], ['MARK_BLOCKED_AND_EVACUATE_TASKS', 'disk', app]);

    const human = expectCode(await cli('extend', 'ext1', '--until', '2031-01-01T00:00Z'), 0, 'extend --until');
    assert.match(human.stdout, /^extended ext1 EVACUATE until 2031-01-01T00:00:00Z .*\(was until \S+Z\)\n$/);

    const dry = expectCode(await cli('extend', 'ext1', '--until', '2032-01-01T00:00Z', '--dry-run'), 0, 'extend --dry-run');
    assert.match(dry.stdout, /^dry run: would extend ext1 EVACUATE until 2032-01-01T00:00:00Z[\s\S]*nothing was changed\n$/);
    assert.equal(json<Item>(expectCode(await cli('show', 'ext1', '-o', 'json'), 0, 'show')).endTimestamp, String(Date.UTC(2031, 0, 1)));

    const shorter = expectCode(await cli('extend', 'ext1', '--until', '2030-06-01T00:00Z'), 2, 'extend shorter');
    assert.match(shorter.stderr, /ends at 2031-01-01T00:00:00Z already, not before 2030-06-01T00:00:00Z: extend never shortens a block/);
    assert.match(expectCode(await cli('extend', 'ext1'), 2, 'no end').stderr, /give either --by DURATION \(from the current end\) or --until TIME/);
    assert.match(expectCode(await cli('extend', 'nosuch', '--by', '1h'), 4, 'missing').stderr, /'nosuch' is not blocked/);

    expectCode(await cli('block', 'ext2', '--cause', 'forever'), 0, 'permanent block');
    assert.match(expectCode(await cli('extend', 'ext2', '--by', '1h'), 0, 'extend permanent').stderr, /'ext2' is blocked permanently already; nothing to extend/);
  });
});
