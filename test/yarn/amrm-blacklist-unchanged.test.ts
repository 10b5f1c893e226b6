/**
 * The AMRM proxy client's blacklistSince(): the sync engine asks every poll tick, so an answer
 * it already holds is not parsed again. A proxy that sends an ETag is asked with If-None-Match and
 * its 304 is "unchanged"; from one that sends none, an answer byte-for-byte the same as the one
 * whose digest the caller holds is "unchanged". A changed or broken answer is read afresh. And a
 * push names the versions a versioned proxy reports. Real HTTP on loopback.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { BlacklistReading, BlacklistVersion } from '../../src/yarn/types';

function versionOf(r: BlacklistReading): BlacklistVersion {
  assert.ok(!r.unchanged, 'expected a full answer');
  return r.version;
}

describe('AMRM client: an unchanged blacklist answer', () => {
  let server: http.Server;
  let body = '';
  let status = 200;
  let headers: Record<string, string> = {};
  const seen: http.IncomingHttpHeaders[] = [];
  let url = '';
  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(status === 304 ? undefined : body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    status = 200;
    headers = {};
    seen.length = 0;
  });

  it('without an ETag: "unchanged" for the digest of the same bytes; a changed body is parsed anew; a broken one is still an error', async () => {
    const proxy = new AmrmProxyClient({ address: url, timeoutMs: 3000 });
    body = JSON.stringify({ blacklist: ['a', 'b'], owners: { sidecar: ['a'], flink: ['b'] } });
    const first = await proxy.blacklistSince(undefined);
    assert.ok(!first.unchanged);
    assert.deepEqual(first.view, { blacklist: ['a', 'b'], owners: { sidecar: ['a'], flink: ['b'] } });
    assert.equal(first.version.kind, 'digest');
    assert.deepEqual(await proxy.blacklistSince(first.version), { unchanged: true });
    assert.equal(seen.at(-1)?.['if-none-match'], undefined, 'a digest is never sent as an entity tag');
    assert.ok(!(await proxy.blacklistSince(undefined)).unchanged, 'without a version the answer is always read');
    body = JSON.stringify({ blacklist: ['a'], owners: { sidecar: ['a'] } });
    const second = await proxy.blacklistSince(first.version);
    assert.ok(!second.unchanged);
    assert.notDeepEqual(second.version, first.version);
    assert.deepEqual(second.view, { blacklist: ['a'], owners: { sidecar: ['a'] } });
    status = 500;
    body = JSON.stringify({ errors: ['AM restarting'] });
    await assert.rejects(proxy.blacklistSince(second.version), /500 AM restarting/);
    status = 200;
    body = JSON.stringify({ blacklist: 'not a list' });
    await assert.rejects(proxy.blacklistSince(second.version), /"blacklist" is not a list of strings/);
    body = JSON.stringify({ blacklist: ['a'], owners: { sidecar: ['a'] } });
    assert.deepEqual(await proxy.blacklistSince(second.version), { unchanged: true });
    assert.deepEqual(await proxy.blacklist(), { blacklist: ['a'], owners: { sidecar: ['a'] } });
  });

  it('with an ETag: If-None-Match carries it, a 304 is "unchanged", a new tag is a new answer; a 304 to an unconditional read is an error', async () => {
    const proxy = new AmrmProxyClient({ address: url, timeoutMs: 3000 });
    body = JSON.stringify({ blacklist: ['a'], owners: { blocklist: ['a'] } });
    headers = { etag: '"e1-7"' };
    const first = await proxy.blacklistSince(undefined);
    assert.deepEqual(versionOf(first), { kind: 'etag', etag: '"e1-7"' });
    assert.equal(seen.at(-1)?.['if-none-match'], undefined);
    status = 304;
    assert.deepEqual(await proxy.blacklistSince(versionOf(first)), { unchanged: true });
    assert.equal(seen.at(-1)?.['if-none-match'], '"e1-7"');
    // The same strong tag on a 200 (something in between ignored the condition) is the same answer.
    status = 200;
    assert.deepEqual(await proxy.blacklistSince(versionOf(first)), { unchanged: true });
    headers = { etag: '"e1-8"' };
    body = JSON.stringify({ blacklist: ['a', 'b'], owners: { blocklist: ['a'], am: ['b'] } });
    const second = await proxy.blacklistSince(versionOf(first));
    assert.ok(!second.unchanged);
    assert.deepEqual(second.view.owners, { blocklist: ['a'], am: ['b'] });
    assert.deepEqual(second.version, { kind: 'etag', etag: '"e1-8"' });
    // A proxy that lost its ETag (downgraded): the digest path, as with any proxy without one.
    headers = {};
    assert.equal(versionOf(await proxy.blacklistSince(second.version)).kind, 'digest');
    // A malformed tag is no tag.
    headers = { etag: 'no-quotes' };
    assert.equal(versionOf(await proxy.blacklistSince(undefined)).kind, 'digest');
    status = 304;
    await assert.rejects(proxy.blacklistSince(undefined), /304/);
  });

  it('a push asks for the minimal answer and names the versions of a versioned proxy; an unversioned answer names none', async () => {
    const proxy = new AmrmProxyClient({ address: url, timeoutMs: 3000 });
    body = JSON.stringify({ etag: '"e1-9"', previousEtag: '"e1-8"' });
    assert.deepEqual(await proxy.updateBlacklist({ additions: ['a'], removals: [] }), { etag: '"e1-9"', previousEtag: '"e1-8"' });
    assert.equal(seen.at(-1)?.prefer, 'return=minimal');
    body = JSON.stringify({ blacklist: ['a'], owners: { blocklist: ['a'] }, etag: '"e1-9"', previousEtag: '"e1-8"' });
    assert.deepEqual(await proxy.updateBlacklist({ additions: ['a'], removals: [] }), { etag: '"e1-9"', previousEtag: '"e1-8"' });
    body = JSON.stringify({ blacklist: ['a'], owners: { blocklist: ['a'] } });
    assert.equal(await proxy.updateBlacklist({ additions: ['a'], removals: [] }), undefined);
    body = JSON.stringify({ etag: '"e1-9"', previousEtag: 7 });
    assert.equal(await proxy.updateBlacklist({ additions: ['a'], removals: [] }), undefined, 'half a receipt is none');
    status = 400;
    body = JSON.stringify({ errors: ['Cannot add * to the blacklist!'] });
    await assert.rejects(proxy.updateBlacklist({ additions: ['*'], removals: [] }), /Cannot add \*/);
  });
});
