import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { DeadlineTimer } from '../../src/sync/deadline-timer';
import { Backoff } from '../../src/sync/backoff';

describe('sync/deadline-timer: one timer for many deadlines', () => {
  it('arms exactly one clock timer and fires due keys together, never early', () => {
    const clock = new FakeClock(0);
    const fired: string[][] = [];
    const t = new DeadlineTimer(clock, (k) => fired.push(k.sort()));
    t.set('a', 100);
    t.set('b', 100);
    t.set('c', 250);
    assert.equal(clock.pendingTimers(), 1);
    clock.advance(99);
    assert.deepEqual(fired, []);
    clock.advance(1);
    assert.deepEqual(fired, [['a', 'b']]);
    assert.equal(clock.pendingTimers(), 1);
    clock.advance(200);
    assert.deepEqual(fired, [['a', 'b'], ['c']]);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('moving or removing a deadline re-arms; replaceAll drops keys not given', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    const t = new DeadlineTimer(clock, (k) => fired.push(...k));
    t.set('a', 100);
    t.set('a', 300);
    t.set('b', 200);
    t.remove('b');
    clock.advance(250);
    assert.deepEqual(fired, []);
    t.replaceAll(new Map([['x', 260], ['y', Infinity]]));
    clock.advance(100);
    assert.deepEqual(fired, ['x']);
    assert.equal(t.size(), 0);
  });

  it('stays bounded under many updates', () => {
    const clock = new FakeClock(0);
    const t = new DeadlineTimer(clock, () => undefined);
    for (let i = 0; i < 10_000; i++) t.replaceAll(new Map([['k', 1000 + i]]));
    assert.equal(t.size(), 1);
    assert.equal(t.next(), 10_999);
    assert.equal(clock.pendingTimers(), 1);
  });
});

describe('sync/backoff', () => {
  it('doubles from the initial delay up to the cap, and resets', () => {
    const b = new Backoff({ initialMs: 200, maxMs: 1000 });
    assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()], [200, 400, 800, 1000, 1000]);
    assert.equal(b.attempts, 5);
    b.reset();
    assert.equal(b.next(), 200);
  });
  it('jitter only shortens, within the fraction', () => {
    const b = new Backoff({ initialMs: 1000, maxMs: 1000, jitter: 0.2, random: () => 1 });
    assert.equal(b.next(), 800);
  });
});
