/**
 * Two sidecars of one job (an HA pair, or a restart overlap) run a detector each on one store and
 * keep one state record. Each one's updates — a backoff level raised for a repeat offender, an
 * operator's unblock noticed, incidents — must survive the other's writes: the record is written
 * with the store's compare-and-set and a conflict is re-read and merged, never overwritten.
 * Pure parts (the merge) and two real Detectors on one memory store, on a fake clock.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { Detector } from '../../src/detect/detector';
import { storeAdder, unitDetector } from './unit-detector';
import { mergeStates } from '../../src/detect/merge-state';
import { DetectorState, decodeState, emptyState, encodeState } from '../../src/detect/state';
import { ingest } from '../../src/detect/incidents';
import { recordBlock } from '../../src/detect/auto-blocks';
import { DetectorSource } from '../../src/detect/source';
import { leaseMsFor } from '../../src/detect/leadership';
import { Failure } from '../../src/detect/types';
import { newItem } from '../../src/model/merge';
import { MemoryBackend, MemoryStore } from '../../src/store/memory-store';
import { ClusterNode } from '../../src/yarn/types';

const MIN = 60_000;
const H = 3_600_000;
const T0 = 1_716_900_000_000;
const APP = 'application_1652313600000_0001';
const KEY = `detector.${APP}`;

const nodes: ClusterNode[] = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}:8041`, host: `n${i}`, rack: '/r', state: 'RUNNING', healthReport: '', numContainers: 0 }));

/** What the job's JobManager shows: every failure so far (both sidecars read the same job). */
class SharedJob {
  readonly failures: Failure[] = [];
  private n = 0;
  fail(host: string, at: number): void {
    this.n++;
    this.failures.push({ key: `flink:j:${at}:${this.n}`, source: 'flink', host, at, group: `flink:j:${at}`, signature: 'java.io.IOException: No space left on device', summary: 'No space left on device' });
  }
  source(): DetectorSource {
    return { name: 'flink', poll: async () => ({ failures: [...this.failures], cursor: this.failures.length }) };
  }
}

function sidecar(store: MemoryStore, clock: FakeClock, job: SharedJob): Detector {
  return unitDetector({ clock, store, addItem: storeAdder(store, clock), nodeList: nodes, sources: [job.source()], applicationId: APP });
}

const stored = async (store: MemoryStore): Promise<DetectorState> => decodeState(await store.readRecord(KEY)).state;
const hostOf = (r: Awaited<ReturnType<Detector['pass']>>, h: string) => r!.hosts.find((x) => x.host === h)!;

describe('detector: two sidecars of one job share its state record', () => {
  it('a backoff level one sidecar raised survives the other sidecar\'s write, and a restart after it', async () => {
    const clock = new FakeClock(T0);
    const backend = new MemoryBackend();
    const job = new SharedJob();
    const a = sidecar(new MemoryStore({ backend, clock }), clock, job);
    const b = sidecar(new MemoryStore({ backend, clock }), clock, job);
    await a.pass();
    await b.pass();

    // n3 fails three times; sidecar A blocks it for 1 h (level 0).
    for (let i = 0; i < 3; i++) job.fail('n3', clock.now() + i * 1000);
    clock.advance(MIN);
    assert.equal(hostOf(await a.pass(), 'n3').decision, 'block');
    // The block ends; n3 fails again soon: A blocks it again, twice as long (level 1).
    clock.advance(H);
    await a.pass();
    for (let i = 0; i < 3; i++) job.fail('n3', clock.now() + i * 1000);
    clock.advance(MIN);
    const again = hostOf(await a.pass(), 'n3');
    assert.equal(again.decision, 'block');
    assert.equal(again.block?.level, 1);
    assert.equal((await stored(new MemoryStore({ backend }))).hosts.n3.lastBlock?.level, 1);

    // A's sidecar stops (giving up the detector's lease); sidecar B, which has stood by all along
    // reading the record, takes over and has its own news to write (a failure on n7).
    await a.stop();
    job.fail('n7', clock.now());
    clock.advance(1000);
    const seenByB = await b.pass();
    assert.equal(hostOf(seenByB, 'n3').lastBlock?.level, 1, 'B decided with the level A raised, not a stale view');

    const rec = await stored(new MemoryStore({ backend }));
    assert.equal(rec.hosts.n3?.lastBlock?.level, 1, 'the level A raised is still in the record after B wrote');
    assert.equal(rec.incidents.filter((i) => i.host === 'n7').length, 1, "B's own news is in it too");

    // A third sidecar (B restarted) starts from the record: when n3 is blocked again soon, it is ×4.
    await b.stop();
    const c = sidecar(new MemoryStore({ backend, clock }), clock, job);
    clock.advance(2 * H);
    await c.pass();
    for (let i = 0; i < 3; i++) job.fail('n3', clock.now() + i * 1000);
    clock.advance(MIN);
    const third = hostOf(await c.pass(), 'n3');
    assert.equal(third.decision, 'block');
    assert.equal(third.block?.level, 2);
    assert.equal(third.block?.durationMs, 4 * H);
  });

  it('a write that loses the compare-and-set re-reads, merges and writes both sides\' news', async () => {
    const clock = new FakeClock(T0);
    const backend = new MemoryBackend();
    const job = new SharedJob();
    const store = new MemoryStore({ backend, clock });
    const a = sidecar(store, clock, job);
    await a.pass();
    // Another writer changes the record between A's read at the start of its pass and A's write.
    const other = emptyState();
    ingest(other, [{ key: 'yarn:c9', source: 'yarn-containers', host: 'n9', at: T0, group: 'yarn:c9', signature: 'exit 137', summary: 'exit 137' }], T0, 10 * MIN);
    recordBlock(other, { host: 'n12', itemId: 'n12', end: T0 + H, level: 3 }, 'enforce', T0 - 1);
    const realRead = store.readRecord.bind(store);
    let sneak = true;
    store.readRecord = async (k: string) => {
      const v = await realRead(k);
      if (sneak) {
        sneak = false;
        await new MemoryStore({ backend }).writeRecord(KEY, encodeState(mergeStates(other, decodeState(v).state)));
      }
      return v;
    };
    job.fail('n4', clock.now());
    clock.advance(1000);
    await a.pass();
    const rec = await stored(store);
    assert.ok(rec.incidents.some((i) => i.host === 'n4'), "A's incident");
    assert.ok(rec.incidents.some((i) => i.host === 'n9'), "the other writer's incident");
    assert.equal(rec.hosts.n12?.lastBlock?.level, 3, "the other writer's block");
  });

  it('merge: keeps either side\'s facts, the later block (its level), an operator\'s unblock; idempotent', () => {
    const f = (host: string, key: string, group: string, at: number): Failure => ({ key, source: 'flink', host, at, group, signature: 's', summary: 's' });
    const a = emptyState();
    const b = emptyState();
    // The same failure read by both: one incident after the merge.
    ingest(a, [f('n1', 'k1', 'g1', T0), f('n2', 'k2', 'g2', T0 + 1)], T0 + 2, 10 * MIN);
    ingest(b, [f('n1', 'k1', 'g1', T0), f('n3', 'k3', 'g3', T0 + 2)], T0 + 3, 10 * MIN);
    recordBlock(a, { host: 'n5', itemId: 'n5', end: T0 + H, level: 0 }, 'enforce', T0);
    recordBlock(b, { host: 'n5', itemId: 'n5', end: T0 + 3 * H, level: 1 }, 'enforce', T0 + 5);
    recordBlock(a, { host: 'n6', itemId: 'n6', end: T0 + H, level: 2 }, 'enforce', T0);
    b.hosts.n6 = structuredClone(a.hosts.n6);
    b.hosts.n6.lastBlock!.endedAt = T0 + 10;
    b.hosts.n6.lastBlock!.endedBy = 'operator';
    b.hosts.n6.operatorUnblockedAt = T0 + 10;
    a.cursors = { flink: 'a' };
    b.cursors = { flink: 'b', 'yarn-containers': 7 };

    const m = mergeStates(a, b);
    assert.deepEqual(m.incidents.map((i) => i.host).sort(), ['n1', 'n2', 'n3']);
    assert.deepEqual(Object.keys(m.seen).sort(), ['k1', 'k2', 'k3']);
    assert.equal(m.hosts.n5.lastBlock?.level, 1, 'the later block wins');
    assert.equal(m.hosts.n6.lastBlock?.endedBy, 'operator', "either side's view that an operator lifted it");
    assert.equal(m.hosts.n6.operatorUnblockedAt, T0 + 10);
    assert.deepEqual(m.cursors, { flink: 'a', 'yarn-containers': 7 }, 'own cursors; the other\'s only where this side has none');
    assert.deepEqual(mergeStates(m, m), m, 'merging with itself changes nothing');
    assert.deepEqual(mergeStates(m, b), m, 'merging what is already in changes nothing');
    assert.deepEqual(mergeStates(b, a).hosts, m.hosts, 'the hosts do not depend on who merges');
  });
});

describe('detector: a block added, the sidecar stopped before its state was written', () => {
  const tenNodes: ClusterNode[] = nodes.slice(0, 10); // × 0.1: one automatic block at a time

  function tenNodeSidecar(store: MemoryStore, clock: FakeClock, job: SharedJob): Detector {
    return unitDetector({ clock, store, addItem: storeAdder(store, clock), nodeList: tenNodes, sources: [job.source()], applicationId: APP });
  }

  it('the restarted detector counts the block against its cap, keeps its backoff level, and sees an operator lift it', async () => {
    const clock = new FakeClock(T0);
    const backend = new MemoryBackend();
    const job = new SharedJob();
    // The block is reserved in the record (reservation.ts), then the state write after the block
    // fails (the store hiccups), then the sidecar is stopped without giving up its lease.
    const failing = new MemoryStore({ backend, clock });
    const replace = failing.replaceRecord.bind(failing);
    failing.replaceRecord = async (k, e, v) => {
      if (v.includes('"n3"') && !v.includes('"pending":true')) throw new Error('store unreachable');
      return replace(k, e, v);
    };
    const first = tenNodeSidecar(failing, clock, job);
    await first.pass();
    for (let i = 0; i < 3; i++) job.fail('n3', clock.now() + i * 1000);
    clock.advance(MIN);
    assert.equal(hostOf(await first.pass(), 'n3').decision, 'block');
    const item = await failing.get('n3');
    assert.equal(item?.source, 'detector:failures');

    const store = new MemoryStore({ backend, clock });
    const again = tenNodeSidecar(store, clock, job);
    for (let i = 0; i < 3; i++) job.fail('n5', clock.now() + i * 1000);
    // The stopped sidecar's lease lapses (leadership.ts: 2 min here); the new one takes over.
    clock.advance(3 * MIN);
    const r = await again.pass();
    assert.equal(hostOf(r, 'n5').decision, 'cap', `n3's block holds the one slot: ${hostOf(r, 'n5').why}`);
    assert.equal(hostOf(r, 'n3').lastBlock?.level, 0);
    assert.equal(await store.get('n5'), undefined);

    // The operator lifts n3's block: taken as an operator's unblock.
    await store.remove('n3');
    clock.advance(1000);
    const lifted = await again.pass();
    assert.equal(hostOf(lifted, 'n3').lastBlock?.endedBy, 'operator');
    assert.equal(hostOf(lifted, 'n5').decision, 'block', 'the slot is free again');
  });
});

describe('detector: joining a host item the store refuses (its scope is full)', () => {
  it('is not tried again every pass (a refused write and an audit record each time) until the item changes', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore({ clock });
    const job = new SharedJob();
    let adds = 0;
    const d = unitDetector({ clock, store, addItem: storeAdder(store, clock, () => adds++), nodeList: nodes, sources: [job.source()], applicationId: APP });
    // 64 other jobs' detectors already hold n3 (the most applications one scope names).
    const others = Array.from({ length: 64 }, (_, i) => `application_1652313600000_${String(100 + i).padStart(4, '0')}`);
    const held = (apps: string[]) => newItem({ id: 'n3', kind: 'node', node: 'n3', action: 'MARK_BLOCKED', end: { type: 'after', ms: 4 * H }, cause: 'auto: other jobs', scope: apps.join(','), allowMerge: false }, clock.now(), { by: 'detector', from: 'detector' });
    assert.equal((await store.add({ item: held(others), allowMerge: false })).outcome, 'created');
    for (let i = 0; i < 3; i++) job.fail('n3', clock.now() + i * 1000);
    clock.advance(MIN);
    await d.pass();
    assert.equal(adds, 1, 'tried once');
    for (let i = 0; i < 5; i++) {
      clock.advance(10_000);
      const r = hostOf(await d.pass(), 'n3');
      assert.equal(r.decision, 'refused', r.why);
    }
    assert.equal(adds, 1, 'not again while the item is as it was');
    // The item changes (it ends, and other jobs block the host again, fewer of them): tried again.
    await store.remove('n3');
    assert.equal((await store.add({ item: held(others.slice(0, 10)), allowMerge: false })).outcome, 'created');
    clock.advance(10_000);
    const again = hostOf(await d.pass(), 'n3');
    assert.equal(again.decision, 'block', again.why);
    assert.equal(adds, 2);
    assert.match(String((await store.get('n3'))?.scope), new RegExp(APP));
  });
});

describe('detector: two sidecars of one job in a quiet period', () => {
  it('converge on one record and then write nothing (no ping-pong of merges)', async () => {
    const clock = new FakeClock(T0);
    const backend = new MemoryBackend();
    const job = new SharedJob();
    let writes = 0;
    const counted = (): MemoryStore => {
      const s = new MemoryStore({ backend, clock });
      const replace = s.replaceRecord.bind(s);
      s.replaceRecord = async (k, e, v) => {
        const ok = await replace(k, e, v);
        if (ok) writes++;
        return ok;
      };
      return s;
    };
    const a = sidecar(counted(), clock, job);
    const b = sidecar(counted(), clock, job);
    // A busy minute: failures on several hosts, blocks, passes of both interleaved.
    for (let i = 0; i < 6; i++) {
      job.fail(`n${i % 3}`, clock.now());
      clock.advance(5_000);
      await a.pass();
      clock.advance(2_000);
      await b.pass();
    }
    // Quiet: after a round or two of merges, neither writes.
    for (let i = 0; i < 3; i++) {
      clock.advance(10_000);
      await a.pass();
      await b.pass();
    }
    const settled = writes;
    const quietMs = 5 * MIN; // within the window: no incident ages out meanwhile
    for (let t = 0; t < quietMs; t += 10_000) {
      clock.advance(10_000);
      await a.pass();
      await b.pass();
    }
    // Only the runner's lease renewals (leadership.ts): one write per half lease, never a merge.
    assert.ok(writes - settled <= Math.ceil(quietMs / (leaseMsFor(10_000) / 2)), `a quiet pair writes only lease renewals: ${writes - settled} writes in 5 min`);
    assert.ok(writes - settled >= 1, 'the lease is renewed');
    assert.deepEqual([a.view().runner.role, b.view().runner.role].sort(), ['runner', 'standby']);
  });
});
