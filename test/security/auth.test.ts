/**
 * Bearer-token auth through real HTTP: who gets in, who may change what, what the audit says,
 * and that no token ever reaches a log line.
 */
import { strict as assert } from 'node:assert';
import { http } from '../support/sidecar';
import { sha256 } from '../../src/security/tokens';
import { tempDir } from '../support/sidecar';
import { ADMIN_TOKEN, HASHED_TOKEN, SECOND_ADMIN_TOKEN, SecuredSidecar, VIEWER_TOKEN, bearer, startSecuredSidecar, tokenFileText, writeTokenFile } from './support';

const block = { action: 'MARK_BLOCKED', cause: 'disk full' };

describe('security: bearer-token auth', () => {
  let s: SecuredSidecar;
  before(async () => {
    const dir = tempDir('blocklist-auth-');
    const file = writeTokenFile(dir, tokenFileText(sha256(HASHED_TOKEN).toString('hex')));
    s = await startSecuredSidecar({ 'rest.auth.tokens-file': file }, dir);
  });
  after(() => s.close());

  const errorsOf = (body: unknown): string => ((body as { errors?: string[] }).errors ?? []).join('\n');

  it('GET /healthz is open', async () => {
    const r = await http(s.url, 'GET', '/healthz');
    assert.equal(r.status, 200, r.text);
  });

  for (const [method, p] of [
    ['GET', '/blocklist'],
    ['GET', '/blocklist/nodes/n1'],
    ['GET', '/status'],
    ['GET', '/readyz'],
    ['GET', '/metrics'],
    ['GET', '/no-such-endpoint'],
    ['GET', '/healthz/../blocklist'],
    ['PUT', '/blocklist/nodes/n1'],
    ['DELETE', '/blocklist/nodes/n1'],
    ['POST', '/blocklist'],
  ] as const) {
    it(`${method} ${p} without a token → 401 with WWW-Authenticate: Bearer, nothing changed`, async () => {
      const v = await s.store.version();
      const r = await http(s.url, method, p, method === 'PUT' ? block : method === 'POST' ? [{ id: 'n1', ...block }] : undefined);
      assert.equal(r.status, 401, r.text);
      assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer realm="flink-yarn-blocklist"/);
      assert.match(errorsOf(r.body), /authentication required.*Bearer/);
      assert.equal(await s.store.version(), v);
    });
  }

  it('a wrong token → 401 invalid_token; another scheme → 401 invalid_request', async () => {
    const wrong = await http(s.url, 'GET', '/blocklist', undefined, bearer(ADMIN_TOKEN.slice(0, -1) + 'Q'));
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const basic = await http(s.url, 'GET', '/blocklist', undefined, { authorization: `Basic ${Buffer.from(`alice:${ADMIN_TOKEN}`).toString('base64')}` });
    assert.equal(basic.status, 401);
    assert.match(basic.headers.get('www-authenticate') ?? '', /error="invalid_request"/);
    assert.match(errorsOf(basic.body), /unsupported authorization scheme 'Basic'/);
  });

  it('a viewer reads, and is refused every change with 403 naming the role; the attempt is audited', async () => {
    const read = await http(s.url, 'GET', '/blocklist', undefined, bearer(VIEWER_TOKEN));
    assert.equal(read.status, 200, read.text);
    const v = await s.store.version();
    const before = s.audit.records.length;
    for (const [method, p, body] of [
      ['PUT', '/blocklist/nodes/v1', block],
      ['PUT', '/blocklist/nodes/v1?dryRun=true', block],
      ['DELETE', '/blocklist/nodes/v1', undefined],
      ['POST', '/blocklist', [{ id: 'v1', ...block }]],
      ['PUT', '/blocklist/taskmanagers/v1/container_e01_1652313600000_0001_01_000002', block],
    ] as const) {
      const r = await http(s.url, method, p, body, bearer(VIEWER_TOKEN));
      assert.equal(r.status, 403, `${method} ${p}: ${r.text}`);
      assert.match(errorsOf(r.body), /'grafana' has the viewer role/);
    }
    assert.equal(await s.store.version(), v);
    const denied = s.audit.records.slice(before);
    assert.equal(denied.length, 5);
    for (const d of denied) {
      assert.equal(d.op, 'denied');
      assert.equal(d.who, 'grafana');
      assert.equal(d.outcome, 'forbidden');
    }
  });

  it('an unauthenticated change attempt is audited as such', async () => {
    const before = s.audit.records.length;
    await http(s.url, 'DELETE', '/blocklist/nodes/zz', undefined, bearer('not-a-real-token-at-all-xyz'));
    const d = s.audit.records.slice(before);
    assert.equal(d.length, 1);
    assert.deepEqual([d[0].op, d[0].who, d[0].outcome, d[0].id], ['denied', 'unauthenticated', 'unauthenticated', '/blocklist/nodes/zz']);
  });

  it('an admin changes the blocklist; the item and the audit line name the admin', async () => {
    const r = await http(s.url, 'PUT', '/blocklist/nodes/a1', block, bearer(ADMIN_TOKEN));
    assert.equal(r.status, 201, r.text);
    assert.equal((r.body as { createdBy: string }).createdBy, 'alice');
    const rec = s.audit.records.find((x) => x.op === 'block' && x.id === 'a1');
    assert.equal(rec?.who, 'alice');
    const merged = await http(s.url, 'PUT', '/blocklist/nodes/a1', { ...block, cause: 'nic flaps', allowMerge: true }, bearer(HASHED_TOKEN));
    assert.equal(merged.status, 202, merged.text);
    assert.equal((merged.body as { updatedBy: string }).updatedBy, 'bob');
    const del = await http(s.url, 'DELETE', '/blocklist/nodes/a1', undefined, bearer(SECOND_ADMIN_TOKEN));
    assert.equal(del.status, 200, del.text);
    assert.equal(s.audit.records.find((x) => x.op === 'unblock' && x.id === 'a1')?.who, 'carol');
  });

  it('no token, whole or in part, appears in any log line or audit record', async () => {
    const all = s.logLines.join('\n') + JSON.stringify(s.audit.records);
    assert.ok(s.logLines.some((l) => /auth: 401/.test(l)), 'refusals are logged');
    for (const t of [ADMIN_TOKEN, VIEWER_TOKEN, HASHED_TOKEN, SECOND_ADMIN_TOKEN]) {
      assert.ok(!all.includes(t.slice(0, 12)), `a prefix of a token was logged`);
    }
    assert.ok(!all.includes(Buffer.from(`alice:${ADMIN_TOKEN}`).toString('base64').slice(0, 16)));
  });
});
