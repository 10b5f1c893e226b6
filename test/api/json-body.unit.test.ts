import { strict as assert } from 'node:assert';
import { quoteInexactNumbers } from '../../src/api/json-body';
import { NUMBER_TEXT_MARK as M, parseBlockRequest } from '../../src/model/validate';

describe('api/json-body: numbers a JS number cannot hold reach the handlers as their own text', () => {
  const parse = (t: string): unknown => JSON.parse(quoteInexactNumbers(t));

  it('keeps Long.MAX, 2^64 and 1e300 as the literal the client sent', () => {
    assert.deepEqual(parse('{"endTimestamp":9223372036854775807}'), { endTimestamp: `${M}9223372036854775807` });
    assert.deepEqual(parse('[18446744073709551616, -9007199254740993, 1e300, 9.3E18]'), [`${M}18446744073709551616`, `${M}-9007199254740993`, `${M}1e300`, `${M}9.3E18`]);
  });

  it('a time field takes such a literal for the number it is; a text field does not take it for a string', () => {
    const ref = { id: 'n1', kind: 'node' as const, node: 'n1' };
    const now = 1_000_000;
    const spec = (body: string) => parseBlockRequest(ref, JSON.parse(quoteInexactNumbers(body)), now);
    const permanent = spec('{"action":"MARK_BLOCKED","cause":"x","endTimestamp":9223372036854775807}');
    assert.ok(permanent.ok && permanent.value.end.type === 'permanent');
    for (const [field, body] of [
      ['cause', '{"action":"MARK_BLOCKED","cause":1e300}'],
      ['source', '{"action":"MARK_BLOCKED","cause":"x","source":18446744073709551616}'],
      ['scope', '{"action":"MARK_BLOCKED","cause":"x","scope":1e300}'],
    ]) {
      const r = spec(body);
      assert.ok(!r.ok && r.errors.some((e) => e.startsWith(`${field} must be`)), `${field}: ${JSON.stringify(r)}`);
    }
  });

  it('leaves exact numbers, strings and everything else alone (same text when nothing changes)', () => {
    const t = '{"a":1652317200000,"b":"9223372036854775807 \\" 18446744073709551616","c":[1.5,-2,0,9007199254740991,1e3],"d":true}';
    assert.equal(quoteInexactNumbers(t), t);
  });

  it('does not turn invalid JSON into valid JSON', () => {
    for (const t of ['{"a":01}', '{"a":--1}', '{"a":1e}', '{"a":99999999999999999999', '{"a":"9999999999999999999}']) {
      assert.throws(() => parse(t), SyntaxError, t);
    }
  });
});
