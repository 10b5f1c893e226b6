/**
 * The merge rules, as pure functions: causes never rewritten and bounded, a merge that
 * leaves no cause refused, scopes united, big endTimestamps refused unless exactly Long.MAX.
 */
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { MERGED_CAUSE_MAX, causeTokens, mergeCauses } from '../../src/model/cause';
import { decide } from '../../src/model/decide';
import { newItem } from '../../src/model/merge';
import { BlockedItem, MARK_BLOCKED, PERMANENT } from '../../src/model/item';
import { BlockSpec, parseBlockRequest } from '../../src/model/validate';
import { SCOPE_APPS_MAX, scopeCovers, scopeMatches, unionScopes } from '../../src/model/scope';
import { appliesTo } from '../../src/model/effective';

const T0 = 1_000_000;
const A1 = 'application_1652313600000_0001';
const A2 = 'application_1652313600000_0002';
const spec = (over: Partial<BlockSpec> = {}): BlockSpec => ({
  id: 'node1', kind: 'node', node: 'node1', action: MARK_BLOCKED, end: { type: 'at', at: T0 + 10_000_000 }, cause: 'a', scope: 'cluster', allowMerge: true, ...over,
});
const at = (t: number, over: Partial<BlockSpec> = {}): BlockedItem => newItem(spec(over), t, { by: 'alice', from: '127.0.0.1' });

describe('merge rules: causes', () => {
  const disk = 'No space left on device, /data1 full';

  it('a cause merged with itself stays byte-identical, and the merge is unchanged (same updatedAt)', () => {
    assert.equal(mergeCauses(disk, disk), disk);
    const old = at(T0, { cause: disk });
    const d = decide(old, { item: at(T0 + 60_000, { cause: disk }), allowMerge: true }, T0 + 60_000);
    assert.equal(d.outcome, 'unchanged');
    assert.equal(d.outcome === 'unchanged' && d.item.updated.at, T0);
  });

  it('tokens the item holds are compared trimmed, one by one: a reordered or re-spaced repeat adds nothing', () => {
    assert.equal(mergeCauses(disk, '/data1 full ,  No space left on device'), disk);
    assert.equal(mergeCauses('a, b', 'b,a,,'), 'a, b');
  });

  it('new tokens are appended after the stored text, which is never rewritten', () => {
    assert.equal(mergeCauses(disk, '/data2 full'), `${disk},/data2 full`);
    assert.equal(mergeCauses('a, b', 'c, a, d'), 'a, b,c,d');
    assert.equal(mergeCauses('a,b', 'c,a'), 'a,b,c');
  });

  it('a merged cause is bounded at 4096 characters; what does not fit is counted in …(+N more)', () => {
    let cause = 'first';
    for (let i = 0; i < 800; i++) cause = mergeCauses(cause, `cause ${i} ${'x'.repeat(1000)}`);
    assert.ok(cause.length <= MERGED_CAUSE_MAX, `length ${cause.length}`);
    assert.ok(cause.startsWith('first,cause 0 '));
    const m = /,…\(\+(\d+) more\)$/.exec(cause);
    assert.ok(m, cause.slice(-40));
    const kept = causeTokens(cause).length - 1;
    assert.equal(kept + Number(m[1]), 801, 'every cause is either kept or counted');
    // The stored text up to the summary is never rewritten by later merges.
    const body = cause.slice(0, cause.lastIndexOf(','));
    assert.ok(mergeCauses(cause, 'later').startsWith(`${body},`));
    // Once full, more causes only move the count; a kept one still adds nothing.
    assert.equal(mergeCauses(cause, 'first'), cause);
    assert.match(mergeCauses(cause, 'one more'), new RegExp(`…\\(\\+${Number(m[1]) + 1} more\\)$`));
  });

  it('any sequence of merges: never over the bound, never rewrites what was stored before the summary (fast-check)', () => {
    const token = fc.string({ minLength: 1, maxLength: 900 }).map((t) => t.replace(/[,\u0000-\u001f]/g, 'x').trim() || 'y');
    fc.assert(
      fc.property(fc.array(fc.array(token, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 40 }), (requests) => {
        let cause = requests[0].join(', ');
        for (const r of requests.slice(1)) {
          const next = mergeCauses(cause, r.join(','));
          assert.ok(next.length <= MERGED_CAUSE_MAX, `length ${next.length}`);
          const kept = /,…\(\+\d+ more\)$/.test(cause) ? cause.slice(0, cause.lastIndexOf(',')) : cause;
          assert.ok(next.startsWith(kept), 'stored text kept');
          cause = next;
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a merge whose result would have no cause at all is refused with code empty-cause', () => {
    const old = { ...at(T0), cause: ',' }; // stored before causes were checked for text
    const d = decide(old, { item: { ...at(T0 + 5), cause: ' , ' }, allowMerge: true }, T0 + 5);
    assert.equal(d.outcome === 'conflict' && d.conflict.code, 'empty-cause');
    // A cause with text replaces a stored cause without any.
    const ok = decide(old, { item: at(T0 + 5, { cause: 'disk' }), allowMerge: true }, T0 + 5);
    assert.equal(ok.outcome === 'merged' && ok.write.cause, 'disk');
  });

  it('a request cause without text is a 400 at validation already', () => {
    const r = parseBlockRequest({ id: 'n1', kind: 'node', node: 'n1' }, { action: MARK_BLOCKED, cause: ' , ,' }, T0);
    assert.ok(!r.ok && r.errors.some((e) => /cause must hold some text/.test(e)), JSON.stringify(r));
  });
});

describe('merge rules: scopes', () => {
  it('two applications merge into one scope naming both; cluster covers all', () => {
    assert.deepEqual(unionScopes(A1, A2), { ok: true, scope: `${A1},${A2}` });
    assert.deepEqual(unionScopes(`${A1},${A2}`, A1), { ok: true, scope: `${A1},${A2}` });
    assert.deepEqual(unionScopes(A1, 'cluster'), { ok: true, scope: 'cluster' });
    assert.deepEqual(unionScopes('cluster', A2), { ok: true, scope: 'cluster' });
    const d = decide(at(T0, { scope: A1 }), { item: at(T0 + 1, { scope: A2 }), allowMerge: true }, T0 + 1);
    assert.equal(d.outcome === 'merged' && d.write.scope, `${A1},${A2}`);
  });

  it('a merge that adds no job and no cause is unchanged', () => {
    const old = at(T0, { scope: `${A1},${A2}` });
    assert.equal(decide(old, { item: at(T0 + 1, { scope: A2 }), allowMerge: true }, T0 + 1).outcome, 'unchanged');
  });

  it('every reader handles a scope of several jobs: appliesTo, the ?scope= filter', () => {
    const both = at(T0, { scope: `${A1},${A2}` });
    assert.ok(appliesTo(both, A1) && appliesTo(both, A2));
    assert.ok(!appliesTo(both, 'application_1652313600000_0003') && !appliesTo(both, undefined));
    assert.ok(scopeCovers('cluster', undefined));
    assert.ok(scopeMatches(`${A1},${A2}`, A2) && !scopeMatches(`${A1},${A2}`, 'cluster') && scopeMatches('cluster', 'cluster'));
    assert.ok(!scopeCovers('application_1652313600000_00011', 'application_1652313600000_0001'), 'no prefix match');
  });

  it('a scope is bounded: past SCOPE_APPS_MAX jobs the merge is refused (scope-full), pointing to cluster', () => {
    const many = Array.from({ length: SCOPE_APPS_MAX }, (_, i) => `application_1652313600000_${String(i + 1).padStart(4, '0')}`).join(',');
    const u = unionScopes(many, 'application_1652313600000_9999');
    assert.ok(!u.ok && /cluster/.test(u.message));
  });

  it('the wire accepts the joined form (an export re-imports), normalised, and refuses junk in it', () => {
    const ok = parseBlockRequest({ id: 'n1', kind: 'node', node: 'n1' }, { action: MARK_BLOCKED, cause: 'x', scope: `${A1}, ${A2},${A1}` }, T0);
    assert.ok(ok.ok && ok.value.scope === `${A1},${A2}`);
    const bad = parseBlockRequest({ id: 'n1', kind: 'node', node: 'n1' }, { action: MARK_BLOCKED, cause: 'x', scope: `${A1},nope` }, T0);
    assert.ok(!bad.ok);
  });
});

describe('endTimestamp beyond 2^53', () => {
  const end = (endTimestamp: unknown) => parseBlockRequest({ id: 'n1', kind: 'node', node: 'n1' }, { action: MARK_BLOCKED, cause: 'x', endTimestamp }, T0);

  it('only the exact text 9223372036854775807 means permanent', () => {
    const r = end('9223372036854775807');
    assert.ok(r.ok && r.value.end.type === 'permanent');
  });

  for (const v of [1e300, 2 ** 63, 2 ** 64, 9007199254740993, '18446744073709551616', '1e300', '9.3e18', '9223372036854775808', '09223372036854775807']) {
    it(`${typeof v} ${String(v)} is a 400, never permanent`, () => {
      const r = end(v);
      assert.ok(!r.ok, JSON.stringify(r));
    });
  }

  it('a JS number at Long.MAX (already rounded by JSON.parse) is refused: the API parses losslessly instead', () => {
    const r = end(9223372036854775807);
    assert.ok(!r.ok && /beyond 2\^53/.test(r.errors.join()), JSON.stringify(r));
    assert.equal(PERMANENT, Infinity);
  });
});
