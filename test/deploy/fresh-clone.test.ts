/**
 * The fresh-machine guard: what a clean clone on a new machine has — the tracked files, no
 * node_modules, none of the Debian parts (no JDK, Maven, ZooKeeper, Kerberos, Chromium, promtool) —
 * installs from the lockfile and passes the layering check and the unit lane. A clean clone once
 * ended `983 passed, 1 failed` because the layering check met an optional package (kerberos) that
 * npm leaves out where libkrb5-dev is missing; machines that had run the suite hid it.
 *
 * Cheap on purpose: `npm ci --ignore-scripts` from npm's cache (no native builds: the unit lane needs
 * none), kerberos removed as npm removes an optional package whose build fails, and a PATH holding
 * only node, npm and a shell. The integration lane's own installs are what CI's run covers.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot, tempDir } from '../support/paths';

/** A PATH with node and npm and the shell tools npm's scripts use, nothing from Debian's extras. */
function minimalPath(): string {
  const dir = tempDir('blocklist-fresh-path-');
  const nodeDir = path.dirname(process.execPath);
  for (const tool of ['node', 'npm', 'npx']) {
    const p = path.join(nodeDir, tool);
    if (fs.existsSync(p)) fs.symlinkSync(p, path.join(dir, tool));
  }
  for (const tool of ['sh', 'bash', 'env', 'git']) {
    const found = ['/usr/bin', '/bin'].map((d) => path.join(d, tool)).find((f) => fs.existsSync(f));
    if (found) fs.symlinkSync(found, path.join(dir, tool));
  }
  return dir;
}

describe('deploy: a clean clone on a fresh machine', function () {
  this.timeout(300_000);

  it('installs from the lockfile, passes the layering check and the unit lane with no Debian part and no kerberos', () => {
    const clone = tempDir('blocklist-fresh-');
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot }).toString().split('\0').filter(Boolean);
    for (const f of files) {
      if (!fs.existsSync(path.join(repoRoot, f))) continue; // deleted in the work tree, not yet committed
      fs.mkdirSync(path.dirname(path.join(clone, f)), { recursive: true });
      fs.copyFileSync(path.join(repoRoot, f), path.join(clone, f));
    }
    const env = { PATH: minimalPath(), HOME: process.env.HOME ?? '/root', npm_config_update_notifier: 'false' };
    const step = (cmd: string, args: string[]) => {
      const r = spawnSync(cmd, args, { cwd: clone, env, encoding: 'utf8' });
      assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed:\n${(r.stdout ?? '').slice(-3000)}\n${(r.stderr ?? '').slice(-3000)}`);
      return r.stdout;
    };
    for (const tool of ['java', 'mvn', 'zkServer.sh', 'krb5-config', 'chromium', 'promtool', 'docker-compose']) {
      assert.notEqual(spawnSync('sh', ['-c', `command -v ${tool}`], { env }).status, 0, `${tool} is hidden`);
    }
    step('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error']);
    fs.rmSync(path.join(clone, 'node_modules', 'kerberos'), { recursive: true, force: true });
    step('npm', ['run', 'check:layers']);
    const unit = step('node', ['scripts/test.js', 'unit']);
    assert.match(unit, /^(\d+) passed, 0 failed$/m);
  });
});
