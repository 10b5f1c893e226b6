/**
 * The rate limit on mutating calls: 429 in Flink's error shape with Retry-After, reads untouched,
 * one budget per principal (or per connection without auth); refused and invalid requests spend
 * none of it, and one flooding client does not lock out another.
 */
import { strict as assert } from 'node:assert';
import * as nodeHttp from 'node:http';
import { http, startTestSidecar, tempDir } from '../support/sidecar';
import { sha256 } from '../../src/security/tokens';
import { ADMIN_TOKEN, HASHED_TOKEN, SECOND_ADMIN_TOKEN, bearer, startSecuredSidecar, tokenFileText, writeTokenFile } from './support';

const block = { action: 'MARK_BLOCKED', cause: 'x' };

describe('security: rate limit on mutations', () => {
  /** A client on one kept-alive connection (as a script using one HTTP client is). */
  function client(base: string) {
    const agent = new nodeHttp.Agent({ keepAlive: true, maxSockets: 1 });
    const call = (method: string, p: string, body?: string) =>
      new Promise<{ status: number; text: string; headers: nodeHttp.IncomingHttpHeaders }>((resolve, reject) => {
        const req = nodeHttp.request(base + p, { method, agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
        });
        req.on('error', reject);
        req.end(body);
      });
    return { call, close: () => agent.destroy() };
  }

  it('without auth: the 4th change on one connection → 429 with Retry-After, nothing written; reads go on; another client is not locked out', async () => {
    const s = await startTestSidecar({ define: { 'rest.rate-limit.max-mutations': '3', 'rest.rate-limit.window': '1 min' } });
    const flood = client(s.url);
    const operator = client(s.url);
    try {
      for (let i = 0; i < 3; i++) assert.equal((await flood.call('PUT', `/blocklist/nodes/r${i}`, JSON.stringify(block))).status, 201);
      const v = await s.store.version();
      const r = await flood.call('PUT', '/blocklist/nodes/r3', JSON.stringify(block));
      assert.equal(r.status, 429, r.text);
      assert.match((JSON.parse(r.text) as { errors: string[] }).errors.join(), /too many changes: more than 3 mutating calls within 60 s.*retry in \d+ s/);
      assert.ok(Number(r.headers['retry-after']) > 0);
      assert.equal((await flood.call('DELETE', '/blocklist/nodes/r0')).status, 429);
      assert.equal(await s.store.version(), v);
      for (let i = 0; i < 10; i++) assert.equal((await flood.call('GET', '/blocklist')).status, 200);
      // The operator's command, on its own connection, still goes through while the flood is refused.
      assert.equal((await operator.call('PUT', '/blocklist/nodes/op1', JSON.stringify(block))).status, 201);
    } finally {
      flood.close();
      operator.close();
      await s.close();
    }
  });

  it('refused and invalid requests spend no budget: 1,000 bad PUTs, then the same client\'s valid changes pass', async () => {
    const s = await startTestSidecar({ define: { 'rest.rate-limit.max-mutations': '3', 'rest.rate-limit.window': '1 min' } });
    const c = client(s.url);
    try {
      const bad = ['{bad json', JSON.stringify({ action: 'NUKE', cause: 'x' }), JSON.stringify({ action: 'MARK_BLOCKED', cause: 'x', endTimestamp: '1' })];
      const statuses = new Map<number, number>();
      for (let i = 0; i < 1000; i++) {
        const r = await c.call('PUT', `/blocklist/nodes/${i % 7 === 0 ? 'bad:host:1' : `b${i}`}`, bad[i % bad.length]);
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
      assert.deepEqual([...statuses.keys()], [400], JSON.stringify([...statuses]));
      for (let i = 0; i < 3; i++) assert.equal((await c.call('PUT', `/blocklist/nodes/ok${i}`, JSON.stringify(block))).status, 201);
      assert.equal((await c.call('PUT', '/blocklist/nodes/ok3', JSON.stringify(block))).status, 429);
    } finally {
      c.close();
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
