/**
 * The rate limit on mutating calls: 429 in Flink's error shape with Retry-After, reads untouched,
 * one budget per principal (or per address without auth).
 */
import { strict as assert } from 'node:assert';
import { http, startTestSidecar, tempDir } from '../support/sidecar';
import { sha256 } from '../../src/security/tokens';
import { ADMIN_TOKEN, HASHED_TOKEN, SECOND_ADMIN_TOKEN, bearer, startSecuredSidecar, tokenFileText, writeTokenFile } from './support';

const block = { action: 'MARK_BLOCKED', cause: 'x' };

describe('security: rate limit on mutations', () => {
  it('without auth: the 4th change in the window → 429 with Retry-After; nothing written; reads go on', async () => {
    const s = await startTestSidecar({ define: { 'rest.rate-limit.max-mutations': '3', 'rest.rate-limit.window': '1 min' } });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await http(s.url, 'PUT', `/blocklist/nodes/r${i}`, block)).status, 201);
      const v = await s.store.version();
      const r = await http(s.url, 'PUT', '/blocklist/nodes/r3', block);
      assert.equal(r.status, 429, r.text);
      assert.match(((r.body as { errors: string[] }).errors ?? []).join(), /too many changes: more than 3 mutating calls within 60 s.*retry in \d+ s/);
      assert.ok(Number(r.headers.get('retry-after')) > 0);
      // A malformed change counts too (the limit runs before validation) and is refused the same way.
      assert.equal((await http(s.url, 'PUT', '/blocklist/nodes/r4', '{bad json')).status, 429);
      assert.equal((await http(s.url, 'DELETE', '/blocklist/nodes/r0')).status, 429);
      assert.equal(await s.store.version(), v);
      for (let i = 0; i < 10; i++) assert.equal((await http(s.url, 'GET', '/blocklist')).status, 200);
    } finally {
      await s.close();
    }
  });

  it('with auth: one budget per principal', async () => {
    const dir = tempDir();
    const f = writeTokenFile(dir, tokenFileText(sha256(HASHED_TOKEN).toString('hex')));
    const s = await startSecuredSidecar({ 'rest.auth.tokens-file': f, 'rest.rate-limit.max-mutations': '2', 'rest.rate-limit.window': '1 min' }, dir);
    try {
      assert.equal((await http(s.url, 'PUT', '/blocklist/nodes/p1', block, bearer(ADMIN_TOKEN))).status, 201);
      assert.equal((await http(s.url, 'PUT', '/blocklist/nodes/p2', block, bearer(ADMIN_TOKEN))).status, 201);
      assert.equal((await http(s.url, 'PUT', '/blocklist/nodes/p3', block, bearer(ADMIN_TOKEN))).status, 429);
      assert.equal((await http(s.url, 'PUT', '/blocklist/nodes/p3', block, bearer(SECOND_ADMIN_TOKEN))).status, 201);
      assert.ok(s.logLines.some((l) => l.includes('rate limit: principal:alice')));
    } finally {
      await s.close();
    }
  });

  it('0 turns it off', async () => {
    const s = await startTestSidecar({ define: { 'rest.rate-limit.max-mutations': '0' } });
    try {
      const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => http(s.url, 'PUT', `/blocklist/nodes/z${i}`, block)));
      assert.deepEqual([...new Set(rs.map((r) => r.status))], [201]);
    } finally {
      await s.close();
    }
  });
});
