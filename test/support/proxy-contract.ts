/**
 * The AMRM proxy contract (docs/amrm-proxy.openapi.yaml) run against a server: every path's
 * methods (405 with Allow for the others), valid requests answered as documented (status, schema,
 * headers), refused ones with a documented status and the error body, the `after` rules, the body
 * bound, and the secret where the server requires one. What differs from the document is returned
 * as findings, so a test that a route and its document agree is one assertion.
 */
import Ajv, { ValidateFunction } from 'ajv';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { repoRoot } from './paths';

export interface ProxyUnderTest {
  base: string;
  /** The bearer secret the server requires (the interceptor); undefined where it requires none (the simulator). */
  secret?: string;
  /** A live container the server holds; the check releases it. */
  liveContainer: string;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

interface ResponseDoc {
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: { 'application/json'?: { schema?: unknown } };
}

type Operations = Record<string, { responses: Record<string, ResponseDoc> }>;

interface ContractDoc {
  paths: Record<string, Operations>;
  components: { responses: Record<string, ResponseDoc> };
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'];
const MIB = 1 << 20;

export function loadContract(): ContractDoc {
  return YAML.parse(fs.readFileSync(path.join(repoRoot, 'docs', 'amrm-proxy.openapi.yaml'), 'utf8')) as ContractDoc;
}

/** JSON pointer of a path inside the document ('/' and '~' escaped). */
const pointer = (...parts: string[]): string => '#/' + parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

class Checker {
  readonly findings: string[] = [];
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly doc: ContractDoc,
    private readonly p: ProxyUnderTest,
  ) {
    this.ajv.addSchema(doc as object, 'doc');
  }

  /** `secret`: the server's (default), another one, or null for none. */
  async call(method: string, route: string, body?: unknown, headers: Record<string, string> = {}, secret: string | null = this.p.secret ?? null): Promise<Answer> {
    const h: Record<string, string> = { ...headers };
    if (secret !== null) h.authorization = `Bearer ${secret}`;
    const init: RequestInit = { method, headers: h };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] = 'application/json';
    }
    const res = await fetch(this.p.base + route, init);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  private responseDoc(r: ResponseDoc): ResponseDoc {
    return r.$ref ? this.doc.components.responses[r.$ref.split('/').pop()!] : r;
  }

  /** The answer is one the document gives this operation: its status, its body's schema, its headers. */
  expect(what: string, docPath: string, method: string, a: Answer, status: number): void {
    if (a.status !== status) {
      this.findings.push(`${what}: ${a.status} (expected ${status}) ${a.text.slice(0, 160)}`);
      return;
    }
    const op = this.doc.paths[docPath]?.[method.toLowerCase()];
    const resp = op?.responses[String(status)];
    if (!resp) {
      this.findings.push(`${what}: ${status} is not documented for ${method} ${docPath}`);
      return;
    }
    const r = this.responseDoc(resp);
    for (const h of Object.keys(r.headers ?? {})) {
      if (!a.headers.has(h)) this.findings.push(`${what}: documented header ${h} missing`);
    }
    if (r.content?.['application/json']?.schema === undefined) {
      if (a.text !== '') this.findings.push(`${what}: a body where the document gives none`);
      return;
    }
    const ref = resp.$ref
      ? pointer('components', 'responses', resp.$ref.split('/').pop()!, 'content', 'application/json', 'schema')
      : pointer('paths', docPath, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema');
    this.validate(what, ref, a.body);
  }

  private validate(what: string, ref: string, body: unknown): void {
    let v = this.validators.get(ref);
    if (!v) {
      v = this.ajv.compile({ $ref: `doc${ref}` });
      this.validators.set(ref, v);
    }
    if (!v(body)) this.findings.push(`${what}: body ${JSON.stringify(body)?.slice(0, 160)} against ${ref}: ${this.ajv.errorsText(v.errors)}`);
  }

  errorsBody(what: string, a: Answer): void {
    this.validate(what, pointer('components', 'schemas', 'Errors'), a.body);
  }
}

/** Methods: each path answers its documented ones, and 405 naming them (Allow) for every other. */
async function checkMethods(c: Checker, doc: ContractDoc): Promise<void> {
  for (const [docPath, ops] of Object.entries(doc.paths)) {
    const documented = Object.keys(ops).map((m) => m.toUpperCase());
    for (const m of METHODS.filter((x) => !documented.includes(x))) {
      const a = await c.call(m, docPath);
      if (a.status !== 405) {
        c.findings.push(`${m} ${docPath}: ${a.status}, not 405`);
        continue;
      }
      const allow = (a.headers.get('allow') ?? '').split(',').map((x) => x.trim()).filter(Boolean).sort();
      if (allow.join(',') !== [...documented].sort().join(',')) c.findings.push(`${m} ${docPath}: Allow '${a.headers.get('allow')}', document has ${documented.join(', ')}`);
      if (m !== 'HEAD') c.errorsBody(`${m} ${docPath}`, a);
    }
  }
  const unknown = await c.call('GET', '/amrm/v1/nope');
  if (unknown.status !== 404) c.findings.push(`GET /amrm/v1/nope: ${unknown.status}, not 404`);
  else c.errorsBody('GET /amrm/v1/nope', unknown);
}

const BL = '/amrm/v1/blacklist';
const REL = '/amrm/v1/containers/release';
const DONE = '/amrm/v1/completed-containers';

/** Valid requests: the documented 200 (and 304), schema and headers. */
async function checkAnswers(c: Checker, p: ProxyUnderTest): Promise<void> {
  for (const route of ['/amrm/v1/attempt', '/amrm/v1/containers', BL, DONE, `${DONE}?after=0`]) {
    c.expect(`GET ${route}`, route.split('?')[0], 'GET', await c.call('GET', route), 200);
  }
  c.expect(`POST ${BL}`, BL, 'POST', await c.call('POST', BL, { blacklistAdditions: ['contract.example'] }), 200);
  c.expect(`POST ${BL} (minimal)`, BL, 'POST', await c.call('POST', BL, { blacklistRemovals: ['contract.example'] }, { prefer: 'return=minimal' }), 200);
  const tag = (await c.call('GET', BL)).headers.get('etag') ?? '';
  c.expect(`GET ${BL} If-None-Match`, BL, 'GET', await c.call('GET', BL, undefined, { 'if-none-match': tag }), 304);
  c.expect(`POST ${REL} (none)`, REL, 'POST', await c.call('POST', REL, { containerIds: [] }), 200);
  const rel = await c.call('POST', REL, { containerIds: [p.liveContainer] });
  c.expect(`POST ${REL}`, REL, 'POST', rel, 200);
  if (JSON.stringify((rel.body as { released?: unknown })?.released) !== JSON.stringify([p.liveContainer])) c.findings.push(`POST ${REL}: ${rel.text} did not release ${p.liveContainer}`);
  // An `after` above the newest seq is answered from the start of the ring.
  const whole = await c.call('GET', `${DONE}?after=0`);
  const beyond = await c.call('GET', `${DONE}?after=999999999999999`);
  c.expect(`GET ${DONE}?after=max`, DONE, 'GET', beyond, 200);
  const ids = (a: Answer): string => JSON.stringify((a.body as { containers?: { containerId: string }[] })?.containers?.map((x) => x.containerId));
  if (ids(whole) !== ids(beyond)) c.findings.push(`GET ${DONE}?after=max: ${ids(beyond)}, not the whole ring ${ids(whole)}`);
}

/** Refused requests: 400 documented for the operation, with the error body; nothing about them is a 5xx. */
async function checkRefusals(c: Checker): Promise<void> {
  const bad: [string, string, unknown][] = [
    ['POST', BL, '{nope'], ['POST', BL, '[]'], ['POST', BL, { blacklistAdditions: 'x' }], ['POST', BL, { blacklistAdditions: ['*'] }],
    ['POST', BL, { blacklistAdditions: [''] }], ['POST', BL, { blacklistAdditions: ['a b'] }], ['POST', BL, { blacklistRemovals: ['h'.repeat(256)] }],
    ['POST', BL, { owner: 'bad owner' }], ['POST', BL, { owner: 5 }],
    ['POST', REL, {}], ['POST', REL, { containerIds: ['x'] }], ['POST', REL, { containerIds: 'x' }], ['POST', REL, '[]'],
  ];
  for (const [m, route, body] of bad) {
    const a = await c.call(m, route, body);
    c.expect(`${m} ${route} ${JSON.stringify(body).slice(0, 40)}`, route, m, a, 400);
  }
  for (const q of ['after=-1', 'after=abc', 'after=1.5', 'after=', 'after=1234567890123456', 'after=1&after=2']) {
    c.expect(`GET ${DONE}?${q}`, DONE, 'GET', await c.call('GET', `${DONE}?${q}`), 400);
  }
  const big = JSON.stringify({ blacklistAdditions: ['x'.repeat(MIB)] });
  c.expect(`POST ${BL} (over 1 MiB)`, BL, 'POST', await c.call('POST', BL, big), 413);
}

/** Without the secret every operation is 401, with WWW-Authenticate. */
async function checkSecret(c: Checker, doc: ContractDoc): Promise<void> {
  for (const [docPath, ops] of Object.entries(doc.paths)) {
    for (const m of Object.keys(ops)) {
      const method = m.toUpperCase();
      const body = method === 'POST' ? {} : undefined;
      c.expect(`${method} ${docPath} without the secret`, docPath, method, await c.call(method, docPath, body, {}, null), 401);
      c.expect(`${method} ${docPath} with a wrong secret`, docPath, method, await c.call(method, docPath, body, {}, 'f'.repeat(64)), 401);
    }
  }
}

/** Every difference between the server and the document, as readable lines (none: they agree). */
export async function contractFindings(p: ProxyUnderTest): Promise<string[]> {
  const doc = loadContract();
  const c = new Checker(doc, p);
  await checkMethods(c, doc);
  await checkAnswers(c, p);
  await checkRefusals(c);
  if (p.secret !== undefined) await checkSecret(c, doc);
  return c.findings;
}
