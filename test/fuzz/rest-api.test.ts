/**
 * Property-based requests against the REST API (fast-check), through fastify's whole request path
 * (inject: routing, hooks, body parsing, schema validation, handlers, serialisation) on a real
 * SQLite store, plus raw bytes to the real socket. Invariants:
 *  - never a 5xx, never a crash (the server still answers /healthz afterwards);
 *  - every 4xx carries {"errors":[…]} and leaves the store byte-identical (list() and version());
 *  - a dry run changes nothing;
 *  - every accepted item round-trips: GET returns what the write answered, and what was sent
 *    (action, trimmed cause, end) for a created item;
 *  - a 200 DELETE makes the item gone.
 * With auth on: random Authorization headers never get in and never change anything.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import fc from 'fast-check';
import { LONG_MAX_TEXT } from '../../src/model/item';
import { sha256 } from '../../src/security/tokens';
import { startTestSidecar, TestSidecar, tempDir } from '../support/sidecar';
import { ADMIN_TOKEN, HASHED_TOKEN, SecuredSidecar, startSecuredSidecar, tokenFileText, writeTokenFile } from '../security/support';
import { FuzzRequest, fuzzRequest } from './arbitraries';
import { count, printFigures } from './figures';

type Wire = Record<string, unknown>;
const PROJECTION = ['id', 'kind', 'action', 'startTimestamp', 'endTimestamp', 'cause', 'scope', 'evacuationTimeout', 'createdBy', 'createdAt', 'updatedBy', 'updatedAt'];
const project = (w: Wire) => Object.fromEntries(PROJECTION.filter((k) => w[k] !== undefined).map((k) => [k, w[k]]));

interface Sent {
  status: number;
  body: unknown;
  text: string;
}

async function send(s: TestSidecar | SecuredSidecar, r: FuzzRequest): Promise<Sent> {
  const res = await s.api.inject({ method: r.method, url: r.url, headers: r.headers, ...(r.payload !== undefined ? { payload: r.payload } : {}) });
  count('requests fuzzed');
  let body: unknown;
  try {
    body = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, body, text: res.body };
}

async function snapshot(s: TestSidecar | SecuredSidecar): Promise<string> {
  return `${await s.store.version()}|${JSON.stringify(await s.store.list())}`;
}

function assertErrorBody(r: FuzzRequest, res: Sent): void {
  if (r.method === 'HEAD') return;
  const errors = (res.body as { errors?: unknown } | undefined)?.errors;
  assert.ok(Array.isArray(errors) && errors.length > 0 && errors.every((e) => typeof e === 'string' && e.length > 0), `${r.method} ${r.url} → ${res.status} without an errors body: ${res.text.slice(0, 200)}`);
}

const itemPath = (id: string, kind: 'node' | 'taskmanager') => `/blocklist/${kind === 'node' ? 'nodes' : 'taskmanagers'}/${encodeURIComponent(id)}`;

async function getItem(s: TestSidecar, id: string, kind: 'node' | 'taskmanager'): Promise<Sent> {
  return send(s, { method: 'GET', url: itemPath(id, kind), headers: {} });
}

/** What a created item must say, given what the client sent. */
function checkAgainstInput(r: FuzzRequest, created: Wire): void {
  let input: Record<string, unknown>;
  try {
    input = JSON.parse(r.payload ?? '{}') as Record<string, unknown>;
  } catch {
    return;
  }
  if (Array.isArray(input)) return;
  assert.equal(created.action, input.action);
  assert.equal(created.cause, String(input.cause).trim());
  const end = input.endTimestamp ?? undefined;
  const timeout = input.timeout ?? undefined;
  if (end !== undefined && end !== null) assert.equal(created.endTimestamp, typeof end === 'string' ? end.trim() : Number(end) >= 2 ** 63 ? LONG_MAX_TEXT : String(end));
  else if (timeout !== undefined && timeout !== null) assert.equal(created.endTimestamp, String(Number(created.startTimestamp) + Number(timeout)));
  else assert.equal(created.endTimestamp, LONG_MAX_TEXT);
  assert.equal(created.scope, input.scope ?? 'cluster');
}

async function checkRoundTrip(s: TestSidecar, r: FuzzRequest, res: Sent): Promise<void> {
  if (res.status < 200 || res.status >= 300) return;
  const body = res.body as Wire | undefined;
  if (r.method === 'PUT' && (res.status === 201 || res.status === 202) && body && body.dryRun === undefined) {
    const kind = body.kind as 'node' | 'taskmanager';
    const got = await getItem(s, String(body.id), kind);
    assert.equal(got.status, 200, `accepted ${String(body.id)} is not readable: ${got.text}`);
    assert.deepEqual(project(got.body as Wire), project(body));
    if (r.id !== undefined) assert.equal(body.id, r.id);
    if (res.status === 201) checkAgainstInput(r, body);
    count('accepted items round-tripped');
  }
  if (r.method === 'POST' && res.status === 200 && body && body.dryRun === undefined) {
    // Items of one batch apply in order: an id named twice is compared with its last outcome.
    const last = new Map<string, Wire>();
    for (const x of (body.results ?? []) as Wire[]) last.set(String(x.id), x);
    for (const x of last.values()) {
      if (x.status !== 201 && x.status !== 202) continue;
      const item = x.item as Wire;
      const got = await getItem(s, String(item.id), item.kind as 'node' | 'taskmanager');
      assert.equal(got.status, 200, `batch-accepted ${String(item.id)} is not readable: ${got.text}`);
      assert.deepEqual(project(got.body as Wire), project(item));
      count('accepted items round-tripped');
    }
  }
  if (r.method === 'DELETE' && res.status === 200 && body && body.dryRun === undefined && r.id !== undefined && r.kind) {
    const got = await getItem(s, r.id, r.kind);
    assert.equal(got.status, 404, `deleted ${r.id} is still there`);
  }
}

describe('fuzz: REST API (fast-check)', function () {
  this.timeout(120_000);
  let s: TestSidecar;
  before(async () => {
    s = await startTestSidecar({ define: { 'rest.rate-limit.max-mutations': '0' } });
  });
  after(async () => {
    await s.close();
    printFigures('REST fuzz', ['requests fuzzed', 'accepted items round-tripped', '4xx with the store unchanged', 'raw socket payloads']);
  });

  it('random requests: never a 5xx; a 4xx or a dry run changes nothing; accepted items round-trip', async () => {
    const now = Date.now();
    await fc.assert(
      fc.asyncProperty(fuzzRequest(now), async (r) => {
        const before = await snapshot(s);
        const res = await send(s, r);
        assert.ok(res.status >= 200 && res.status < 500, `${r.method} ${r.url} ${r.payload?.slice(0, 200) ?? ''} → ${res.status}: ${res.text.slice(0, 300)}`);
        const dry = (res.body as Wire | undefined)?.dryRun !== undefined;
        if (res.status >= 400) {
          assertErrorBody(r, res);
          assert.equal(await snapshot(s), before, `${r.method} ${r.url} → ${res.status} changed the store`);
          count('4xx with the store unchanged');
        } else if (dry || r.method === 'GET' || r.method === 'HEAD') {
          assert.equal(await snapshot(s), before, `${r.method} ${r.url} (read or dry run) changed the store`);
        }
        await checkRoundTrip(s, r, res);
      }),
      // Fixed seed for a reproducible `npm test`; BLOCKLIST_FUZZ_SEED/RUNS explore further.
      { numRuns: Number(process.env.BLOCKLIST_FUZZ_RUNS ?? 1000), seed: Number(process.env.BLOCKLIST_FUZZ_SEED ?? 0x7e57), endOnFailure: true },
    );
  });

  it('raw bytes on the socket: the HTTP layer refuses them and the server keeps serving', async () => {
    const port = new URL(s.url).port;
    const payloads = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.tuple(fc.constantFrom('GET', 'PUT', 'POST', 'BREW', '', 'G\u0000T'), fc.string({ maxLength: 60 }), fc.constantFrom('HTTP/1.1', 'HTTP/9.9', 'HTTP/1.1\r\nContent-Length: -1', 'HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz', 'HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6', ''))
        .map(([m, p, v]) => Buffer.from(`${m} /${p} ${v}\r\nHost: x\r\n\r\n`, 'latin1')),
    );
    await fc.assert(
      fc.asyncProperty(payloads, async (bytes) => {
        const answer = await new Promise<string>((resolve) => {
          const sock = net.connect(Number(port), '127.0.0.1');
          let got = '';
          sock.setTimeout(2000, () => sock.destroy());
          sock.on('data', (d) => (got += d.toString('latin1')));
          sock.on('close', () => resolve(got));
          sock.on('error', () => undefined);
          sock.end(bytes);
        });
        count('raw socket payloads');
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1];
        if (status !== undefined) assert.ok(Number(status) < 500, `raw payload answered ${answer.slice(0, 200)}`);
      }),
      { numRuns: 60, seed: 0xb17e },
    );
    const health = await fetch(`${s.url}/healthz`);
    assert.equal(health.status, 200);
  });
});

describe('fuzz: REST API with auth (fast-check)', function () {
  this.timeout(30_000);
  let s: SecuredSidecar;
  before(async () => {
    const dir = tempDir('blocklist-fuzz-auth-');
    const f = writeTokenFile(dir, tokenFileText(sha256(HASHED_TOKEN).toString('hex')));
    s = await startSecuredSidecar({ 'rest.auth.tokens-file': f, 'rest.rate-limit.max-mutations': '0' }, dir);
  });
  after(async () => {
    await s.close();
    printFigures('auth fuzz', ['auth headers fuzzed']);
  });

  it('random Authorization headers (near misses included) never get in and never change anything', async () => {
    const nearMiss = fc.tuple(fc.nat({ max: ADMIN_TOKEN.length - 1 }), fc.string({ minLength: 1, maxLength: 1 })).map(([i, c]) => ADMIN_TOKEN.slice(0, i) + c + ADMIN_TOKEN.slice(i + 1)).filter((t) => t !== ADMIN_TOKEN);
    const header = fc.oneof(
      fc.string({ maxLength: 80 }),
      nearMiss.map((t) => `Bearer ${t}`),
      fc.constantFrom(`Bearer ${ADMIN_TOKEN} `, `Bearer  ${ADMIN_TOKEN}x`, `Bearer ${ADMIN_TOKEN.toUpperCase()}`, `Token ${ADMIN_TOKEN}`, `Bearer sha256:${sha256(HASHED_TOKEN).toString('hex')}`, `Bearer ${sha256(HASHED_TOKEN).toString('hex')}`, 'Bearer', 'Bearer ', `Basic ${ADMIN_TOKEN}`),
      fc.string({ unit: fc.constantFrom(...'ABab01-._~+/= '), maxLength: 60 }).map((t) => `Bearer ${t}`),
    );
    await fc.assert(
      fc.asyncProperty(header, fc.constantFrom('PUT', 'DELETE', 'GET'), async (h, method) => {
        const before = `${await s.store.version()}|${JSON.stringify(await s.store.list())}`;
        const res = await s.api.inject({ method, url: '/blocklist/nodes/fz1', headers: { authorization: h, 'content-type': 'application/json' }, ...(method === 'PUT' ? { payload: '{"action":"MARK_BLOCKED","cause":"x"}' } : {}) });
        count('auth headers fuzzed');
        // `Bearer <token> ` (one trailing space) is the right token: the header's surrounding space is not part of it.
        const isAdmin = h.trim() === `Bearer ${ADMIN_TOKEN}`;
        if (isAdmin) return;
        assert.equal(res.statusCode, 401, `${JSON.stringify(h)} → ${res.statusCode}`);
        assert.equal(`${await s.store.version()}|${JSON.stringify(await s.store.list())}`, before);
      }),
      { numRuns: 200, seed: 0xa11 },
    );
  });
});
