/**
 * GET /openapi.json says exactly what the server accepts and answers, checked the way a
 * schema-driven fuzzer checks it: for every operation of the document, requests are generated
 * from the document's own schemas (fast-check; test/support/schema-arbitrary.ts, with near
 * misses), judged valid or not against the same schemas (ajv), and sent (app.inject, memory
 * store). A request the document calls valid must not be refused as invalid (400), except by a
 * rule the document states in words (openapi-contract.ts NON_SCHEMA_RULES); one it calls invalid
 * must be a 400; every answer's status is one the operation documents, and its body matches the
 * documented schema; a method a path does not have is a 405 whose Allow lists the documented ones.
 * A route changed without its document (or the reverse) fails here.
 */
import { strict as assert } from 'node:assert';
import Ajv, { ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { NON_SCHEMA_RULES } from '../../src/api/openapi-contract';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';
import { parseTokenFile } from '../../src/security/tokens';
import { Schema, arbitraryOf } from '../support/schema-arbitrary';

interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  parameters?: Param[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const T0 = Date.UTC(2026, 0, 1);
/** Requests per operation (about 20 operations); BLOCKLIST_DRIFT_RUNS for a longer hunt. */
const RUNS = Number(process.env.BLOCKLIST_DRIFT_RUNS ?? 30);
const ADMIN = 'a-long-enough-admin-token-0123456789';
const VIEWER = 'a-long-enough-viewer-token-0123456789';
const KNOWN = { node: 'n1.example', taskmanager: 'n1.example/container_e01_1652313600000_0001_01_000002', rack: '/dc1/rack7' };

async function api(auth = false): Promise<FastifyInstance> {
  return buildApi({
    store: new MemoryStore(),
    sync: new NoSync(true),
    clock: new FakeClock(T0),
    logger: silentLogger,
    audit: new MemoryAudit(),
    enabled: true,
    ...(auth ? { auth: parseTokenFile(JSON.stringify({ tokens: { [ADMIN]: { name: 'ops', role: 'admin' }, [VIEWER]: { name: 'eyes', role: 'viewer' } } }), 'test') } : {}),
  });
}

describe('api: /openapi.json and the server agree (schema-generated requests)', function () {
  this.timeout(60_000);
  let app: FastifyInstance;
  let doc: Doc;
  let ajv: Ajv;
  const judges = new Map<Schema, ValidateFunction>();
  const judge = (s: Schema): ValidateFunction => {
    let v = judges.get(s);
    if (!v) judges.set(s, (v = ajv.compile(s)));
    return v;
  };
  const resolve = (ref: string): Schema => doc.components.schemas[ref.replace('#/components/schemas/', '')];

  before(async () => {
    app = await api();
    doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
    ajv = new Ajv({ strict: false, allErrors: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
  });
  after(() => app.close());

  /** Items the generated requests may address again: merges, conflicts, reads and deletes of something there. */
  const seed = async () => {
    const r = await app.inject({ method: 'POST', url: '/blocklist', payload: Object.values(KNOWN).map((id) => ({ id, action: 'MARK_BLOCKED', cause: 'seed', allowMerge: true })) });
    assert.equal(r.statusCode, 200, r.body);
  };
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

  it('every operation: valid requests are not refused as invalid, invalid ones are 400, statuses and bodies as documented', async () => {
    const problems: string[] = [];
    for (const { path, method, op } of operations()) {
      const params = op.parameters ?? [];
      const idParam = params.find((p) => p.in === 'path');
      const query = params.filter((p) => p.in === 'query');
      const bodySchema = op.requestBody?.content['application/json']?.schema;
      const kind = path.includes('/taskmanagers/') ? 'taskmanager' : path.includes('/racks/') ? 'rack' : 'node';
      const request = fc.record({
        id: idParam ? fc.oneof({ weight: 1, arbitrary: fc.constant(KNOWN[kind]) }, { weight: 4, arbitrary: arbitraryOf(idParam.schema, { resolve }) }) : fc.constant(undefined),
        query: fc.record(Object.fromEntries(query.map((q) => [q.name, arbitraryOf(q.schema, { resolve }).map(String)])), { requiredKeys: [] }),
        body: bodySchema ? arbitraryOf(bodySchema, { resolve }) : fc.constant(undefined),
      });
      await seed();
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const id = r.id === undefined ? undefined : String(r.id);
          const url = (id !== undefined ? path.replace('{id}', encodeURIComponent(id)) : path) + (Object.keys(r.query).length ? `?${new URLSearchParams(r.query as Record<string, string>).toString()}` : '');
          const why: string[] = [];
          if (idParam && id !== undefined && !judge(idParam.schema)(id)) why.push(`id ${JSON.stringify(id)}`);
          for (const q of query) if (q.name in r.query && !judge(q.schema)((r.query as Record<string, string>)[q.name])) why.push(`query ${q.name}`);
          if (bodySchema && !judge(bodySchema)(r.body)) why.push(`body ${ajv.errorsText(judge(bodySchema).errors)}`);
          const res = await app.inject({ method: method.toUpperCase() as 'GET', url, ...(bodySchema ? { payload: JSON.stringify(r.body), headers: { 'content-type': 'application/json' } } : {}) });
          const said = `${method.toUpperCase()} ${url.slice(0, 160)} ${bodySchema ? JSON.stringify(r.body)?.slice(0, 200) : ''} → ${res.statusCode} ${res.body.slice(0, 200)}`;
          const documented = op.responses[String(res.statusCode)];
          if (!documented) return void problems.push(`undocumented status: ${said}`);
          const schema = documented.content?.['application/json']?.schema;
          if (schema && res.headers['content-type']?.toString().startsWith('application/json') && !judge(schema)(res.json())) problems.push(`body not as documented (${ajv.errorsText(judge(schema).errors)}): ${said}`);
          if (why.length === 0 && res.statusCode === 400 && !stated(r.body, (res.json() as { errors: string[] }).errors)) problems.push(`valid by the document, refused: ${said}`);
          if (why.length > 0 && res.statusCode !== 400) problems.push(`invalid by the document (${why.join("; ")}), answered: ${said}${process.env.DRIFT_DEBUG ? JSON.stringify(r.body) : ""}`);
        }),
        { numRuns: RUNS, seed: Number(process.env.BLOCKLIST_DRIFT_SEED ?? 20261201) },
      );
    }
    assert.deepEqual(problems.slice(0, 12), [], `${problems.length} disagreement(s)`);
  });

  it('a method a path does not have is 405 with Allow naming the documented ones (HEAD with GET)', async () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      const url = path.replace('{id}', encodeURIComponent(path.includes('racks') ? KNOWN.rack : path.includes('taskmanagers') ? KNOWN.taskmanager : KNOWN.node));
      const documented = Object.keys(ops).map((m) => m.toUpperCase());
      const allow = [...documented, ...(documented.includes('GET') ? ['HEAD'] : [])].sort().join(', ');
      for (const m of ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'].filter((x) => !documented.includes(x))) {
        const res = await app.inject({ method: m as 'GET', url });
        assert.equal(res.statusCode, 405, `${m} ${url}: ${res.body}`);
        assert.equal(res.headers.allow, allow, `${m} ${url}`);
      }
    }
  });

  it('with tokens: the document adds 401 (and 403 for changes), and the server answers them', async () => {
    const secured = await api(true);
    try {
      const d = (await secured.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
      const anon = await secured.inject({ method: 'GET', url: '/status' });
      assert.equal(anon.statusCode, 401);
      assert.ok(d.paths['/status'].get.responses['401']);
      const viewer = await secured.inject({ method: 'PUT', url: '/blocklist/nodes/n2', payload: { action: 'MARK_BLOCKED', cause: 'x' }, headers: { authorization: `Bearer ${VIEWER}` } });
      assert.equal(viewer.statusCode, 403);
      assert.ok(d.paths['/blocklist/nodes/{id}'].put.responses['403']);
      assert.equal(d.paths['/healthz'].get.responses['401'], undefined, '/healthz opens without a token');
    } finally {
      await secured.close();
    }
  });
});

/** A 400 of a request the schemas call valid is fine only for a rule the document states in words. */
function stated(body: unknown, errors: string[]): boolean {
  const bodies = Array.isArray(body) ? body : [body];
  const fields = new Set(bodies.flatMap((b) => (b && typeof b === 'object' ? Object.keys(b) : [])));
  // A batch names the item first: "item 0 (<id>): …".
  const messages = errors.map((e) => e.replace(/^item \d+ \([^)]*\): /, ''));
  return messages.length > 0 && messages.every((e) => NON_SCHEMA_RULES.some((r) => fields.has(r.field) && r.message.test(e)));
}
