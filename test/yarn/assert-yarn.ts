/** Assertion shared by the YARN client suites: a call fails with a YarnCallError that `check` accepts. */
import { strict as assert } from 'node:assert';
import { YarnCallError } from '../../src/yarn/types';

export async function rejects(p: Promise<unknown>, check: (e: YarnCallError) => void): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof YarnCallError, `expected YarnCallError, got ${String(e)}`);
    check(e);
    return;
  }
  assert.fail('expected a rejection');
}
