/**
 * fast-check generators of REST requests: mostly plausible (so the fuzzer reaches the store and
 * the round-trip checks) with a steady share of hostile values (wrong types, control and
 * non-ASCII characters, oversize fields, YARN's '*', rack paths, host:port, odd encodings).
 */
import fc from 'fast-check';
import { LONG_MAX_TEXT } from '../../src/model/item';

const HOST_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_';

/** Mostly a small set of names, so writes meet earlier ones (merges, conflicts, deletes that hit). */
export const validHost = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 15 }).map((n) => `node${n}`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('node', 'nm', 'h', 'worker-', 'r1.n'), fc.integer({ min: 0, max: 40 }), fc.constantFrom('', '.example.com', '-a', '_b')).map(([a, n, b]) => `${a}${n}${b}`) },
);

export const containerId = fc
  .tuple(fc.option(fc.integer({ min: 0, max: 99 }), { nil: undefined }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 1, max: 20 }))
  .map(([epoch, app, att, c]) => `container_${epoch === undefined ? '' : `e${String(epoch).padStart(2, '0')}_`}1652313600000_${String(app).padStart(4, '0')}_${String(att).padStart(2, '0')}_${String(c).padStart(6, '0')}`);

const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: fc.constantFrom(...'\u0000\u0001\n\r\t\u007f \u00e9\u200b\ud83d\ude00/\\:*%?#&=+'), maxLength: 12 }),
  fc.constantFrom('*', '/rack1', '/default-rack/node1', 'node1:8041', '', ' ', '..', '.', '-a', 'a-', '%2F', '%00', 'node1%2Fcontainer_1', 'a'.repeat(256), 'a'.repeat(255)),
);

export const hostish = fc.oneof({ weight: 6, arbitrary: validHost }, { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...HOST_CHARS), minLength: 1, maxLength: 20 }) }, { weight: 2, arbitrary: hostileText });

/** An id for /blocklist/{nodes|taskmanagers}/{id} or a batch item. */
export const idish = fc.oneof(
  { weight: 4, arbitrary: hostish },
  { weight: 3, arbitrary: fc.tuple(validHost, containerId).map(([h, c]) => `${h}/${c}`) },
  { weight: 1, arbitrary: fc.tuple(hostish, hostileText).map(([h, c]) => `${h}/${c}`) },
);

/**
 * encodeURIComponent that survives lone surrogates (it throws on them): they become the bytes of
 * an encoded surrogate, %ED%A0%80, which is invalid UTF-8 — exactly the kind of input to fuzz with.
 */
export function encodeLoose(s: string): string {
  return s.replace(/[\ud800-\udbff][\udc00-\udfff]|[\s\S]/g, (c) => (c.length === 1 && c >= '\ud800' && c <= '\udfff' ? '%ED%A0%80' : encodeURIComponent(c)));
}

/** How an id is put into a URL path: encoded (the client's job), raw, or double-encoded. */
export const encodeId = (id: string, how: 'enc' | 'raw' | 'double'): string =>
  how === 'enc'
    ? encodeLoose(id)
    : how === 'double'
      ? encodeURIComponent(encodeLoose(id))
      : id.replace(/[\ud800-\udbff][\udc00-\udfff]|[\s?#%\u0000-\u001f\u007f-\uffff]/g, (c) => encodeLoose(c));

const anyJson = fc.jsonValue({ maxDepth: 2 });

/** A timestamp the model accepts as "in the future", in any of its accepted spellings. */
const futureEnd = (now: number) =>
  fc.oneof(
    fc.integer({ min: 600_000, max: 10 * 365 * 24 * 3600_000 }).map((d) => now + d),
    fc.integer({ min: 600_000, max: 10 * 365 * 24 * 3600_000 }).map((d) => String(now + d)),
    fc.constant(LONG_MAX_TEXT),
  );

const field = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 8, arbitrary: good as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: anyJson as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: hostileText as fc.Arbitrary<unknown> });

/** A body the model accepts (the round-trip checks need many of these). */
function validBody(now: number): fc.Arbitrary<Record<string, unknown>> {
  const end = fc.oneof(
    fc.constant({}),
    futureEnd(now).map((endTimestamp) => ({ endTimestamp })),
    fc.oneof(fc.integer({ min: 600_000, max: 10 ** 10 }), fc.integer({ min: 600_000, max: 10 ** 10 }).map(String)).map((timeout) => ({ timeout })),
  );
  const optional = fc.record(
    {
      allowMerge: fc.constantFrom(true, false, 'true', 'false'),
      evacuationTimeout: fc.oneof(fc.integer({ min: -5, max: 86_400 }), fc.integer({ min: 0, max: 1000 }).map(String), fc.integer({ min: 0, max: 1000 }).map((m) => `${m} min`)),
      scope: fc.constantFrom('cluster', 'application_1652313600000_0001', 'application_1652313600000_0002'),
    },
    { requiredKeys: [] },
  );
  const cause = fc.oneof(fc.string({ unit: fc.constantFrom(...'abc xyz,;:-_.()#0123456789\u00e9\u4e2d'), minLength: 1, maxLength: 30 }), fc.constantFrom('disk full', '  padded  ', 'a,b', 'x'.repeat(1024)));
  return fc
    .tuple(fc.constantFrom('MARK_BLOCKED', 'MARK_BLOCKED_AND_EVACUATE_TASKS'), cause, end, optional)
    .filter(([, c]) => c.trim() !== '')
    .map(([action, c, e, o]) => ({ action, cause: c, ...e, ...o }));
}

/** Any field may be missing, of the wrong type, hostile, or unknown. */
function hostileBody(now: number): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      action: field(fc.constantFrom('MARK_BLOCKED', 'MARK_BLOCKED_AND_EVACUATE_TASKS')),
      cause: field(fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.constantFrom('x'.repeat(1025), 'a\nb', '\u0000'))),
      endTimestamp: field(fc.oneof(futureEnd(now), fc.constantFrom(0, -1, now - 1, '99999999999999999999', '1e3', 1.5, '0x10'))),
      timeout: field(fc.oneof(fc.integer({ min: -10, max: 10 ** 13 }), fc.constantFrom('1h', '', ' 5 '))),
      allowMerge: field(fc.constantFrom(true, false, 'true', 'false', 'yes', 1)),
      evacuationTimeout: field(fc.oneof(fc.integer(), fc.double(), fc.constant('-1'))),
      scope: field(fc.constantFrom('cluster', 'application_1652313600000_0001', 'app-1', 'CLUSTER')),
      junk: anyJson,
    },
    { requiredKeys: [] },
  );
}

/** A block request body (one PUT, or one batch item without its id). */
export function blockBody(now: number): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof({ weight: 3, arbitrary: validBody(now) }, { weight: 2, arbitrary: hostileBody(now) });
}

export type Method = 'GET' | 'PUT' | 'DELETE' | 'POST' | 'PATCH' | 'HEAD' | 'OPTIONS';

export interface FuzzRequest {
  method: Method;
  /** The path and query as sent. */
  url: string;
  /** The decoded id the URL addresses, when it is an item URL. */
  id?: string;
  kind?: 'node' | 'taskmanager';
  payload?: string;
  headers: Record<string, string>;
}

const query = fc.oneof(
  { weight: 14, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constantFrom('?dryRun=true', '?dryRun=false', '?dryRun', '?dryRun=yes', '?dryRun=true&dryRun=false', '?kind=node', '?kind=taskmanager&scope=cluster', '?action=MARK_BLOCKED', '?force=1', '?%zz', '?a[b]=c', '?__proto__=x', '?constructor[prototype][x]=1') },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ unit: fc.constantFrom(...'abkdrynRuns_[]'), minLength: 1, maxLength: 8 }), fc.string({ maxLength: 10 }), { maxKeys: 3 }).map((d) => '?' + new URLSearchParams(d).toString()) },
);

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'APPLICATION/JSON', 'multipart/form-data; boundary=x', '') },
);

const extraHeaders = fc.dictionary(
  fc.constantFrom('x-forwarded-for', 'x-request-id', 'accept', 'accept-encoding', 'user-agent', 'x-custom', 'origin', 'cookie', 'authorization'),
  fc.string({ unit: fc.constantFrom(...'abcXYZ019 ,;=/.:-_*"\'()<>@'), maxLength: 40 }),
  { maxKeys: 3 },
);

/** A JSON text, or (now and then) something that is not JSON or not what the endpoint wants. */
function payloadOf(value: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 18, arbitrary: value.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '[]', 'null', '"x"', '{"action":', '{"__proto__":{"x":1},"action":"MARK_BLOCKED","cause":"p"}', '{"constructor":{"prototype":{}}}', '\u0000', '{"a":1}'.repeat(3)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  );
}

export function fuzzRequest(now: number): fc.Arbitrary<FuzzRequest> {
  const body = blockBody(now);
  const validTm = fc.tuple(validHost, containerId).map(([h, c]) => `${h}/${c}`);
  const target = fc.oneof(
    { weight: 5, arbitrary: fc.tuple(fc.constant('nodes'), fc.oneof({ weight: 4, arbitrary: validHost }, { weight: 1, arbitrary: idish })) },
    { weight: 3, arbitrary: fc.tuple(fc.constant('taskmanagers'), fc.oneof({ weight: 4, arbitrary: validTm }, { weight: 1, arbitrary: idish })) },
    { weight: 1, arbitrary: fc.tuple(fc.constant('node'), idish) },
  );
  const itemReq = fc
    .tuple(fc.constantFrom<Method>('PUT', 'PUT', 'PUT', 'PUT', 'GET', 'DELETE', 'DELETE', 'PATCH', 'POST'), target, fc.constantFrom<'enc' | 'raw' | 'double'>('enc', 'enc', 'enc', 'raw', 'double'), query, payloadOf(body), contentType, extraHeaders)
    .map(([method, [kindPath, id], how, q, payload, ct, extra]): FuzzRequest => {
      const r: FuzzRequest = { method, url: `/blocklist/${kindPath}/${encodeId(id, how)}${q}`, headers: { ...extra } };
      if (how === 'enc') {
        r.id = id;
        r.kind = kindPath === 'taskmanagers' ? 'taskmanager' : 'node';
      }
      if (method === 'PUT' || method === 'POST' || method === 'PATCH') {
        r.payload = payload;
        if (ct) r.headers['content-type'] = ct;
      }
      return r;
    });
  // The batch is validated whole: one bad item refuses it all, so most items here are good ones.
  const batchItem = fc.oneof(
    { weight: 12, arbitrary: fc.tuple(fc.oneof(validHost, fc.tuple(validHost, containerId).map(([h, c]) => `${h}/${c}`)), validBody(now)).map(([id, b]) => ({ id, ...b })) },
    { weight: 1, arbitrary: fc.tuple(idish, body).map(([id, b]) => ({ id, ...b })) },
  );
  const batchReq = fc
    .tuple(fc.array(fc.oneof({ weight: 9, arbitrary: batchItem as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: anyJson as fc.Arbitrary<unknown> }), { maxLength: 6 }), query, contentType, extraHeaders)
    .chain(([items, q, ct, extra]) =>
      payloadOf(fc.constant(items)).map((payload): FuzzRequest => ({ method: 'POST', url: `/blocklist${q}`, payload, headers: { ...extra, ...(ct ? { 'content-type': ct } : {}) } })),
    );
  const listReq = fc.tuple(fc.constantFrom<Method>('GET', 'GET', 'HEAD', 'DELETE', 'PUT'), fc.constantFrom('/blocklist', '/blocklist/', '/status', '/healthz', '/readyz', '/metrics', '/blocklist/nodes', '/blocklist/nodes/', '/blocklist/taskmanagers/', '//blocklist', '/BLOCKLIST'), query).map(
    ([method, p, q]): FuzzRequest => ({ method, url: p + q, headers: {} }),
  );
  return fc.oneof({ weight: 6, arbitrary: itemReq }, { weight: 3, arbitrary: batchReq }, { weight: 1, arbitrary: listReq });
}
