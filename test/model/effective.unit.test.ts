import { strict as assert } from 'node:assert';
import { effectiveItems, isExpired, nextExpiry } from '../../src/model/effective';
import { newItem } from '../../src/model/merge';
import { BlockedItem, PERMANENT } from '../../src/model/item';
import { FakeClock } from '../../src/core/clock';

const item = (id: string, end: number, scope = 'cluster'): BlockedItem =>
  newItem({ id, kind: 'node', node: id, action: 'MARK_BLOCKED', end: end === PERMANENT ? { type: 'permanent' } : { type: 'at', at: end }, cause: 'x', scope, allowMerge: false }, 0, { by: 't', from: 't' });

describe('model/effective: what counts at time t (C2)', () => {
  it('inclusive expiry: ends {1,2,3} at now=2 leave only 3', () => {
    const items = [item('a', 1), item('b', 2), item('c', 3)];
    assert.deepEqual(effectiveItems(items, undefined, 2).map((x) => x.id), ['c']);
    assert.ok(isExpired(items[1], 2));
    assert.ok(!isExpired(items[2], 2));
  });

  it('permanent items never expire', () => {
    assert.ok(!isExpired(item('p', PERMANENT), Number.MAX_SAFE_INTEGER));
  });

  it('scope: cluster items apply to every app, app items only to theirs', () => {
    const items = [item('a', 100), item('b', 100, 'application_1652313600000_0001'), item('c', 100, 'application_1652313600000_0002')];
    assert.deepEqual(effectiveItems(items, 'application_1652313600000_0001', 0).map((x) => x.id), ['a', 'b']);
    assert.deepEqual(effectiveItems(items, undefined, 0).map((x) => x.id), ['a']);
  });

  it('nextExpiry is the earliest finite end after now (the deadline timer\'s target)', () => {
    const items = [item('a', 50), item('b', 20), item('p', PERMANENT), item('old', 5)];
    assert.equal(nextExpiry(items, 10), 20);
    assert.equal(nextExpiry(items, 20), 50);
    assert.equal(nextExpiry(items, 50), undefined);
  });
});

describe('core/clock: FakeClock', () => {
  it('fires due timers in time order at their own instants, and cancelled ones never', () => {
    const c = new FakeClock(0);
    const seen: [string, number][] = [];
    c.setTimer(30, () => seen.push(['b', c.now()]));
    c.setTimer(10, () => seen.push(['a', c.now()]));
    const cancel = c.setTimer(20, () => seen.push(['x', c.now()]));
    cancel();
    c.advance(25);
    assert.deepEqual(seen, [['a', 10]]);
    assert.equal(c.now(), 25);
    c.advance(100);
    assert.deepEqual(seen, [['a', 10], ['b', 30]]);
    assert.equal(c.pendingTimers(), 0);
  });

  it('a clock that jumps backwards fires nothing', () => {
    const c = new FakeClock(1000);
    let fired = false;
    c.setTimer(10, () => (fired = true));
    c.set(500);
    assert.equal(fired, false);
  });
});
