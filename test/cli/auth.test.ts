/**
 * The CLI against a sidecar with bearer-token auth: no token or a wrong one is exit 1 with a
 * one-line hint, a viewer can read but not change (exit 1, naming the role), an admin token from
 * a file works and is named in the audit trail.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startTestSidecar, TestSidecar, tempDir } from '../support/sidecar';
import { expectCode, runCli } from './run';

const ADMIN = 'cli-admin-token-0123456789';
const VIEWER = 'cli-viewer-token-0123456789';

describe('cli: bearer tokens', function () {
  this.timeout(30_000);
  let s: TestSidecar;
  let dir: string;
  before(async () => {
    dir = tempDir('blocklist-cli-auth-');
    const tokens = path.join(dir, 'tokens.yaml');
    fs.writeFileSync(tokens, `tokens:\n  "${ADMIN}": { name: oncall, role: admin }\n  "${VIEWER}": { name: grafana, role: viewer }\n`, { mode: 0o600 });
    s = await startTestSidecar({ dir, define: { 'rest.auth.tokens-file': tokens } });
  });
  after(() => s?.close());

  it('refuses without a token, lets a viewer read only, and an admin (token from a file) change', async () => {
    const env = { BLOCKLIST_SERVER: s.url };
    const none = expectCode(await runCli(['list'], { env, cwd: dir }), 1, 'no token');
    assert.equal(none.stderr.trim().split('\n').length, 1, none.stderr);
    assert.match(none.stderr, /token/i);
    expectCode(await runCli(['list', '--token', 'wrong-token-0123456789'], { env, cwd: dir }), 1, 'bad token');

    expectCode(await runCli(['list', '--token', VIEWER], { env, cwd: dir }), 0, 'viewer list');
    const denied = expectCode(await runCli(['block', 'node1', '--cause', 'x', '--token', VIEWER], { env, cwd: dir }), 1, 'viewer block');
    assert.match(denied.stderr, /viewer/);
    assert.equal((await s.store.list()).length, 0);

    const tokenFile = path.join(dir, 'admin.token');
    fs.writeFileSync(tokenFile, `${ADMIN}\n`, { mode: 0o600 });
    expectCode(await runCli(['block', 'node1', '--cause', 'x', '--token-file', tokenFile], { env, cwd: dir }), 0, 'admin block');
    assert.equal((await s.store.get('node1'))?.created.by, 'oncall');
  });
});
