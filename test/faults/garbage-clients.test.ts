/**
 * The YARN clients against an HTTP server that answers whatever fast-check makes up (any status,
 * any content type, JSON of the right shape with wrong values, JSON of the wrong shape, non-JSON,
 * truncated bodies): every call either returns well-typed, validated data or rejects with a
 * YarnCallError — never a TypeError, never an unhandled rejection, never a hang.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { YarnCallError } from '../../src/yarn/types';
import { validateHostName, parseContainerId } from '../../src/model/ids';
import { count, printFigures } from '../fuzz/figures';

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const APP = 'application_1652313600000_0001';
const ATTEMPT = 'appattempt_1652313600000_0001_000001';

const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom('*', '/rack', 'node1:8041', 'RUNNING', 'LOST', APP, ATTEMPT, 'container_e01_1652313600000_0001_01_000002', 'node1'));
const node = fc.record({ id: scalar, nodeHostName: scalar, state: scalar, rack: scalar, numContainers: scalar }, { requiredKeys: [] });
const container = fc.record({ containerId: scalar, nodeId: scalar, assignedNodeId: scalar, state: scalar, containerState: scalar }, { requiredKeys: [] });
const shaped = fc.oneof(
  fc.record({ blacklist: fc.oneof(fc.array(scalar, { maxLength: 4 }), scalar), owners: fc.oneof(scalar, fc.dictionary(fc.constantFrom('blocklist', 'am'), fc.oneof(fc.array(scalar, { maxLength: 3 }), scalar))) }, { requiredKeys: ['blacklist'] }),
  fc.record({ containers: fc.array(fc.record({ seq: scalar, containerId: scalar, nodeId: scalar, exitStatus: scalar, diagnostics: scalar, finishedAt: scalar }, { requiredKeys: [] }), { maxLength: 3 }), next: scalar }, { requiredKeys: [] }),
  fc.record({ applicationId: scalar, appAttemptId: scalar, registered: scalar }),
  fc.record({ containers: fc.oneof(fc.array(fc.oneof(container, scalar), { maxLength: 3 }), scalar, fc.record({ container: fc.oneof(fc.array(container, { maxLength: 3 }), container, scalar) })) }),
  fc.record({ container: fc.oneof(fc.array(container, { maxLength: 3 }), container, scalar) }),
  fc.record({ released: fc.oneof(fc.array(scalar, { maxLength: 3 }), scalar), unknown: fc.oneof(fc.array(scalar, { maxLength: 3 }), scalar) }),
  fc.record({ nodes: fc.oneof(scalar, fc.record({ node: fc.oneof(fc.array(fc.oneof(node, scalar), { maxLength: 3 }), node, scalar) })) }),
  fc.record({ clusterInfo: fc.oneof(scalar, fc.record({ state: scalar, haState: scalar, id: scalar }, { requiredKeys: [] })) }),
  fc.record({ app: fc.oneof(scalar, fc.record({ id: fc.oneof(scalar, fc.constant(APP)), state: scalar, currentAppAttemptId: scalar }, { requiredKeys: [] })) }),
  fc.record({ appAttempts: fc.oneof(scalar, fc.record({ appAttempt: fc.oneof(fc.array(fc.record({ id: scalar, appAttemptId: scalar, containerId: scalar, blacklistedNodes: scalar }, { requiredKeys: [] }), { maxLength: 3 }), scalar) })) }),
  fc.record({ RemoteException: fc.record({ exception: scalar, message: scalar }, { requiredKeys: [] }) }),
  fc.record({ errors: fc.oneof(fc.array(scalar, { maxLength: 2 }), scalar) }),
);
const answer: fc.Arbitrary<Answer> = fc.record({
  status: fc.constantFrom(200, 200, 200, 200, 201, 204, 301, 307, 400, 404, 500, 503),
  contentType: fc.constantFrom('application/json', 'text/html', 'text/plain', ''),
  body: fc.oneof(
    { weight: 6, arbitrary: shaped.map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: shaped.map((v) => JSON.stringify(v)).chain((s) => fc.nat({ max: Math.max(0, s.length - 1) }).map((n) => s.slice(0, n))) },
    { weight: 1, arbitrary: fc.string({ maxLength: 80 }) },
  ),
});

type Call = [string, (rm: ResourceManagerClient, proxy: AmrmProxyClient) => Promise<unknown>, (v: unknown) => void];

const isStrings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
const CALLS: Call[] = [
  ['proxy.attempt', (_r, p) => p.attempt(), (v) => assert.equal(typeof (v as { registered: unknown }).registered, 'boolean')],
  ['proxy.blacklist', (_r, p) => p.blacklist(), (v) => {
    const b = v as { blacklist: unknown; owners: Record<string, unknown> };
    assert.ok(isStrings(b.blacklist));
    for (const hosts of Object.values(b.owners)) assert.ok(isStrings(hosts));
  }],
  ['proxy.updateBlacklist', (_r, p) => p.updateBlacklist({ additions: ['node1'], removals: [] }, 'am'), (v) => assert.ok(v === undefined || (typeof (v as { etag: unknown }).etag === 'string' && typeof (v as { previousEtag: unknown }).previousEtag === 'string'))],
  ['proxy.completedContainers', (_r, p) => p.completedContainers(3), (v) => {
    const page = v as { containers: { seq: unknown; containerId: string; exitStatus: unknown }[]; next: unknown };
    assert.ok(Number.isSafeInteger(page.next));
    for (const c of page.containers) {
      assert.ok(parseContainerId(c.containerId).ok);
      assert.ok(Number.isSafeInteger(c.seq) && Number.isInteger(c.exitStatus));
    }
  }],
  ['proxy.containers', (_r, p) => p.containers(), (v) => (v as { containerId: string }[]).forEach((c) => assert.ok(parseContainerId(c.containerId).ok))],
  ['proxy.release', (_r, p) => p.release(['container_e01_1652313600000_0001_01_000002']), (v) => assert.ok(isStrings((v as { released: unknown }).released) && isStrings((v as { unknown: unknown }).unknown))],
  ['rm.clusterInfo', (r) => r.clusterInfo(), (v) => assert.equal(typeof (v as { state: unknown }).state, 'string')],
  ['rm.nodes', (r) => r.nodes(), (v) => (v as { host: string }[]).forEach((n) => assert.ok(validateHostName(n.host).ok, n.host))],
  ['rm.application', (r) => r.application(APP), (v) => assert.equal((v as { id: string }).id, APP)],
  ['rm.attempts', (r) => r.attempts(APP), (v) => assert.ok(Array.isArray(v))],
  ['rm.containers', (r) => r.containers(APP, ATTEMPT), (v) => (v as { containerId: string; host: string }[]).forEach((c) => assert.ok(parseContainerId(c.containerId).ok && validateHostName(c.host).ok))],
];

describe('faults: YARN clients against a server answering garbage (fast-check)', function () {
  this.timeout(30_000);
  let server: http.Server;
  let current: Answer = { status: 200, contentType: 'application/json', body: '{}' };
  let rm: ResourceManagerClient;
  let proxy: AmrmProxyClient;
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      const headers: Record<string, string> = current.contentType ? { 'content-type': current.contentType } : {};
      // A redirect to itself: the client must bound the hops.
      if (current.status >= 300 && current.status < 400) headers.location = req.url ?? '/';
      res.writeHead(current.status, headers);
      res.end(current.status === 204 ? undefined : current.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    rm = new ResourceManagerClient({ addresses: url, timeoutMs: 2000 });
    proxy = new AmrmProxyClient({ address: url, timeoutMs: 2000 });
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    printFigures('garbage YARN answers', ['garbage YARN answers']);
  });

  it('every client call: validated data or a YarnCallError, nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(answer, fc.constantFrom(...CALLS), async (a, [name, call, check]) => {
        current = a;
        count('garbage YARN answers');
        let value: unknown;
        try {
          value = await call(rm, proxy);
        } catch (e) {
          assert.ok(e instanceof YarnCallError, `${name} on ${JSON.stringify(a).slice(0, 200)} threw ${String(e)}`);
          return;
        }
        check(value);
      }),
      { numRuns: Number(process.env.BLOCKLIST_FUZZ_RUNS ?? 500), seed: Number(process.env.BLOCKLIST_FUZZ_SEED ?? 0x6a7b) },
    );
  });
});
