/**
 * The RM's node list fetched by the worker thread (off-thread.ts fetchNodes): the worker makes the
 * HTTP request with the headers the client chose (Authorization, ?user.name=), and the client's
 * own rules still hold — HA order, a standby's 307, 401 → fresh login, timeouts, TLS with the
 * configured CA only, clear errors for bodies that are not a node list. Real HTTP servers on
 * loopback; the Kerberos path itself is tested against a real KDC in test/kerberos/spnego-rm.test.ts.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { AddressInfo } from 'node:net';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { RmAuthenticator } from '../../src/yarn/rm-auth';
import { parsingWorkerRunning, stopParsingWorker } from '../../src/yarn/off-thread';
import { YarnCallError } from '../../src/yarn/types';
import { startSimulator } from '../../src/sim/server';
import { createYarnHttpsAgent } from '../../src/security/tls';
import { fixture as tlsFixture } from '../security/support';

interface Seen {
  url: string;
  authorization?: string;
}

interface Rm {
  url: string;
  seen: Seen[];
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const NODES = JSON.stringify({
  nodes: {
    node: [
      { id: 'n1.example.com:8041', nodeHostName: 'n1.example.com', rack: '/r1', state: 'RUNNING', nodeHTTPAddress: 'n1.example.com:8042', healthReport: '', numContainers: 2 },
      { id: 'n2.example.com:8041', nodeHostName: 'n2.example.com', rack: '/r2', state: 'UNHEALTHY', nodeHTTPAddress: 'n2.example.com:8042', healthReport: 'disk full', numContainers: 0 },
    ],
  },
});

function record(seen: Seen[], handler: Handler): Handler {
  return (req, res) => {
    seen.push({ url: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    handler(req, res);
  };
}

async function listen(server: http.Server | https.Server, scheme: string, seen: Seen[]): Promise<Rm> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function rm(handler: Handler): Promise<Rm> {
  const seen: Seen[] = [];
  return listen(http.createServer(record(seen, handler)), 'http', seen);
}

const json = (status: number, body: string, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
};

async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** An authenticator for the header's path only: a fixed token per host, every answer accepted. */
class HeaderAuth implements RmAuthenticator {
  readonly principal = 'sidecar@TEST';
  logins = 0;
  servicePrincipal(host: string): string {
    return `HTTP/${host}@TEST`;
  }
  async authorize(host: string) {
    return { header: `Negotiate token-for-${host}-${this.logins}`, verify: async () => undefined };
  }
  async relogin(): Promise<void> {
    this.logins++;
  }
}

async function rejectsWith(p: Promise<unknown>, re: RegExp): Promise<YarnCallError> {
  let caught: unknown;
  await p.then(
    () => assert.fail(`expected a rejection matching ${re}`),
    (e: unknown) => {
      caught = e;
    },
  );
  assert.ok(caught instanceof YarnCallError, `a YarnCallError, not ${String(caught)}`);
  assert.match(caught.message, re);
  return caught;
}

describe('RM node list fetched by the worker thread', () => {
  const open: Rm[] = [];
  const server = async (h: Handler): Promise<Rm> => {
    const s = await rm(h);
    open.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  after(() => stopParsingWorker());

  it('reads the same nodes as the client parsing on the event loop, from the real simulator', async () => {
    const sim = await startSimulator({ port: 0, nodes: 1500, containers: 10, tickMs: 0, seed: 5 });
    try {
      const worker = await new ResourceManagerClient({ addresses: sim.rmUrl }).nodes();
      const here = await new ResourceManagerClient({ addresses: sim.rmUrl, offThread: false }).nodes();
      assert.equal(worker.length, 1500);
      assert.deepEqual(worker, here);
      const running = await new ResourceManagerClient({ addresses: sim.rmUrl }).nodes(['RUNNING']);
      assert.equal(running.length, sim.cluster.nodes.filter((n) => n.state === 'RUNNING').length);
    } finally {
      await sim.close();
    }
  });

  it("a small cluster's list is read on the event loop after the first read, and the worker (its own heap) is stopped; a big one keeps it", async () => {
    const small = await server(json(200, NODES));
    const client = new ResourceManagerClient({ addresses: small.url });
    assert.equal((await client.nodes()).length, 2);
    assert.equal(parsingWorkerRunning(), false, 'stopped after a small answer');
    assert.equal((await client.nodes()).length, 2);
    assert.equal(parsingWorkerRunning(), false, 'not started again for the next small read');
    const sim = await startSimulator({ port: 0, nodes: 1500, containers: 10, tickMs: 0, seed: 6 });
    try {
      const big = new ResourceManagerClient({ addresses: sim.rmUrl });
      assert.equal((await big.nodes()).length, 1500);
      assert.equal(parsingWorkerRunning(), true, 'a big list keeps the worker');
    } finally {
      await sim.close();
    }
  });

  it('a cluster the RM counts as small (cluster metrics) is read on the event loop from the first read: no worker starts', async () => {
    await stopParsingWorker();
    const small = await server((req, res) =>
      req.url?.startsWith('/ws/v1/cluster/metrics')
        ? json(200, JSON.stringify({ clusterMetrics: { activeNodes: 2, decommissioningNodes: 0, decommissionedNodes: 0, lostNodes: 0, unhealthyNodes: 1, rebootedNodes: 0, shutdownNodes: 0, totalNodes: 3 } }))(req, res)
        : json(200, NODES)(req, res),
    );
    const client = new ResourceManagerClient({ addresses: small.url });
    await client.clusterMetrics();
    assert.equal((await client.nodes()).length, 2);
    assert.equal(parsingWorkerRunning(), false);
  });

  it("sends the authenticator's header and ?user.name=, follows a standby's 307 with a header for the active RM", async () => {
    const active = await server(json(200, NODES));
    const standby = await server(json(307, '', { location: `${active.url}/ws/v1/cluster/nodes?user.name=flink` }));
    const client = new ResourceManagerClient({ addresses: [standby.url, active.url], user: 'flink', auth: new HeaderAuth() });
    const nodes = await client.nodes();
    assert.deepEqual(
      nodes.map((n) => [n.host, n.state, n.rack, n.numContainers, n.healthReport]),
      [
        ['n1.example.com', 'RUNNING', '/r1', 2, ''],
        ['n2.example.com', 'UNHEALTHY', '/r2', 0, 'disk full'],
      ],
    );
    assert.deepEqual(standby.seen, [{ url: '/ws/v1/cluster/nodes?user.name=flink', authorization: 'Negotiate token-for-127.0.0.1-0' }]);
    assert.deepEqual(active.seen, [{ url: '/ws/v1/cluster/nodes?user.name=flink', authorization: 'Negotiate token-for-127.0.0.1-0' }]);
    assert.equal(client.activeAddress, active.url, 'the RM that answered is asked first next time');
  });

  it('a 401 Negotiate is retried once after a fresh login; a second one is reported', async () => {
    let calls = 0;
    const flaky = await server((req, res) => {
      calls++;
      if (calls === 1) json(401, 'ticket expired', { 'www-authenticate': 'Negotiate' })(req, res);
      else json(200, NODES)(req, res);
    });
    const auth = new HeaderAuth();
    assert.equal((await new ResourceManagerClient({ addresses: flaky.url, auth }).nodes()).length, 2);
    assert.equal(auth.logins, 1);
    assert.deepEqual(
      flaky.seen.map((s) => s.authorization),
      ['Negotiate token-for-127.0.0.1-0', 'Negotiate token-for-127.0.0.1-1'],
    );
    const refusing = await server(json(401, 'go away', { 'www-authenticate': 'Negotiate' }));
    const e = await rejectsWith(new ResourceManagerClient({ addresses: refusing.url, auth: new HeaderAuth() }).nodes(), /401 from .*refused the SPNEGO ticket.*RM said: go away/);
    assert.equal(e.status, 401);
  });

  it('an answer that is not a node list is a clear, retriable error: not JSON, the wrong shape, a RemoteException', async () => {
    const html = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Proxy error: the RM is restarting</body></html>');
    });
    const e1 = await rejectsWith(new ResourceManagerClient({ addresses: html.url }).nodes(), /GET \/ws\/v1\/cluster\/nodes: 200 but the body is not JSON: <html><body>Proxy error: the RM is restarting/);
    assert.equal(e1.retriable, true);
    const wrong = await server(json(200, JSON.stringify({ nodes: { node: [{ id: 'x:1', nodeHostName: 'x', rack: '/r', state: 'ASLEEP' }] } })));
    await rejectsWith(new ResourceManagerClient({ addresses: wrong.url }).nodes(), /RM answered nodes with an unusable body: .*state 'ASLEEP'/);
    const missing = await server(json(500, JSON.stringify({ RemoteException: { exception: 'WebApplicationException', message: 'java.lang.Exception: scheduler not ready', javaClassName: 'javax.ws.rs.WebApplicationException' } })));
    const e3 = await rejectsWith(new ResourceManagerClient({ addresses: missing.url }).nodes(), /GET \/ws\/v1\/cluster\/nodes: 500 WebApplicationException: scheduler not ready/);
    assert.equal(e3.status, 500);
  });

  it('a silent RM times out and the next one of the HA list answers; a refused connection moves on too; all dead names each', async () => {
    const silent = await server(() => undefined);
    const good = await server(json(200, NODES));
    await rejectsWith(new ResourceManagerClient({ addresses: silent.url, timeoutMs: 150 }).nodes(), /no (complete )?answer from .* within 150 ms/);
    assert.equal((await new ResourceManagerClient({ addresses: [silent.url, good.url], timeoutMs: 150 }).nodes()).length, 2);
    const dead = await deadPort();
    const ha = new ResourceManagerClient({ addresses: [`127.0.0.1:${dead}`, good.url] });
    assert.equal((await ha.nodes()).length, 2);
    assert.equal(ha.activeAddress, good.url);
    const dead2 = await deadPort();
    const e = await rejectsWith(new ResourceManagerClient({ addresses: [`127.0.0.1:${dead}`, `127.0.0.1:${dead2}`] }).nodes(), /no ResourceManager reachable for GET \/ws\/v1\/cluster\/nodes/);
    assert.ok(e.message.includes(`127.0.0.1:${dead}/`) && e.message.includes(`127.0.0.1:${dead2}/`) && /ECONNREFUSED/.test(e.message), e.message);
  });

  it('https: trusts the configured CA bundle only, as the event-loop client does', async () => {
    const seen: Seen[] = [];
    const tls = await listen(https.createServer({ key: fs.readFileSync(tlsFixture('server.key')), cert: fs.readFileSync(tlsFixture('server.pem')) }, record(seen, json(200, NODES))), 'https', seen);
    open.push(tls);
    assert.equal((await new ResourceManagerClient({ addresses: tls.url, httpsAgent: createYarnHttpsAgent(tlsFixture('ca.pem')), timeoutMs: 3000 }).nodes()).length, 2);
    await rejectsWith(new ResourceManagerClient({ addresses: tls.url, httpsAgent: createYarnHttpsAgent(tlsFixture('other-ca.pem')), timeoutMs: 3000 }).nodes(), /certificate|self.signed|unable to verify/i);
    await rejectsWith(new ResourceManagerClient({ addresses: tls.url, timeoutMs: 3000 }).nodes(), /certificate|self.signed|unable to verify/i);
  });
});
