/**
 * The token file: format, refusals with messages that never quote a token, constant-time lookup.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TokenFileError, loadTokenFile, parseTokenFile, sha256 } from '../../src/security/tokens';
import { presentedToken } from '../../src/api/auth';
import { tempDir } from '../support/sidecar';
import { ADMIN_TOKEN, HASHED_TOKEN, VIEWER_TOKEN, tokenFileText, writeTokenFile } from './support';

const hashed = sha256(HASHED_TOKEN).toString('hex');

function refusal(text: string): TokenFileError {
  try {
    parseTokenFile(text, 'tokens.yaml');
  } catch (e) {
    assert.ok(e instanceof TokenFileError, String(e));
    return e;
  }
  assert.fail('the token file was accepted');
}

describe('security: token file', () => {
  it('maps tokens (plain or as sha256:) to principals; unknown tokens to nothing', () => {
    const t = parseTokenFile(tokenFileText(hashed));
    assert.equal(t.size, 4);
    assert.deepEqual(t.lookup(ADMIN_TOKEN), { name: 'alice', role: 'admin' });
    assert.deepEqual(t.lookup(VIEWER_TOKEN), { name: 'grafana', role: 'viewer' });
    assert.deepEqual(t.lookup(HASHED_TOKEN), { name: 'bob', role: 'admin' });
    assert.equal(t.lookup(ADMIN_TOKEN + 'x'), undefined);
    assert.equal(t.lookup(ADMIN_TOKEN.slice(0, -1)), undefined);
    assert.equal(t.lookup(''), undefined);
    assert.equal(t.lookup(`sha256:${hashed}`), undefined, 'the digest itself is not a token');
    assert.deepEqual(t.roles(), { admin: 3, viewer: 1 });
  });

  it('reads JSON too', () => {
    const t = parseTokenFile(JSON.stringify({ tokens: { [ADMIN_TOKEN]: { name: 'alice', role: 'admin' } } }));
    assert.deepEqual(t.lookup(ADMIN_TOKEN), { name: 'alice', role: 'admin' });
  });

  const bad: { name: string; text: string; message: RegExp; secret?: string }[] = [
    { name: 'a short token', text: 'tokens:\n  "short-secret-1": { name: a, role: admin }\n', message: /shorter than 16/, secret: 'short-secret-1' },
    { name: 'a bad role', text: `tokens:\n  "${ADMIN_TOKEN}": { name: alice, role: root }\n`, message: /role must be admin or viewer/ },
    { name: 'a missing name', text: `tokens:\n  "${ADMIN_TOKEN}": { role: admin }\n`, message: /name must be/ },
    { name: 'a name with a newline', text: `tokens:\n  "${ADMIN_TOKEN}": { name: "a\\nb", role: admin }\n`, message: /name must be/ },
    { name: 'an unknown field', text: `tokens:\n  "${ADMIN_TOKEN}": { name: alice, role: admin, expires: never }\n`, message: /unknown field\(s\) 'expires'/ },
    { name: 'a duplicate token', text: `tokens:\n  "${ADMIN_TOKEN}": { name: alice, role: admin }\n  "${ADMIN_TOKEN}": { name: eve, role: viewer }\n` , message: /not valid YAML/ },
    { name: 'a token and its own digest', text: `tokens:\n  "${ADMIN_TOKEN}": { name: alice, role: admin }\n  "sha256:${sha256(ADMIN_TOKEN).toString('hex')}": { name: eve, role: viewer }\n`, message: /same token as entry 1 \(alice\)/ },
    { name: 'a bad digest', text: 'tokens:\n  "sha256:abc": { name: alice, role: admin }\n', message: /64 hex digits/ },
    { name: 'a token with a space', text: `tokens:\n  "${ADMIN_TOKEN} x": { name: alice, role: admin }\n`, message: /may only contain/ },
    { name: 'no tokens', text: 'tokens: {}\n', message: /at least one token/ },
    { name: 'no tokens map', text: '- a\n- b\n', message: /top-level "tokens" map/ },
    { name: 'an unknown top-level field', text: `tokens:\n  "${ADMIN_TOKEN}": { name: alice, role: admin }\nusers: []\n`, message: /unknown top-level field 'users'/ },
    { name: 'broken YAML around a token', text: `tokens:\n  "${ADMIN_TOKEN}": { name: alice, role: admin\n`, message: /not valid YAML or JSON/ },
  ];
  for (const c of bad) {
    it(`refuses ${c.name}, saying why without quoting any token`, () => {
      const e = refusal(c.text);
      assert.match(e.message, c.message);
      assert.ok(!e.message.includes(ADMIN_TOKEN), e.message);
      if (c.secret) assert.ok(!e.message.includes(c.secret), e.message);
    });
  }

  it('loads a file and warns when others can read it', () => {
    const dir = tempDir();
    const f = writeTokenFile(dir, tokenFileText(hashed), 0o644);
    const loaded = loadTokenFile(f);
    assert.equal(loaded.table.size, 4);
    assert.match(loaded.warning ?? '', /readable by group or others.*chmod 600/);
    fs.chmodSync(f, 0o600);
    assert.equal(loadTokenFile(f).warning, undefined);
    assert.throws(() => loadTokenFile(path.join(dir, 'missing.yaml')), /cannot read it: ENOENT/);
  });

  it('parses the Authorization header: Bearer only, one token, token characters only', () => {
    assert.deepEqual(presentedToken(undefined), { kind: 'none' });
    assert.deepEqual(presentedToken('  '), { kind: 'none' });
    assert.deepEqual(presentedToken(`Bearer ${ADMIN_TOKEN}`), { kind: 'token', token: ADMIN_TOKEN });
    assert.deepEqual(presentedToken(`bearer ${ADMIN_TOKEN}`), { kind: 'token', token: ADMIN_TOKEN });
    assert.equal(presentedToken(`Basic ${Buffer.from('a:b').toString('base64')}`).kind, 'malformed');
    assert.equal(presentedToken(`Bearer ${ADMIN_TOKEN} extra`).kind, 'malformed');
    assert.equal(presentedToken('Bearer tok"en').kind, 'malformed');
  });
});
