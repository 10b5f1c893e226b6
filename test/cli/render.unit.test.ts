/** What the CLI's views print, from pure renderers: one rule per field, the same in every view. */
import { strict as assert } from 'node:assert';
import { evacuationTimeoutText, itemDetails, listTable } from '../../src/cli/render';
import { paint } from '../../src/cli/format';
import { storeSummary } from '../../src/cli/commands/quickstart';
import { FakeClock } from '../../src/core/clock';
import { BlockedItem } from '../../src/model/item';
import { ApiItem } from '../../src/cli/client';

const p = paint(false);
const base = { id: 'node1', kind: 'node', cause: 'disk', scope: 'cluster', startTimestamp: '1652313600000', endTimestamp: '9223372036854775807' } as const;

describe('cli render: the evacuation timeout agrees between list -o wide, show and export', () => {
  it('a BLOCK item imported with -g 600 shows its 10m, marked as applying if evacuated', () => {
    const it = { ...base, action: 'MARK_BLOCKED', evacuationTimeout: 600 } as ApiItem;
    assert.equal(evacuationTimeoutText(it), '10m (if evacuated)');
    assert.match(listTable([it], 1652313600000, p, true), /10m \(if evacuated\)/);
    assert.match(itemDetails(it, 1652313600000, p), /Evacuation timeout:\s+10m \(if evacuated\)/);
  });
  it('a BLOCK item without one shows none; an EVACUATE item always shows its own or the default', () => {
    assert.equal(evacuationTimeoutText({ action: 'MARK_BLOCKED' }), undefined);
    assert.equal(evacuationTimeoutText({ action: 'MARK_BLOCKED_AND_EVACUATE_TASKS' }), 'default');
    assert.equal(evacuationTimeoutText({ action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', evacuationTimeout: 0 }), 'at once');
  });
});

describe('quickstart banner: the kept store is described, not called empty', () => {
  const clock = new FakeClock();
  const stamp = { at: clock.now() - 1000, by: 'test', from: '127.0.0.1' };
  const item = (id: string, end: number): BlockedItem => ({ id, kind: 'node', node: id, action: 'MARK_BLOCKED', cause: 'x', scope: 'cluster', startTimestamp: clock.now() - 1000, endTimestamp: end, created: stamp, updated: stamp });
  it('empty store → "(empty)"; kept items → their count, names and how to start clean; expired ones do not count', () => {
    assert.match(storeSummary([], clock.now(), 'data/q.db', 'http://x').join('\n'), /\(empty\)/);
    const kept = storeSummary([item('a', Infinity), item('b', clock.now() + 60_000), item('gone', clock.now() - 1)], clock.now(), 'data/q.db', 'http://x').join('\n');
    assert.match(kept, /2 item\(s\) kept in data\/q\.db from an earlier run \(a, b\)/);
    assert.match(kept, /npm start -- --fresh/);
  });
});
