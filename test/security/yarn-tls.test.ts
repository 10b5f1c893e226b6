/**
 * Outgoing TLS: an https:// RM and AMRM proxy signed by a private CA are trusted with the
 * configured bundle (cluster.resource-blocklist.yarn.ssl.ca-file), and refused without it or with
 * another CA.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as https from 'node:https';
import { AddressInfo } from 'node:net';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { createYarnHttpsAgent } from '../../src/security/tls';
import { fixture } from './support';

describe('security: TLS to the RM and the AMRM proxy', () => {
  let server: https.Server;
  let base: string;
  before(async () => {
    server = https.createServer({ key: fs.readFileSync(fixture('server.key')), cert: fs.readFileSync(fixture('server.pem')) }, (req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/ws/v1/cluster/info')) res.end(JSON.stringify({ clusterInfo: { id: 1, state: 'STARTED', haState: 'ACTIVE', resourceManagerVersion: '3.3.6' } }));
      else if (req.url?.startsWith('/amrm/v1/blacklist')) res.end(JSON.stringify({ blacklist: ['node1'] }));
      else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('trusts the configured CA bundle for both clients', async () => {
    const httpsAgent = createYarnHttpsAgent(fixture('ca.pem'));
    assert.ok(httpsAgent);
    const rm = new ResourceManagerClient({ addresses: base, httpsAgent, timeoutMs: 3000 });
    assert.equal((await rm.clusterInfo()).haState, 'ACTIVE');
    const proxy = new AmrmProxyClient({ address: base, httpsAgent, timeoutMs: 3000 });
    assert.deepEqual((await proxy.blacklist()).blacklist, ['node1']);
  });

  it('refuses a server signed by another CA, and by a private CA without a bundle', async () => {
    const other = new ResourceManagerClient({ addresses: base, httpsAgent: createYarnHttpsAgent(fixture('other-ca.pem')), timeoutMs: 3000 });
    await assert.rejects(() => other.clusterInfo(), /certificate|self.signed|unable to verify/i);
    const none = new ResourceManagerClient({ addresses: base, timeoutMs: 3000 });
    await assert.rejects(() => none.clusterInfo(), /certificate|self.signed|unable to verify/i);
  });
});
