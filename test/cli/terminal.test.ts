/**
 * What an operator sees in a real terminal: the CLI runs inside tmux (a real pty, 120x30) against
 * a sidecar wired to the YARN simulator; the screen is read back with capture-pane. Checks that the
 * table is aligned and coloured only here, and that --wait redraws one progress line in place
 * (containers left, deadline countdown) and ends with the right exit code.
 * tmux runs on a private socket in the test's temp dir (-S) so no one else's tmux session is
 * touched and the socket goes with the dir (tmux leaves it behind: -L left one in /tmp/tmux-0 a run).
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { tempDir } from '../support/sidecar';
import { cliMain } from '../support/paths';
import { cliEnv } from './run';

const haveTmux = spawnSync('tmux', ['-V']).status === 0;
let socket = '';
const SESSION = 'cli';

const tmux = (...args: string[]) => execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
const screen = (escapes = false) => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', SESSION);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(pred: (s: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < until) {
    last = screen();
    if (pred(last)) return last;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
}

function type(line: string): void {
  tmux('send-keys', '-t', SESSION, '-l', line);
  tmux('send-keys', '-t', SESSION, 'Enter');
}

describe('cli in a terminal (tmux): the table and the --wait progress render cleanly', function () {
  this.timeout(60_000);
  let local: LocalCluster;
  let busy: string[];

  before(async function () {
    if (!haveTmux) {
      if (process.env.CI === 'true') throw new Error('tmux is required in CI (apt-get install tmux)');
      this.skip();
    }
    const dir = tempDir('blocklist-cli-tty-');
    socket = path.join(dir, 'tmux.sock');
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(dir, 'b.db'), nodes: 8, containers: 16, tickMs: 200, define: { 'cluster.resource-blocklist.max-blocked-fraction': '1' } });
    busy = local.sim.cluster.nodes.filter((n) => n.containers.size > 0).map((n) => n.host);
    const env = cliEnv({ BLOCKLIST_SERVER: local.sidecar.url, TERM: 'xterm-256color', PS1: '$ ' });
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    tmux('new-session', '-d', '-s', SESSION, '-x', '120', '-y', '30', ...envArgs, 'bash --norc --noprofile');
    type(`alias blocklist='node ${cliMain}'; clear`);
  });

  after(async () => {
    if (socket) spawnSync('tmux', ['-S', socket, 'kill-server']);
    await local?.close();
  });

  it('blocklist list: aligned columns, colours only because this is a terminal', async () => {
    type(`blocklist block ${busy[3]} --cause "No space left on device" --timeout 2h >/dev/null && blocklist block other-node.example --cause "flaky NIC" >/dev/null && clear && blocklist list; echo "rc=$?"`);
    const s = await waitFor((x) => /rc=\d/.test(x), 'list');
    const lines = s.split('\n');
    const h = lines.findIndex((l) => l.startsWith('ID'));
    assert.ok(h >= 0, `table header on screen:\n${s}`);
    assert.match(lines[h], /^ID\s+KIND\s+ACTION\s+SCOPE\s+CAUSE\s+SINCE\s+ENDS\s+TMS\s+SYNC$/);
    const rows = lines.slice(h + 1, h + 3);
    assert.match(rows[0], new RegExp(`^${busy[3].replace(/\./g, '\\.')}\\s+node\\s+BLOCK\\s+cluster\\s+No space left on device\\s+\\d+s\\s+in (1h 59m|2h)\\s+\\d+\\s+(applied|pending)`));
    assert.match(rows[1], /^other-node\.example\s+node\s+BLOCK\s+cluster\s+flaky NIC\s+\d+s\s+never\s+0\s+\S+/);
    for (const col of ['KIND', 'ACTION', 'SCOPE', 'CAUSE', 'ENDS', 'SYNC']) {
      const at = lines[h].indexOf(col);
      assert.ok(rows.every((r) => r[at - 1] === ' ' && r[at] !== ' '), `column ${col} aligned:\n${lines.slice(h, h + 3).join('\n')}`);
    }
    assert.match(s, /rc=0/);
    assert.ok(!s.includes('[0m') && !s.includes('\x1b'), 'no stray escape codes on screen');
    assert.match(screen(true), /\x1b\[1mID/, 'the header is bold on a terminal');
  });

  it('blocklist block --evacuate --wait: one progress line redrawn in place, followed through the release at the deadline to READY (exit 0)', async () => {
    type(`clear; blocklist block ${busy[0]} --cause disk --evacuate --evacuation-timeout 3s --wait --interval 250ms; echo "rc=$?"`);
    const mid = await waitFor((x) => /WAIT_CONTAINER .*deadline in [12]s/.test(x), 'progress with a countdown');
    const progress = mid.split('\n').filter((l) => l.includes('WAIT_CONTAINER'));
    assert.equal(progress.length, 1, `one progress line, redrawn in place:\n${mid}`);
    assert.match(progress[0], new RegExp(`^${busy[0].replace(/\./g, '\\.')} {2}WAIT_CONTAINER {2}\\d+ containers? left, deadline in [12]s \\(\\S+Z\\) \\(busy\\) \\[\\d+s\\]\\s*$`));
    const end = await waitFor((x) => /rc=\d/.test(x), 'the end of --wait');
    assert.match(end, /rc=0/);
    assert.match(end, /READY {2}0 containers left, \d+ released, done/);
    assert.match(end, /evacuated in \S+; \d+ task manager\(s\) released at the deadline/);
    assert.equal(end.split('\n').filter((l) => l.includes('WAIT_CONTAINER')).length, 0, 'the progress line was overwritten, not stacked');
  });

  it('blocklist block --evacuate --wait with an immediate release: READY, exit 0', async () => {
    type(`clear; blocklist block ${busy[1]} --cause nic --evacuate --wait --interval 250ms; echo "rc=$? (ready run)"`);
    // The last test's "rc=0" stays on screen until `clear` runs, and under load a capture may come
    // before the typed line is even echoed: wait for this command's own marker.
    const end = await waitFor((x) => /rc=\d+ \(ready run\)/.test(x), 'the end of --wait');
    assert.match(end, /rc=0/);
    assert.match(end, /READY {2}0 containers left, \d+ released, done/);
    assert.match(end, new RegExp(`${busy[1].replace(/\./g, '\\.')} evacuated in \\S+`));
  });
});
