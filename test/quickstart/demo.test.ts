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
    // Times for people are ISO, never the wire's epoch ms; no hint names the demo's own server, which has stopped.
    assert.match(text, /→ 201; ends at \d{4}-\d\d-\d\dT[\d:.]+Z/);
    assert.doesNotMatch(text.replace(/\{.*\}/g, ''), /\b1\d{12}\b/, 'an epoch in a line for people');
    assert.doesNotMatch(text, /--server http:\/\/127\.0\.0\.1:\d+/);
  });
});
