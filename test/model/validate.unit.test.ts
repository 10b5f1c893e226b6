import { strict as assert } from 'node:assert';
import { parseBlockRequest, parseItemRef, resolveEnd, ItemRef } from '../../src/model/validate';
import { applicationOfContainer, formatContainerId, parseApplicationId, parseAttemptId, parseContainerId, validateHostName } from '../../src/model/ids';
import { PERMANENT } from '../../src/model/item';

const node: ItemRef = { id: 'node1', kind: 'node', node: 'node1' };
const NOW = 1_652_313_600_000;

function errorsOf(body: unknown): string {
  const r = parseBlockRequest(node, body, NOW);
  assert.ok(!r.ok, 'expected a validation error');
  return r.errors.join('\n');
}

describe('model/ids', () => {
  it('accepts YARN host names and refuses *, ports, racks, blanks, control characters, overlong names', () => {
    for (const ok of ['node1', 'nm-12.prod.example.com', 'host_with_underscore', '10.0.0.7']) assert.ok(validateHostName(ok).ok, ok);
    const bad: [string, RegExp][] = [
      ['*', /Cannot add \* to the blacklist/],
      ['node1:8041', /has a port; use the host name 'node1'/],
      ['/default-rack', /rack/],
      ['', /empty/],
      ['a\tb', /control/],
      ['a'.repeat(256), /longer than 255/],
      ['-leading', /not a host name/],
      ['has space', /not a host name/],
      // Empty or malformed DNS labels (#31 minor: 'a..b' passed as a host name).
      ['a..b', /not a host name.*none empty/],
      ['a.-b', /not a host name/],
      ['trailing.', /not a host name/],
      ['.leading', /not a host name/],
      [`${'x'.repeat(64)}.example`, /each 1-63 long/],
    ];
    for (const [s, why] of bad) {
      const r = validateHostName(s);
      assert.ok(!r.ok, s);
      assert.match(r.error, why);
    }
  });

  it('parses container ids with and without the epoch, and round-trips them', () => {
    const a = parseContainerId('container_e17_1652313600000_0001_01_000002');
    assert.ok(a.ok);
    assert.deepEqual(a.value, { epoch: 17, application: { clusterTimestamp: '1652313600000', id: 1 }, attempt: 1, container: 2 });
    assert.equal(formatContainerId(a.value), 'container_e17_1652313600000_0001_01_000002');
    const b = parseContainerId('container_1652313600000_0042_02_1000001');
    assert.ok(b.ok);
    assert.equal(b.value.epoch, undefined);
    assert.equal(b.value.container, 1_000_001);
    for (const bad of ['container_1', 'container_e_1652313600000_0001_01_000002', 'application_1652313600000_0001', 'container_1652313600000_0001_01_000002 ', 'container1']) {
      assert.ok(!parseContainerId(bad).ok, bad);
    }
  });

  it('parses application and attempt ids strictly and finds the app of a container', () => {
    assert.ok(parseApplicationId('application_1652313600000_0001').ok);
    assert.ok(!parseApplicationId('application_1652313600000_1').ok);
    assert.ok(parseAttemptId('appattempt_1652313600000_0001_000001').ok);
    assert.ok(!parseAttemptId('appattempt_1652313600000_0001_01').ok);
    const app = applicationOfContainer('container_e01_1652313600000_0007_02_000001');
    assert.deepEqual(app, { ok: true, value: 'application_1652313600000_0007' });
  });

  it('tells node ids from task manager ids in a batch by their shape', () => {
    const n = parseItemRef('node1');
    assert.ok(n.ok && n.value.kind === 'node');
    const t = parseItemRef('node1/container_e01_1652313600000_0001_01_000002');
    assert.ok(t.ok && t.value.kind === 'taskmanager' && t.value.node === 'node1' && t.value.containerId === 'container_e01_1652313600000_0001_01_000002');
    const bad = parseItemRef('node1/not-a-container');
    assert.ok(!bad.ok);
    assert.match(bad.errors.join(), /not a YARN container id/);
    const tmWithoutSlash = parseItemRef('node1', 'taskmanager');
    assert.ok(!tmWithoutSlash.ok);
    assert.match(tmWithoutSlash.errors.join(), /<node>\/<containerId>/);
  });
});

describe('model/validate: block requests', () => {
  it('accepts FLIP-224\'s string-valued body and a numeric one alike', () => {
    const a = parseBlockRequest(node, { action: 'MARK_BLOCKED', endTimestamp: '1652317200000', cause: 'Hot machine', allowMerge: 'true' }, NOW);
    const b = parseBlockRequest(node, { action: 'MARK_BLOCKED', endTimestamp: 1652317200000, cause: 'Hot machine', allowMerge: true }, NOW);
    assert.ok(a.ok && b.ok);
    assert.deepEqual(a.value, b.value);
    assert.deepEqual(a.value.end, { type: 'at', at: 1652317200000 });
    assert.equal(a.value.allowMerge, true);
  });

  it('timeout is relative, endTimestamp absolute, neither permanent; both is an error', () => {
    const t = parseBlockRequest(node, { action: 'MARK_BLOCKED', cause: 'x', timeout: '3600000' }, NOW);
    assert.ok(t.ok);
    assert.equal(resolveEnd(t.value.end, NOW), NOW + 3_600_000);
    const p = parseBlockRequest(node, { action: 'MARK_BLOCKED', cause: 'x' }, NOW);
    assert.ok(p.ok);
    assert.equal(resolveEnd(p.value.end, NOW), PERMANENT);
    assert.match(errorsOf({ action: 'MARK_BLOCKED', cause: 'x', timeout: 1, endTimestamp: NOW + 5 }), /either timeout or endTimestamp, not both/);
  });

  it('durations with a unit are taken for both fields; a bare number only one reading can mean is refused, naming both', () => {
    const spec = (body: Record<string, unknown>) => {
      const r = parseBlockRequest(node, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'x', ...body }, NOW);
      assert.ok(r.ok, JSON.stringify(body) + (r.ok ? '' : r.errors.join('; ')));
      return r.value;
    };
    assert.deepEqual(spec({ timeout: '10 min' }).end, { type: 'after', ms: 600_000 });
    assert.deepEqual(spec({ timeout: '2h' }).end, { type: 'after', ms: 7_200_000 });
    assert.deepEqual(spec({ timeout: '600 ms' }).end, { type: 'after', ms: 600 }, 'an explicit unit is meant');
    assert.deepEqual(spec({ timeout: 1000 }).end, { type: 'after', ms: 1000 });
    assert.equal(spec({ evacuationTimeout: '90 s' }).evacuationTimeout, 90);
    assert.equal(spec({ evacuationTimeout: '10 min' }).evacuationTimeout, 600);
    assert.equal(spec({ evacuationTimeout: '2 d' }).evacuationTimeout, 172_800);
    assert.equal(spec({ evacuationTimeout: '600000 ms' }).evacuationTimeout, 600);
    assert.equal(spec({ evacuationTimeout: 'forever' }).evacuationTimeout, -1);
    assert.equal(spec({ evacuationTimeout: '-1 s' }).evacuationTimeout, -1);
    assert.equal(spec({ evacuationTimeout: 86_400 }).evacuationTimeout, 86_400, 'a bare day is still seconds');
    assert.equal(spec({ evacuationTimeout: '6' }).evacuationTimeout, 6);
    assert.match(errorsOf({ action: 'MARK_BLOCKED', cause: 'x', timeout: 600 }), /timeout 600 is milliseconds \(a block of under a second\)/);
    assert.match(errorsOf({ action: 'MARK_BLOCKED', cause: 'x', timeout: '0 s' }), /timeout must be a positive/);
    assert.match(errorsOf({ action: 'MARK_BLOCKED', cause: 'x', evacuationTimeout: 86_401 }), /a bare number above 86400 \(a day\) needs a unit/);
    assert.match(errorsOf({ action: 'MARK_BLOCKED', cause: 'x', evacuationTimeout: '1500 ms' }), /must be whole seconds/);
  });

  it('inclusive: an endTimestamp equal to now is already over', () => {
    assert.match(errorsOf({ action: 'MARK_BLOCKED', cause: 'x', endTimestamp: NOW }), /not in the future/);
    assert.ok(parseBlockRequest(node, { action: 'MARK_BLOCKED', cause: 'x', endTimestamp: NOW + 1 }, NOW).ok);
  });

  it('names every problem at once', () => {
    const e = errorsOf({ action: 'BLOCK', cause: '', timeout: -3, allowMerge: 'maybe', scope: 'x', extra: 1 });
    for (const want of [/unknown field 'extra'/, /action must be/, /cause must not be empty/, /timeout must be a positive/, /allowMerge must be true or false/, /scope must be/]) assert.match(e, want);
  });

  it('trims the cause and keeps it bounded; evacuationTimeout negative means forever (-1)', () => {
    const r = parseBlockRequest(node, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: '  disk full  ', evacuationTimeout: '-30' }, NOW);
    assert.ok(r.ok);
    assert.equal(r.value.cause, 'disk full');
    assert.equal(r.value.evacuationTimeout, -1);
    assert.match(errorsOf({ action: 'MARK_BLOCKED', cause: 'x'.repeat(1025) }), /longer than 1024/);
  });
});
