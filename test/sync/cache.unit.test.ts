import { strict as assert } from 'node:assert';
import { Cached } from '../../src/sync/cache';

describe('sync/cache: one answer to "is this cached value stale?"', () => {
  it('max-age: due when unknown, old or demanded; stale for the poll only by age', () => {
    const c = new Cached<number>('x', { kind: 'max-age', ms: 1000 });
    assert.equal(c.due(0), true);
    assert.equal(c.stale(0), true);
    c.set(1, 0);
    assert.equal(c.due(999), false);
    assert.equal(c.due(999, true), true);
    assert.equal(c.stale(999), false);
    assert.equal(c.due(1000), true);
    c.invalidate();
    assert.equal(c.known, false);
    assert.equal(c.due(1), true);
  });

  it('when-invalid: read once until invalidated; every-pass: always; on-demand: only when demanded', () => {
    const w = new Cached<number>('w', { kind: 'when-invalid' });
    w.set(1, 0);
    assert.equal(w.due(1e12), false);
    w.invalidate();
    assert.equal(w.due(0), true);
    const e = new Cached<number>('e', { kind: 'every-pass' });
    e.set(1, 0);
    assert.equal(e.due(0), true);
    assert.equal(e.stale(0), false, 'the poll does not ask for a pass to refresh an every-pass cache');
    const d = new Cached<number>('d', { kind: 'on-demand' });
    assert.equal(d.due(0), false);
    assert.equal(d.due(0, true), true);
    assert.equal(d.stale(0), false);
  });
});
