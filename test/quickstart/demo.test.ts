/** `npm run demo` end to end: the scripted story passes its own checks against the real parts. */
import { strict as assert } from 'node:assert';
import { runDemo } from '../../src/quickstart/demo';

describe('demo story (npm run demo)', () => {
  it('blocks, evacuates, unblocks and expires through a real sidecar and the YARN simulator', async function () {
    this.timeout(30_000);
    const lines: string[] = [];
    const ok = await runDemo((l) => lines.push(l), { hotTimeoutMs: 1500 });
    assert.ok(ok, lines.join('\n'));
    const text = lines.join('\n');
    assert.match(text, /evacuation READY/);
    assert.match(text, /numBlockedNodes 0/);
  });
});
