/** When the engine reads what from YARN: the pure rules, on a fake clock. */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { containersDue, countsDue, nodeListDue, rmAttemptsDue } from '../../src/sync/read-policy';

const p = { refreshMs: 10_000, nodesRefreshMs: 600_000 };

describe('read policies (RM footprint)', () => {
  it('node counts: once at start, every refresh-interval while node items are in force, else every nodes.refresh-interval', () => {
    const c = new FakeClock();
    assert.deepEqual(countsDue(undefined, c.now(), false, p), { due: true, reason: 'first' });
    const readAt = c.now();
    c.advance(9_999);
    assert.equal(countsDue(readAt, c.now(), true, p).due, false);
    c.advance(1);
    assert.deepEqual(countsDue(readAt, c.now(), true, p), { due: true, reason: 'refresh' });
    // Nothing blocked: the same age is not worth a read (idle costs the RM nothing).
    assert.equal(countsDue(readAt, c.now(), false, p).due, false);
    c.advance(600_000 - 10_000);
    assert.deepEqual(countsDue(readAt, c.now(), false, p), { due: true, reason: 'idle-refresh' });
  });

  it('node list: never read while no node item is in force, however old', () => {
    const c = new FakeClock();
    assert.equal(nodeListDue({ readAt: undefined, hosts: new Set() }, [], c.now(), p).due, false);
    assert.equal(nodeListDue({ readAt: c.now() - 86_400_000, hosts: new Set(['a']) }, [], c.now(), p).due, false);
  });

  it('node list: read when the first node item appears', () => {
    const c = new FakeClock();
    assert.deepEqual(nodeListDue({ readAt: undefined, hosts: new Set() }, ['h1'], c.now(), p), { due: true, reason: 'first', unseen: ['h1'] });
  });

  it('node list: a host not on the list is looked up, at most once per refresh-interval', () => {
    const c = new FakeClock();
    const s = { readAt: c.now(), hosts: new Set(['h1', 'h2']) };
    assert.equal(nodeListDue(s, ['h1'], c.now(), p).due, false);
    c.advance(5_000);
    // Read 5 s ago without h3: the RM did not know it then; not again yet.
    assert.deepEqual(nodeListDue(s, ['h1', 'h3'], c.now(), p), { due: false, unseen: ['h3'] });
    c.advance(5_000);
    assert.deepEqual(nodeListDue(s, ['h1', 'h3'], c.now(), p), { due: true, reason: 'unseen-host', unseen: ['h3'] });
  });

  it('node list: hosts all known → only the rare refresh (nodes.refresh-interval)', () => {
    const c = new FakeClock();
    const s = { readAt: c.now(), hosts: new Set(['h1']) };
    c.advance(599_999);
    assert.equal(nodeListDue(s, ['h1'], c.now(), p).due, false);
    c.advance(1);
    assert.deepEqual(nodeListDue(s, ['h1'], c.now(), p), { due: true, reason: 'refresh', unseen: [] });
  });

  it('containers: every pass while evacuating; every refresh-interval while items are in force; never when nothing is blocked', () => {
    const c = new FakeClock();
    const readAt = c.now();
    assert.deepEqual(containersDue(readAt, c.now(), { evacuating: true, itemsInForce: true }, p), { due: true, reason: 'evacuating' });
    c.advance(60_000);
    assert.equal(containersDue(readAt, c.now(), { evacuating: false, itemsInForce: false }, p).due, false);
    assert.equal(containersDue(undefined, c.now(), { evacuating: false, itemsInForce: false }, p).due, false);
    assert.deepEqual(containersDue(undefined, c.now(), { evacuating: false, itemsInForce: true }, p), { due: true, reason: 'first' });
    assert.deepEqual(containersDue(readAt, c.now(), { evacuating: false, itemsInForce: true }, p), { due: true, reason: 'refresh' });
    assert.equal(containersDue(c.now() - 9_999, c.now(), { evacuating: false, itemsInForce: true }, p).due, false);
  });

  it('RM attempts: at start and when the proxy serves another attempt, never on a timer', () => {
    assert.equal(rmAttemptsDue(undefined, undefined), true);
    assert.equal(rmAttemptsDue(undefined, 'appattempt_1_0001_000001'), true);
    assert.equal(rmAttemptsDue('appattempt_1_0001_000001', 'appattempt_1_0001_000001'), false);
    assert.equal(rmAttemptsDue('appattempt_1_0001_000001', 'appattempt_1_0001_000002'), true);
  });
});

describe('read policies: a blocked host the RM does not know', () => {
  it('is looked up once, then only at the rare refresh', () => {
    const c = new FakeClock();
    const s = { readAt: c.now(), hosts: new Set(['h1']), missing: new Set(['ghost']) };
    c.advance(60_000);
    assert.equal(nodeListDue(s, ['h1', 'ghost'], c.now(), p).due, false);
    c.advance(540_000);
    assert.deepEqual(nodeListDue(s, ['h1', 'ghost'], c.now(), p), { due: true, reason: 'refresh', unseen: [] });
  });
});
