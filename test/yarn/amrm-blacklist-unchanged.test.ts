/**
 * The AMRM proxy client's blacklist(): the sync engine asks every poll tick, so an answer
 * byte-for-byte the same as the last is not parsed again — the same object comes back, and a
 * changed or broken answer is read afresh. Real HTTP on loopback.
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

  it('is the same object; a changed body is parsed anew; a broken one is still an error', async () => {
    const proxy = new AmrmProxyClient({ address: url, timeoutMs: 3000 });
    body = JSON.stringify({ blacklist: ['a', 'b'], owners: { sidecar: ['a'], flink: ['b'] } });
    const first = await proxy.blacklist();
    assert.deepEqual(first, { blacklist: ['a', 'b'], owners: { sidecar: ['a'], flink: ['b'] } });
    assert.equal(await proxy.blacklist(), first, 'the same answer: the same object, nothing parsed');
    body = JSON.stringify({ blacklist: ['a'], owners: { sidecar: ['a'] } });
    const second = await proxy.blacklist();
    assert.notEqual(second, first);
    assert.deepEqual(second, { blacklist: ['a'], owners: { sidecar: ['a'] } });
    status = 500;
    body = JSON.stringify({ errors: ['AM restarting'] });
    await assert.rejects(proxy.blacklist(), /500 AM restarting/);
    status = 200;
    body = JSON.stringify({ blacklist: 'not a list' });
    await assert.rejects(proxy.blacklist(), /"blacklist" is not a list of strings/);
    body = JSON.stringify({ blacklist: ['a'], owners: { sidecar: ['a'] } });
    assert.equal(await proxy.blacklist(), second, 'the last good answer is still recognised');
  });
});
