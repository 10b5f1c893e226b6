/**
 * The store's time (store/zookeeper/clock.ts) and the clock a sidecar counts shared items on
 * (store/store-clock.ts), on fake clocks and a fake znode: the skew is the local clock minus the
 * store's time carried forward on the monotonic clock, so a step of the local clock shows at once;
 * expiry is refused while the local clock is ahead beyond the limit; the sidecar's clock reads the
 * store's time then, and its own otherwise.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { Deadline } from '../../src/store/retry';
import { ClockSkewError } from '../../src/store/store';
import { PROBE_INTERVAL_MS, StoreClock, spanInWords } from '../../src/store/zookeeper/clock';
import { sharedStoreClock } from '../../src/store/store-clock';
import { ZkError, ZK } from '../../src/store/zookeeper/errors';
import type { ZkStat } from '../../src/store/zookeeper/session';

const HOUR = 3_600_000;
const T0 = 1_652_313_600_000;

/** A znode whose setData answers with the "server's" time, after `rttMs` of monotonic time. */
function fakeZnode(serverTime: () => number, advance: (ms: number) => void, rttMs = 4) {
  let exists = false;
  const calls: string[] = [];
  return {
    calls,
    session: {
      async setData(): Promise<ZkStat> {
        calls.push('setData');
        if (!exists) throw new ZkError(ZK.NO_NODE, 'no node', '/x/clock');
        advance(rttMs / 2);
        const mtimeMs = serverTime();
        advance(rttMs / 2);
        return { version: 1, cversion: 0, mzxid: '', pzxid: '', numChildren: 0, mtimeMs };
      },
      async create(): Promise<void> {
        calls.push('create');
        exists = true;
      },
    },
  };
}

function rig(offsetMs: number) {
  let mono = 1000;
  let localOffset = offsetMs;
  const server = () => T0 + mono; // the server's clock runs on real (monotonic) time
  const z = fakeZnode(server, (ms) => (mono += ms));
  const localNow = () => T0 + mono + localOffset;
  const clock = new StoreClock({ session: z.session, path: '/x/clock', localTime: localNow, monotonic: () => mono, limitMs: 10_000, logger: silentLogger, description: 'test' });
  return {
    clock,
    z,
    localNow,
    pass: (ms: number) => (mono += ms),
    step: (ms: number) => (localOffset += ms),
  };
}

const d = () => new Deadline(1000);

describe('store/zookeeper/clock: the store\'s time against the local clock', () => {
  it('measures the skew from one write (creating the znode the first time), within half its round trip', async () => {
    const r = rig(2 * HOUR);
    assert.equal(r.clock.reading(), undefined, 'nothing before the first measurement');
    await r.clock.measure(d());
    assert.deepEqual(r.z.calls, ['setData', 'create', 'setData']);
    const s = r.clock.reading()!;
    assert.ok(Math.abs(s.skewMs - 2 * HOUR) <= s.uncertaintyMs + 1, `${s.skewMs}`);
    assert.equal(s.uncertaintyMs, 2);
    assert.equal(s.limitMs, 10_000);
  });

  it('a step of the local clock shows at once, without another write; the store\'s time moves on the monotonic clock', async () => {
    const r = rig(0);
    await r.clock.measure(d());
    assert.ok(Math.abs(r.clock.reading()!.skewMs) <= 2);
    r.pass(30_000);
    r.step(2 * HOUR);
    const s = r.clock.reading()!;
    assert.ok(Math.abs(s.skewMs - 2 * HOUR) <= 2, `${s.skewMs}`);
    assert.ok(Math.abs(s.storeNow - (T0 + 1000 + 4 + 30_000)) <= 2, 'the store\'s time is the write\'s plus the monotonic time since');
    assert.equal(r.z.calls.filter((c) => c === 'setData').length, 2, 'no write for the reading');
  });

  it('refresh() writes again only once PROBE_INTERVAL_MS has passed; a failed write keeps the last measurement', async () => {
    const r = rig(0);
    await r.clock.refresh(d());
    const writes = () => r.z.calls.filter((c) => c === 'setData').length;
    const first = writes();
    // The measurement is the middle of its round trip (2 ms before the write's end).
    r.pass(PROBE_INTERVAL_MS - 3);
    await r.clock.refresh(d());
    assert.equal(writes(), first);
    r.pass(1);
    await r.clock.refresh(d());
    assert.equal(writes(), first + 1);
    r.z.session.setData = async () => {
      throw new ZkError(ZK.CONNECTION_LOSS, 'connection loss', '/x/clock');
    };
    r.pass(PROBE_INTERVAL_MS);
    await r.clock.refresh(d());
    assert.ok(r.clock.reading(), 'the last measurement still holds');
  });

  it('without any measurement refresh() fails and expiry is refused', async () => {
    const r = rig(0);
    r.z.session.setData = async () => {
      throw new ZkError(ZK.CONNECTION_LOSS, 'connection loss', '/x/clock');
    };
    await assert.rejects(() => r.clock.refresh(d()), /connection loss/);
    assert.throws(() => r.clock.checkExpiry(r.localNow()), (e: unknown) => e instanceof ClockSkewError && /not been measured/.test((e as Error).message));
  });

  it('expiry is refused while the local clock (or the `now` asked for) is ahead beyond the limit; a clock behind is allowed', async () => {
    const r = rig(0);
    await r.clock.measure(d());
    assert.doesNotThrow(() => r.clock.checkExpiry(r.localNow()));
    assert.throws(() => r.clock.checkExpiry(r.localNow() + 11_000), (e: unknown) => e instanceof ClockSkewError && /11 s ahead of the store's time/.test((e as Error).message), 'a `now` ahead');
    r.step(2 * HOUR);
    assert.throws(() => r.clock.checkExpiry(r.localNow()), /2 h 0 min ahead.*Nothing was deleted/);
    assert.throws(() => r.clock.checkExpiry(r.localNow() - 2 * HOUR), /ahead/, 'this machine\'s clock is checked whatever `now` says');
    r.step(-4 * HOUR);
    assert.doesNotThrow(() => r.clock.checkExpiry(r.localNow()), 'behind: it deletes only what ended on both clocks');
    r.step(2 * HOUR + 9_000);
    assert.doesNotThrow(() => r.clock.checkExpiry(r.localNow()), 'within the limit');
  });

  it('spanInWords', () => {
    assert.equal(spanInWords(350), '350 ms');
    assert.equal(spanInWords(-41_000), '41 s');
    assert.equal(spanInWords(5 * 60_000), '5 min');
    assert.equal(spanInWords(2 * HOUR + 60_000), '2 h 1 min');
  });

  it('spanInWords just under a unit\'s boundary says what it rounds to in the bigger unit (2 h measured 0.3 s short is "2 h 0 min", never "120 min")', () => {
    assert.equal(spanInWords(2 * HOUR - 400), '2 h 0 min');
    assert.equal(spanInWords(2 * HOUR - 300), '2 h 0 min');
    assert.equal(spanInWords(3 * HOUR - 20_000), '3 h 0 min');
    assert.equal(spanInWords(4 * HOUR - 20_000), '4 h 0 min');
    assert.equal(spanInWords(119_700), '2 min');
    assert.equal(spanInWords(999.6), '1 s');
    assert.equal(spanInWords(999.7), '1 s');
    assert.equal(spanInWords(2 * HOUR - 31_000), '119 min');
  });
});

describe('store/store-clock: the clock a sidecar counts shared items on', () => {
  const skewOf = (skewMs: number, at: number) => ({ skewMs, uncertaintyMs: 1, storeNow: at - skewMs, measuredAt: at, limitMs: 10_000 });

  it('reads the store\'s time while the local clock is ahead beyond the limit, its own otherwise; timers are the local clock\'s', () => {
    const local = new FakeClock(T0);
    let skew: number | undefined;
    const c = sharedStoreClock(local, () => (skew === undefined ? undefined : skewOf(skew, local.now())));
    assert.equal(c.now(), T0, 'not measured: the local clock');
    skew = 2 * HOUR;
    assert.equal(c.now(), T0 - 2 * HOUR, 'ahead by 2 h: an item ends on the store\'s time');
    skew = 10_000;
    assert.equal(c.now(), T0, 'within the limit: the local clock');
    skew = -2 * HOUR;
    assert.equal(c.now(), T0, 'behind: the local clock (a block ends once both clocks say so)');
    let fired = 0;
    c.setTimer(1000, () => fired++);
    local.advance(1000);
    assert.equal(fired, 1);
    // Durations are the local monotonic clock's, whatever the skew (evacuation graces count on it).
    skew = 2 * HOUR;
    const mono = c.monotonic?.();
    assert.equal(mono, local.monotonic());
    local.stepWall(2 * HOUR);
    assert.equal(c.monotonic?.(), mono, 'a wall step moves no duration');
  });
});
