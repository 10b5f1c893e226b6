/**
 * Bad input gets a clear 4xx and changes nothing; never a 5xx.
 */
import { strict as assert } from 'node:assert';
import { http, startTestSidecar, TestSidecar } from '../support/sidecar';

const cases: { name: string; method: string; path: string; body?: unknown; headers?: Record<string, string>; status: number; message: RegExp }[] = [
  { name: 'malformed JSON', method: 'PUT', path: '/blocklist/nodes/n1', body: '{"action": "MARK_BLOCKED", "cause": ', status: 400, message: /not valid JSON/ },
  { name: 'a JSON array instead of an object', method: 'PUT', path: '/blocklist/nodes/n1', body: [1], status: 400, message: /object/ },
  { name: 'cause of the wrong type', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 42 }, status: 400, message: /cause must be string/ },
  { name: 'endTimestamp of the wrong type', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', endTimestamp: { a: 1 } }, status: 400, message: /endTimestamp/ },
  { name: 'an unknown action', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'NUKE', cause: 'x' }, status: 400, message: /action must be one of MARK_BLOCKED/ },
  { name: 'a missing cause', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED' }, status: 400, message: /cause is required/ },
  { name: 'a blank cause', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: '   ' }, status: 400, message: /cause must not be empty/ },
  { name: 'a cause with a newline', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'a\nb' }, status: 400, message: /control characters/ },
  { name: 'an unknown field', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', mergeOnConflict: true }, status: 400, message: /unknown field 'mergeOnConflict'/ },
  { name: 'an absurd endTimestamp', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', endTimestamp: '99999999999999999' }, status: 400, message: /beyond year 9999/ },
  { name: 'a negative endTimestamp', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', endTimestamp: -5 }, status: 400, message: /positive/ },
  { name: 'a fractional timeout', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', timeout: 1.5 }, status: 400, message: /timeout/ },
  { name: 'a zero timeout', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', timeout: 0 }, status: 400, message: /positive/ },
  { name: 'a timeout of letters', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', timeout: 'an hour' }, status: 400, message: /timeout must be milliseconds .*or a duration with a unit \('10 min', '2h'\)/ },
  { name: 'a timeout in an unknown unit', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', timeout: '2 weeks' }, status: 400, message: /timeout '2 weeks' has an unknown time unit/ },
  { name: 'a bare timeout under a second (seconds sent as ms)', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', timeout: 600 }, status: 400, message: /timeout 600 is milliseconds .*'600 s'/ },
  { name: 'a bare evacuationTimeout over a day (ms sent as seconds)', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'x', evacuationTimeout: 600000 }, status: 400, message: /evacuationTimeout 600000 is seconds \(6\.9 days\): if you meant milliseconds send '600000 ms'/ },
  { name: 'an evacuationTimeout of letters', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'x', evacuationTimeout: 'soon' }, status: 400, message: /evacuationTimeout must be whole seconds/ },
  { name: 'allowMerge of the wrong type', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', allowMerge: 'yes' }, status: 400, message: /allowMerge/ },
  { name: 'a bad scope', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', scope: 'app-1' }, status: 400, message: /scope must be 'cluster' or a YARN application id/ },
  { name: 'a huge evacuationTimeout', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x', evacuationTimeout: 1e12 }, status: 400, message: /evacuationTimeout/ },
  { name: 'an oversized body', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x'.repeat(2_000_000) }, status: 413, message: /larger than the limit/ },
  { name: 'a cause longer than the limit', method: 'PUT', path: '/blocklist/nodes/n1', body: { action: 'MARK_BLOCKED', cause: 'x'.repeat(1500) }, status: 400, message: /longer than 1024/ },
  { name: 'a non-JSON content type', method: 'PUT', path: '/blocklist/nodes/n1', body: 'action=MARK_BLOCKED', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, message: /unsupported content type/ },
  { name: 'a batch that is not an array', method: 'POST', path: '/blocklist', body: { id: 'n1', action: 'MARK_BLOCKED', cause: 'x' }, status: 400, message: /must be array/ },
  { name: 'a batch item without id', method: 'POST', path: '/blocklist', body: [{ action: 'MARK_BLOCKED', cause: 'x' }], status: 400, message: /id is required/ },
  { name: 'an unknown query parameter', method: 'PUT', path: '/blocklist/nodes/n1?force=1', body: { action: 'MARK_BLOCKED', cause: 'x' }, status: 400, message: /unknown field 'force'/ },
  { name: 'a very long id', method: 'PUT', path: `/blocklist/nodes/${'a'.repeat(300)}`, body: { action: 'MARK_BLOCKED', cause: 'x' }, status: 400, message: /longer than 255/ },
  { name: 'a rack path as an id', method: 'DELETE', path: '/blocklist/nodes/%2Frack1', status: 400, message: /rack/ },
];

describe('REST API: bad input', () => {
  let s: TestSidecar;
  before(async () => {
    s = await startTestSidecar();
    await http(s.url, 'PUT', '/blocklist/nodes/existing', { action: 'MARK_BLOCKED', cause: 'x' });
  });
  after(() => s.close());

  for (const c of cases) {
    it(`${c.name} → ${c.status} naming the problem; the store is unchanged`, async () => {
      const before = await s.store.list();
      const v = await s.store.version();
      const r = await http(s.url, c.method, c.path, c.body, c.headers);
      assert.equal(r.status, c.status, r.text);
      const errors = (r.body as { errors?: string[] }).errors;
      assert.ok(Array.isArray(errors) && errors.length > 0, r.text);
      assert.match(errors.join('\n'), c.message);
      assert.equal(await s.store.version(), v);
      assert.deepEqual(await s.store.list(), before);
    });
  }
});
