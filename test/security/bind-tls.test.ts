/**
 * Bind safety (no non-loopback listener without auth), TLS for the REST API, the CA bundle for
 * outgoing YARN calls, and start-up refusals of bad TLS or token configuration.
 */
import { strict as assert } from 'node:assert';
import * as https from 'node:https';
import * as path from 'node:path';
import { AddressInfo } from 'node:net';
import axios from 'axios';
import { ConfigError, describeConfig, loadConfig } from '../../src/config/config';
import { checkBindSafety } from '../../src/security/bind-safety';
import { startSidecar } from '../../src/sidecar/sidecar';
import { silentLogger } from '../../src/core/logger';
import { createYarnHttpsAgent, loadServerTls } from '../../src/security/tls';
import { sha256 } from '../../src/security/tokens';
import { tempDir } from '../support/sidecar';
import { ADMIN_TOKEN, HASHED_TOKEN, fixture, startSecuredSidecar, tokenFileText, writeTokenFile } from './support';
import * as fs from 'node:fs';

function config(define: Record<string, string>) {
  const dir = tempDir('blocklist-bind-');
  return loadConfig({ dynamic: { 'rest.port': '0', 'cluster.resource-blocklist.store.sqlite.path': path.join(dir, 'b.db'), ...define } });
}

/** GET over https with the given CA; resolves to the status or rejects with the TLS error. */
function httpsGet(url: string, ca: Buffer, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

describe('security: bind safety', () => {
  for (const host of ['0.0.0.0', '::', '10.1.2.3', 'myhost.example.com']) {
    it(`refuses ${host} without a token file, saying how to enable auth`, async () => {
      const c = config({ 'rest.bind-address': host });
      assert.throws(() => checkBindSafety(c.values), (e: unknown) => e instanceof ConfigError && /set rest\.auth\.tokens-file.*docs\/security\.md.*127\.0\.0\.1/.test(e.message));
      await assert.rejects(startSidecar({ config: c, logger: silentLogger }), /reachable from other machines, but no auth is configured/);
    });
  }

  it('accepts loopback without auth, and a non-loopback address once tokens are configured', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1']) checkBindSafety(config({ 'rest.bind-address': host }).values);
    checkBindSafety(config({ 'rest.bind-address': '0.0.0.0', 'rest.auth.tokens-file': '/etc/blocklist/tokens.yaml' }).values);
  });

  it('a broken token file stops start-up with the key named (no silent fallback to no auth)', async () => {
    const dir = tempDir();
    const f = writeTokenFile(dir, 'tokens:\n  "tooshort": { name: a, role: admin }\n');
    await assert.rejects(startSidecar({ config: config({ 'rest.auth.tokens-file': f }), logger: silentLogger }), (e: unknown) => e instanceof ConfigError && /rest\.auth\.tokens-file: .*shorter than 16/.test(e.message) && !e.message.includes('tooshort'));
    await assert.rejects(startSidecar({ config: config({ 'rest.auth.tokens-file': path.join(dir, 'nope.yaml') }), logger: silentLogger }), /cannot read it: ENOENT/);
  });

  it('secret configuration is masked when the configuration is printed', () => {
    const lines = describeConfig(config({ 'cluster.resource-blocklist.store.zookeeper.auth': 'zkuser:zkPa55word' })).join('\n');
    assert.ok(!lines.includes('zkPa55word'));
    assert.match(lines, /zookeeper\.auth: \*\*\*\*\*\*/);
  });
});

describe('security: TLS', () => {
  const ca = fs.readFileSync(fixture('ca.pem'));
  const otherCa = fs.readFileSync(fixture('other-ca.pem'));

  it('serves HTTPS with rest.ssl.key-file/cert-file; clients that trust another CA are refused', async () => {
    const dir = tempDir();
    const f = writeTokenFile(dir, tokenFileText(sha256(HASHED_TOKEN).toString('hex')));
    const s = await startSecuredSidecar({ 'rest.ssl.key-file': fixture('server.key'), 'rest.ssl.cert-file': fixture('server.pem'), 'rest.auth.tokens-file': f }, dir);
    try {
      assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(await httpsGet(`${s.url}/healthz`, ca), 200);
      assert.equal(await httpsGet(`${s.url}/blocklist`, ca), 401);
      assert.equal(await httpsGet(`${s.url}/blocklist`, ca, { authorization: `Bearer ${ADMIN_TOKEN}` }), 200);
      await assert.rejects(httpsGet(`${s.url}/healthz`, otherCa), /self[- ]signed|unable to (get|verify)|certificate/i);
      // Plain HTTP to the TLS port gets no API answer.
      await assert.rejects(fetch(`${s.url.replace('https', 'http')}/healthz`).then((r) => r.text()));
    } finally {
      await s.close();
    }
  });

  it('refuses a key without a certificate, a key that does not match, and a missing file', () => {
    assert.equal(loadServerTls('', ''), undefined);
    assert.throws(() => loadServerTls(fixture('server.key'), ''), /must be set together/);
    assert.throws(() => loadServerTls(fixture('server.key'), fixture('ca.pem')), /unusable/);
    assert.throws(() => loadServerTls(fixture('server.pem'), fixture('server.pem')), /no PEM private key/);
    assert.throws(() => loadServerTls('/nonexistent/key.pem', fixture('server.pem')), /cannot read .*ENOENT/);
  });

  it('the start-up refusal names the key and never prints key material', async () => {
    await assert.rejects(startSidecar({ config: config({ 'rest.ssl.key-file': fixture('server.key'), 'rest.ssl.cert-file': fixture('ca.pem') }), logger: silentLogger }), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /rest\.ssl\.key-file/);
      assert.ok(!e.message.includes('PRIVATE KEY'));
      return true;
    });
  });

  it('outgoing YARN calls: the CA-bundle agent trusts exactly the bundle', async () => {
    const server = https.createServer({ key: fs.readFileSync(fixture('server.key')), cert: fs.readFileSync(fixture('server.pem')) }, (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"clusterInfo":{"state":"STARTED"}}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/ws/v1/cluster/info`;
    try {
      const good = createYarnHttpsAgent(fixture('ca.pem'));
      assert.ok(good);
      const r = await axios.get(url, { httpsAgent: good, timeout: 5000 });
      assert.equal(r.status, 200);
      good.destroy();
      const other = createYarnHttpsAgent(fixture('other-ca.pem'));
      await assert.rejects(axios.get(url, { httpsAgent: other, timeout: 5000 }), /self[- ]signed|unable to (get|verify)|certificate/i);
      other?.destroy();
      assert.equal(createYarnHttpsAgent(''), undefined);
      assert.throws(() => createYarnHttpsAgent(fixture('README.md')), /holds no PEM certificate/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
