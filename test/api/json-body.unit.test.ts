import { strict as assert } from 'node:assert';
import { quoteInexactNumbers } from '../../src/api/json-body';

describe('api/json-body: numbers a JS number cannot hold reach the handlers as their own text', () => {
  const parse = (t: string): unknown => JSON.parse(quoteInexactNumbers(t));

  it('keeps Long.MAX, 2^64 and 1e300 as the literal the client sent', () => {
    assert.deepEqual(parse('{"endTimestamp":9223372036854775807}'), { endTimestamp: '9223372036854775807' });
    assert.deepEqual(parse('[18446744073709551616, -9007199254740993, 1e300, 9.3E18]'), ['18446744073709551616', '-9007199254740993', '1e300', '9.3E18']);
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
