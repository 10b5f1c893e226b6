/** Previews apply the safety cap as the engine does: a held-back block is reported, not added. */
import { strict as assert } from 'node:assert';
import { EVACUATE } from '../../src/model/item';
import { previewCap } from '../../src/sync/blacklist-effect';
import { previewChange } from '../../src/api/dry-run';
import { APP, nodeItem } from './items';

const T0 = 1_652_313_600_000;
const nodes = Array.from({ length: 10 }, (_, i) => ({ host: `h${i + 1}`, state: 'RUNNING' as const }));
const cap = { nodes, runningNodesFloor: 10, maxBlockedFraction: 0.2 };
const existing = [nodeItem('h1', { start: T0 }), nodeItem('h2', { start: T0 + 1 })];

describe('sync/preview: what a change would do, safety cap included', () => {
  it('a block past the cap is deferred, not an addition; unblocking an enforced one lets the oldest deferred go out', () => {
    const p = previewCap(existing, [...existing, nodeItem('h3', { start: T0 + 2 })], APP, T0 + 10, cap);
    assert.deepEqual([p.blacklistAdditions, p.blacklistRemovals, p.deferred], [[], [], ['h3']]);
    const withThree = [...existing, nodeItem('h3', { start: T0 + 2 })];
    const q = previewCap(withThree, withThree.slice(1), APP, T0 + 10, cap);
    assert.deepEqual([q.blacklistAdditions, q.blacklistRemovals, q.deferred], [['h3'], ['h1'], []]);
  });

  it('without a cap basis (no engine, or no pass yet) nothing is held back', () => {
    assert.deepEqual(previewCap(existing, [...existing, nodeItem('h3')], APP, T0, undefined).deferred, []);
  });

  it('the API preview: an EVACUATE block the cap would hold back releases nothing and says deferred', () => {
    const e = previewChange(existing, 'h3', nodeItem('h3', { action: EVACUATE, start: T0 + 2 }), APP, T0 + 10, () => ['container_e01_1652313600000_0001_01_000002'], cap);
    assert.deepEqual(e, { blacklistAdditions: [], blacklistRemovals: [], containersToRelease: [], deferred: ['h3'] });
  });
});
