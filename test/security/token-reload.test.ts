/**
 * Token file reload without a restart, through real HTTP: a revoked token stops working as soon as
 * the file changes (or on SIGHUP), a new one works, a broken file keeps the previous grants, and
 * each reload leaves one audit record with names only.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { http, tempDir } from '../support/sidecar';
import { waitFor } from '../faults/support';
import { ADMIN_TOKEN, SECOND_ADMIN_TOKEN, SecuredSidecar, VIEWER_TOKEN, bearer, startSecuredSidecar, writeTokenFile } from './support';

const NEW_TOKEN = 'n3w-adm1n-T0ken-0123456789abcdef';
const file = (lines: string[]) => ['tokens:', ...lines.map((l) => `  ${l}`), ''].join('\n');

describe('security: token file reload (file watch and SIGHUP)', function () {
  this.timeout(20_000);
  let s: SecuredSidecar;
  let tokens: string;
  const status = async (token: string) => (await http(s.url, 'GET', '/blocklist', undefined, bearer(token))).status;
  const reloads = () => s.audit.records.filter((r) => r.op === 'reload-tokens');

  before(async () => {
    const dir = tempDir('blocklist-reload-');
    tokens = writeTokenFile(dir, file([`"${ADMIN_TOKEN}": { name: alice, role: admin }`, `"${VIEWER_TOKEN}": { name: grafana, role: viewer }`]));
    s = await startSecuredSidecar({ 'rest.auth.tokens-file': tokens }, dir);
  });
  after(() => s.close());

  it('a rewritten file revokes and grants at once, with an audit line naming who was added and removed', async () => {
    assert.equal(await status(ADMIN_TOKEN), 200);
    assert.equal(await status(NEW_TOKEN), 401);
    // Replace the file the way editors and config management do: write a new one, rename over it.
    const tmp = path.join(path.dirname(tokens), '.tokens.new');
    fs.writeFileSync(tmp, file([`"${NEW_TOKEN}": { name: dave, role: admin }`, `"${VIEWER_TOKEN}": { name: grafana, role: viewer }`]), { mode: 0o600 });
    fs.renameSync(tmp, tokens);
    // From the very next request (the docs' promise), not after the watcher's settle delay.
    assert.equal(await status(ADMIN_TOKEN), 401, 'alice revoked at the next request');
    assert.equal(await status(NEW_TOKEN), 200);
    assert.equal(await status(VIEWER_TOKEN), 200);
    const r = reloads().at(-1);
    assert.equal(r?.outcome, 'reloaded');
    assert.equal(r?.from, 'request');
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(reloads().at(-1), r, 'the watcher then finds the file unchanged: one record for one change');
    assert.match(r?.detail ?? '', /added: dave \(admin\); removed: alice \(admin\)/);
    assert.ok(!JSON.stringify(s.audit.records).includes(NEW_TOKEN), 'no token in the audit');
  });

  it('a broken file is refused: the previous tokens keep working, the audit says why', async () => {
    const before = reloads().length;
    fs.writeFileSync(tokens, 'tokens: [this is not a map', { mode: 0o600 });
    await waitFor('the refusal', () => reloads().length > before, 5000);
    assert.equal(reloads().at(-1)?.outcome, 'refused');
    assert.match(reloads().at(-1)?.detail ?? '', /kept the previous tokens/);
    assert.equal(await status(NEW_TOKEN), 200);
  });

  it('SIGHUP reloads too (for file systems without change events)', async () => {
    const before = reloads().length;
    // The write and the signal happen in one synchronous step, before the watcher's settle timer:
    // the SIGHUP reload is the one that applies the change; the watcher then finds it unchanged.
    fs.writeFileSync(tokens, file([`"${NEW_TOKEN}": { name: dave, role: admin }`, `"${SECOND_ADMIN_TOKEN}": { name: carol, role: admin }`]), { mode: 0o600 });
    process.emit('SIGHUP', 'SIGHUP');
    const applied = reloads().slice(before);
    assert.equal(applied.length, 1);
    assert.equal(applied[0].from, 'SIGHUP');
    assert.match(applied[0].detail ?? '', /added: carol \(admin\); removed: grafana \(viewer\)/);
    assert.equal(await status(SECOND_ADMIN_TOKEN), 200);
    assert.equal(await status(VIEWER_TOKEN), 401, 'grafana was revoked');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(reloads().length, before + 1, 'the watcher found the file unchanged: no second record');
  });
});
