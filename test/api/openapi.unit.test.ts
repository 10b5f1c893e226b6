/**
 * GET /openapi.json: the OpenAPI 3 document generated from the routes' own schemas, checked by a
 * real validator (@seriousme/openapi-schema-validator: the OpenAPI 3.0 JSON schema plus $ref
 * resolution), and against what the server really answers (app.inject on a memory store).
 */
import { strict as assert } from 'node:assert';
import Ajv from 'ajv';
import type { Validator as ValidatorType } from '@seriousme/openapi-schema-validator' with { 'resolution-mode': 'import' };
import { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { operationId, openApiPath } from '../../src/api/openapi';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';
import { parseTokenFile } from '../../src/security/tokens';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; parameters?: { name: string; in: string }[]; requestBody?: unknown }>>;
  components: { schemas: Record<string, object> };
  security?: unknown[];
};

describe('api: GET /openapi.json (generated from the route schemas)', () => {
  let app: FastifyInstance;
  let doc: Doc;
  // The validator is an ES module; this suite is compiled to CommonJS, so it is loaded by import().
  let Validator: typeof ValidatorType;
  type Spec = Parameters<ValidatorType['validate']>[0];

  before(async () => {
    ({ Validator } = await import('@seriousme/openapi-schema-validator'));
    app = await buildApi({ store: new MemoryStore(), sync: new NoSync(true), clock: new FakeClock(1_000_000), logger: silentLogger, audit: new MemoryAudit(), enabled: true });
    const r = await app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(r.statusCode, 200, r.body);
    doc = r.json() as Doc;
  });
  after(() => app.close());

  it('is a valid OpenAPI 3 document (real validator, references resolved)', async () => {
    assert.match(doc.openapi, /^3\.0\./);
    const v = new Validator();
    const res = await v.validate(doc as unknown as Spec);
    assert.ok(res.valid, JSON.stringify(res.errors, null, 1));
    // A document with a dangling reference is refused: the check can fail.
    const broken = JSON.parse(JSON.stringify(doc)) as Doc;
    delete broken.components.schemas.item;
    assert.equal((await new Validator().validate(broken as unknown as Spec)).valid, false);
  });

  it('names every API path with bindable parameters and an operationId; the console is left out', () => {
    const paths = Object.keys(doc.paths);
    for (const p of ['/blocklist', '/blocklist/nodes/{id}', '/blocklist/taskmanagers/{id}', '/blocklist/node/{id}', '/status', '/healthz', '/readyz', '/metrics', '/openapi.json']) assert.ok(paths.includes(p), `${p} in ${paths.join(' ')}`);
    assert.ok(!paths.some((p) => p === '/' || p.startsWith('/ui')), 'console files are not API');
    assert.ok(!paths.some((p) => p.includes('*')), 'no wildcard left in a path');
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
    assert.ok(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id)), ids.join(' '));
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    const put = doc.paths['/blocklist/nodes/{id}'].put;
    assert.deepEqual(put.parameters?.filter((p) => p.in === 'path').map((p) => p.name), ['id']);
    assert.ok(doc.paths['/blocklist'].get.parameters?.some((p) => p.name === 'appliesTo'), 'the list filters are documented');
    assert.equal(operationId('PUT', '/blocklist/nodes/*'), 'putBlocklistNodes');
    assert.equal(openApiPath('/blocklist/taskmanagers/*'), '/blocklist/taskmanagers/{id}');
  });

  it("the shared schemas are components under their own names, and real answers match them", async () => {
    for (const name of ['item', 'error', 'blockBody']) assert.ok(doc.components.schemas[name], name);
    const put = await app.inject({ method: 'PUT', url: '/blocklist/nodes/n1', payload: { action: 'MARK_BLOCKED', cause: 'disk', source: 'exclude-file:/etc/x' } });
    assert.equal(put.statusCode, 201, put.body);
    const ajv = new Ajv({ strict: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
    const item = ajv.getSchema('#/components/schemas/item');
    const got = (await app.inject({ method: 'GET', url: '/blocklist/nodes/n1' })).json() as Record<string, unknown>;
    assert.ok(item?.(got), JSON.stringify(item?.errors));
    assert.equal(got.source, 'exclude-file:/etc/x');
    const bad = await app.inject({ method: 'PUT', url: '/blocklist/nodes/n1', payload: { action: 'NOPE', cause: 'x' } });
    assert.equal(bad.statusCode, 400);
    assert.ok(ajv.getSchema('#/components/schemas/error')?.(bad.json()));
  });

  it('with tokens configured it says every call needs a bearer token but /healthz and itself, which open without one', async () => {
    const tokens = parseTokenFile(JSON.stringify({ tokens: { 'a-long-enough-admin-token-0123456789': { name: 'ops', role: 'admin' } } }), 'test');
    const secured = await buildApi({ store: new MemoryStore(), sync: new NoSync(true), clock: new FakeClock(1_000_000), logger: silentLogger, audit: new MemoryAudit(), enabled: true, auth: tokens });
    try {
      const r = await secured.inject({ method: 'GET', url: '/openapi.json' });
      assert.equal(r.statusCode, 200, 'served without a token');
      const d = r.json() as Doc;
      assert.deepEqual(d.security, [{ bearer: [] }]);
      assert.deepEqual(d.paths['/healthz'].get.security, []);
      assert.equal((await secured.inject({ method: 'GET', url: '/blocklist' })).statusCode, 401);
    } finally {
      await secured.close();
    }
  });
});
