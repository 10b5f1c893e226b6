/**
 * The CLI never sends a bare number the API would refuse for its unit: a sub-second --timeout goes
 * with "ms", an evacuation timeout beyond a day with "s" (the API takes a bare timeout as ms from
 * 1000 on and a bare evacuationTimeout as seconds up to 86400).
 */
import { strict as assert } from 'node:assert';
import { blockBody } from '../../src/cli/commands/block';
import { parseBlockRequest } from '../../src/model/validate';

describe('cli: time flags as the API takes them', () => {
  const ref = { id: 'n1', kind: 'node' as const, node: 'n1' };
  for (const [flags, field, sent] of [
    [{ timeout: '500ms' }, 'timeout', '500 ms'],
    [{ timeout: '2h' }, 'timeout', '7200000'],
    [{ evacuate: true, evacuationTimeout: '2d' }, 'evacuationTimeout', '172800 s'],
    [{ evacuate: true, evacuationTimeout: '10m' }, 'evacuationTimeout', 600],
  ] as const) {
    it(`${JSON.stringify(flags)} → ${field} ${JSON.stringify(sent)}, which the API accepts`, () => {
      const body = blockBody({ cause: 'x', ...flags } as Parameters<typeof blockBody>[0]);
      assert.equal((body as unknown as Record<string, unknown>)[field], sent);
      const r = parseBlockRequest(ref, body, Date.now());
      assert.ok(r.ok, r.ok ? '' : r.errors.join('; '));
    });
  }
});
