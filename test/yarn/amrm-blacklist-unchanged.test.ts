/**
 * The AMRM proxy client's blacklistSince(): the sync engine asks every poll tick, so an answer
 * byte-for-byte the same as the one whose digest the caller holds is not parsed again; a changed
 * or broken answer is read afresh. Real HTTP on loopback.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';

describe('AMRM client: an unchanged blacklist answer', () => {
  let server: http.Server;
  let body = '';
  let status = 200;
  let url = '';
  before(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('is "unchanged" for the digest of the same bytes; a changed body is parsed anew; a broken one is still an error', async () => {
    const proxy = new AmrmProxyClient({ address: url, timeoutMs: 3000 });
    body = JSON.stringify({ blacklist: ['a', 'b'], owners: { sidecar: ['a'], flink: ['b'] } });
    const first = await proxy.blacklistSince(undefined);
    assert.ok(!first.unchanged);
    assert.deepEqual(first.view, { blacklist: ['a', 'b'], owners: { sidecar: ['a'], flink: ['b'] } });
    assert.deepEqual(await proxy.blacklistSince(first.digest), { unchanged: true });
    assert.ok(!(await proxy.blacklistSince(undefined)).unchanged, 'without a digest the answer is always read');
    body = JSON.stringify({ blacklist: ['a'], owners: { sidecar: ['a'] } });
    const second = await proxy.blacklistSince(first.digest);
    assert.ok(!second.unchanged);
    assert.notEqual(second.digest, first.digest);
    assert.deepEqual(second.view, { blacklist: ['a'], owners: { sidecar: ['a'] } });
    status = 500;
    body = JSON.stringify({ errors: ['AM restarting'] });
    await assert.rejects(proxy.blacklistSince(second.digest), /500 AM restarting/);
    status = 200;
    body = JSON.stringify({ blacklist: 'not a list' });
    await assert.rejects(proxy.blacklistSince(second.digest), /"blacklist" is not a list of strings/);
    body = JSON.stringify({ blacklist: ['a'], owners: { sidecar: ['a'] } });
    assert.deepEqual(await proxy.blacklistSince(second.digest), { unchanged: true });
    assert.deepEqual(await proxy.blacklist(), { blacklist: ['a'], owners: { sidecar: ['a'] } });
  });
});
