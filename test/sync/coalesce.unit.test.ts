/**
 * When passes run under a stream of writes: at most one pass in flight and one queued, so the
 * writes that land while a push is on its way go out together in the next push; a lone write
 * starts its pass at once (no clock advance, no added wait). In-process over the simulator's
 * cluster with a FakeClock (rig.ts); the proxy's push is held open by the test.
 */
import { strict as assert } from 'node:assert';
import { FlakyStore, nodeItem } from './fakes';
import { T0, closeRigs, rig } from './rig';
import { BlacklistChange } from '../../src/yarn/types';
import { performance } from 'node:perf_hooks';
import { MAX_PACE_MS, PACE_AFTER, PACE_FACTOR, paceDelay } from '../../src/sync/engine';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

afterEach(closeRigs);

/** Holds every push until the test lets it go; counts the pushes that started. */
function holdPushes(r: Awaited<ReturnType<typeof rig>>): { started: () => number; release: () => void; startedAt: number[] } {
  const original = r.proxy.updateBlacklist.bind(r.proxy);
  let started = 0;
  const startedAt: number[] = [];
  let gate: { open: Promise<void>; let: () => void } | undefined;
  const arm = () => {
    let letGo = () => {};
    const open = new Promise<void>((resolve) => (letGo = resolve));
    gate = { open, let: letGo };
  };
  arm();
  r.proxy.updateBlacklist = async (change: BlacklistChange, owner?: string) => {
    started++;
    startedAt.push(performance.now());
    const g = gate;
    await g?.open;
    return original(change, owner);
  };
  return {
    startedAt,
    started: () => started,
    release: () => {
      const g = gate;
      arm();
      g?.let();
    },
  };
}

const passes = async (r: Awaited<ReturnType<typeof rig>>): Promise<number> => (await r.metrics.passes.get()).values.reduce((n, v) => n + v.value, 0);
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe('sync/engine: passes coalesce under a stream of writes', () => {
  it("a pass waits for the store's writes that are committed and due an answer (synced off the loop) before it holds the loop", async () => {
    /** A store whose last writes wait for the disk until the test lets them go. */
    class SyncingStore extends FlakyStore {
      waiting: Promise<void> | undefined;
      durable(): Promise<void> | undefined {
        return this.waiting;
      }
    }
    const store = new SyncingStore();
    const r = await rig({ store });
    const held = holdPushes(r);
    let letGo = () => {};
    store.waiting = new Promise<void>((resolve) => (letGo = resolve));
    await store.put(nodeItem(r.host(1)));
    r.engine.kick('api');
    await turns(10);
    assert.equal(held.started(), 0, 'no pass while a write waits for its answer');
    letGo();
    store.waiting = undefined;
    await turns(10);
    assert.equal(held.started(), 1, 'the pass runs once the answers are out');
    held.release();
    await r.engine.idle();
    assert.deepEqual(r.blacklist(), [r.host(1)]);
    // Nothing waiting: the next write's pass starts at once.
    await store.put(nodeItem(r.host(2)));
    r.engine.kick('api');
    await turns(5);
    assert.equal(held.started(), 2);
    held.release();
    await r.engine.idle();
  });

  it('writes that land while a push is in flight make one more pass and one push, not one each', async () => {
    const r = await rig();
    const held = holdPushes(r);
    const before = await passes(r);
    await r.store.put(nodeItem(r.host(1)));
    r.engine.kick('api');
    await turns(5);
    assert.equal(held.started(), 1, 'the first write is pushed at once');
    for (const i of [2, 3, 4, 5, 6]) {
      await r.store.put(nodeItem(r.host(i)));
      r.engine.kick('api');
      await turns(2);
    }
    assert.equal(held.started(), 1, 'nothing else is pushed while the first push is in flight');
    held.release();
    await turns(10);
    assert.equal(held.started(), 2, 'the five later writes go out in one push');
    held.release();
    await r.engine.idle();
    assert.deepEqual(r.proxy.updates, [
      { additions: [r.host(1)], removals: [] },
      { additions: [2, 3, 4, 5, 6].map((i) => r.host(i)).sort(), removals: [] },
    ]);
    assert.equal((await passes(r)) - before, 2, 'two passes for six writes');
    assert.deepEqual(r.blacklist(), [1, 2, 3, 4, 5, 6].map((i) => r.host(i)).sort());
  });

  it('a lone write after a burst starts its pass at once: no clock advance, no wait for a timer', async () => {
    const r = await rig({ settings: { pollIntervalMs: 3_600_000 } });
    for (const i of [1, 2, 3]) {
      await r.store.put(nodeItem(r.host(i)));
      r.engine.kick('api');
    }
    await r.engine.idle();
    const pushes = r.proxy.updates.length;
    await r.store.put(nodeItem(r.host(7)));
    r.engine.kick('api');
    await r.engine.idle();
    assert.equal(r.proxy.updates.length, pushes + 1);
    assert.deepEqual(r.proxy.updates.at(-1), { additions: [r.host(7)], removals: [] });
  });

  it('kicks in one event-loop turn (one group commit acknowledged together) make one pass', async () => {
    const r = await rig();
    const before = await passes(r);
    for (const i of [1, 2, 3, 4]) await r.store.put(nodeItem(r.host(i)));
    for (let k = 0; k < 4; k++) r.engine.kick('api');
    await r.engine.idle();
    assert.equal((await passes(r)) - before, 1);
    assert.deepEqual(r.proxy.updates, [{ additions: [1, 2, 3, 4].map((i) => r.host(i)).sort(), removals: [] }]);
  });

  it('the pacing rule: no wait for a lone pass or the first of a stream; then PACE_FACTOR times the last pass, at most MAX_PACE_MS', () => {
    assert.equal(paceDelay(0, 40), 0);
    assert.equal(paceDelay(PACE_AFTER - 1, 40), 0, 'the first passes of a stream run at once');
    assert.equal(paceDelay(PACE_AFTER, 8), PACE_FACTOR * 8);
    assert.equal(paceDelay(PACE_AFTER + 5, 8), PACE_FACTOR * 8);
    assert.equal(paceDelay(PACE_AFTER, 10 * MAX_PACE_MS), MAX_PACE_MS, 'a slow pass does not hold the next one back for long');
    assert.equal(paceDelay(PACE_AFTER, 0.9 / PACE_FACTOR), 0, 'a pass of microseconds is not worth a timer');
  });

  it('a stream of passes in a row is paced: once two passes each had several writes land, the next waits PACE_FACTOR times as long as the one before took', async () => {
    const r = await rig();
    const held = holdPushes(r);
    const write = async (i: number) => {
      await r.store.put(nodeItem(r.host(i)));
      r.engine.kick('api');
    };
    const HOLD = 30;
    /** Lets the held push go after HOLD ms and returns when it was let go. */
    const hold = async () => {
      await sleep(HOLD);
      const at = performance.now();
      held.release();
      return at;
    };
    await write(1);
    await turns(5);
    assert.equal(held.started(), 1);
    // One write per pass (a client waiting for each block to land): never paced.
    await write(2);
    await hold();
    await turns(10);
    await write(3);
    let end = await hold();
    await turns(10);
    assert.equal(held.started(), 3, 'one write per pass: each pass starts at once');
    assert.ok(held.startedAt[2] - end < HOLD, 'no pause');
    // Several writes per pass, twice in a row: the next pass waits.
    await write(4);
    await write(5);
    await hold();
    await turns(10);
    assert.equal(held.started(), 4, 'the first pass of the stream starts at once');
    await write(6);
    await write(7);
    end = await hold();
    await turns(10);
    assert.equal(held.started(), 4, 'the next waits');
    await sleep(paceDelay(PACE_AFTER, HOLD) + 30);
    assert.equal(held.started(), 5, 'and then runs');
    assert.ok(held.startedAt[4] - end >= paceDelay(PACE_AFTER, HOLD) * 0.8, `paused ${(held.startedAt[4] - end).toFixed(1)} ms after a pass of ${HOLD} ms`);
    held.release();
    await r.engine.idle();
    assert.deepEqual(r.blacklist(), [1, 2, 3, 4, 5, 6, 7].map((i) => r.host(i)).sort());
    // The stream is over: a lone write is pushed at once again.
    await write(8);
    await turns(10);
    assert.equal(held.started(), 6);
    held.release();
    await r.engine.idle();
  });

  it('an expiry deadline takes effect on time under a stream of paced passes (one pass and one pause late at most)', async () => {
    const r = await rig({ nodes: 80, settings: { pollIntervalMs: 3_600_000 } });
    await r.block(nodeItem(r.host(1), { end: T0 + 1_000 }));
    assert.deepEqual(r.blacklist(), [r.host(1)]);
    // Each push takes PUSH ms, and a writer lands several writes during each: passes run back to back, paced.
    const PUSH = 20;
    const push = r.proxy.updateBlacklist.bind(r.proxy);
    r.proxy.updateBlacklist = async (change, owner) => {
      await sleep(PUSH);
      return push(change, owner);
    };
    let stop = false;
    let written = 0;
    const stream = (async () => {
      for (let i = 2; !stop && i <= 80; i++) {
        await r.store.put(nodeItem(r.host(i)));
        r.engine.kick('api');
        written++;
        await sleep(3);
      }
    })();
    await sleep(4 * PUSH);
    const at = performance.now();
    r.clock.advance(1_000); // the deadline timer fires
    let late = Infinity;
    for (let k = 0; k < 100 && late === Infinity; k++) {
      if (!r.blacklist().includes(r.host(1))) late = performance.now() - at;
      else await sleep(2);
    }
    const during = written;
    stop = true;
    await stream;
    await r.engine.idle();
    assert.ok(late !== Infinity, 'the expired node is still on the blacklist 200+ ms after its deadline');
    // The pass in flight, then at most one pause and the pass that drops it (each a push long).
    assert.ok(late < 4 * PUSH + MAX_PACE_MS + 100, `expired item left the blacklist ${late.toFixed(0)} ms after its deadline`);
    assert.ok(during >= 10, `the stream went on meanwhile (${during} writes)`);
    assert.ok(!r.blacklist().includes(r.host(1)));
  });
});
