/**
 * A block reserved in the detector's state record before its item is written (reservation.ts), and
 * the job's detector lease (leadership.ts), pure and on a memory store with a fake clock: what a
 * reservation counts while its item is being added, what becomes of one whose item never comes
 * (a sidecar stopped mid-pass), how two views of one merge, and how the lease changes hands.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { DEFAULT_DECIDE_SETTINGS, DecideSettings, decide } from '../../src/detect/decide';
import { holdsCap, nextBlock, observeBlocks, recordBlock } from '../../src/detect/auto-blocks';
import { RESERVATION_MS, reserveBlock } from '../../src/detect/reservation';
import { mergeStates } from '../../src/detect/merge-state';
import { decodeState, emptyState, encodeState } from '../../src/detect/state';
import { ingest } from '../../src/detect/incidents';
import { leaseMsFor } from '../../src/detect/leadership';
import { MemoryBackend, MemoryStore } from '../../src/store/memory-store';
import { UNIT_APP, storeAdder, unitDetector } from './unit-detector';

const H = 3_600_000;
const T0 = 1_716_900_000_000;
const S: DecideSettings = { ...DEFAULT_DECIDE_SETTINGS, mode: 'enforce' };

function reservedAtT0(withBlockBefore = false) {
  const st = emptyState();
  if (withBlockBefore) {
    recordBlock(st, { host: 'n1', itemId: 'n1', end: T0 - H / 2, level: 2 }, 'enforce', T0 - 5 * H);
    st.hosts.n1.lastBlock!.endedAt = T0 - H / 2;
    st.hosts.n1.lastBlock!.endedBy = 'expiry';
  }
  reserveBlock(st, { host: 'n1', itemId: 'n1', end: T0 + H, level: 3 }, T0);
  return st;
}

describe('detector: a block reserved before its item is written', () => {
  it('holds its cap slot while its item is being added; abandoned (not an operator unblock) once old; the backoff keeps the block before it', () => {
    const st = reservedAtT0(true);
    assert.equal(st.hosts.n1.lastBlock?.pending, true);
    assert.ok(holdsCap(st.hosts.n1.lastBlock, undefined, 'enforce', T0 + 1000), 'a young reservation holds its slot');
    // Its item is not there yet: not an operator's unblock, nothing ended.
    assert.deepEqual(observeBlocks(st, () => undefined, T0 + RESERVATION_MS - 1).unblockedByOperator, []);
    assert.equal(st.hosts.n1.lastBlock?.endedAt, undefined);
    // The sidecar that reserved it stopped before adding it: abandoned, slot free, no forgiveness.
    assert.deepEqual(observeBlocks(st, () => undefined, T0 + RESERVATION_MS).unblockedByOperator, []);
    const b = st.hosts.n1.lastBlock!;
    assert.equal(b.abandoned, true);
    assert.equal(b.pending, undefined);
    assert.equal(st.hosts.n1.operatorUnblockedAt, undefined);
    assert.ok(!holdsCap(b, undefined, 'enforce', T0 + RESERVATION_MS));
    // The backoff measures the block before the reservation (level 2, ended 30 min before T0).
    assert.equal(nextBlock(b, T0 + RESERVATION_MS, S).level, 3);
    // A record round trip keeps all of it.
    assert.deepEqual(decodeState(encodeState(st)).state.hosts.n1, st.hosts.n1);
  });

  it("is confirmed once its item is in force for this job; another job's item of the host (a join in flight) does not confirm it", () => {
    const st = reservedAtT0();
    observeBlocks(st, () => ({ end: T0 + 4 * H, updatedBy: 'detector', forJob: false }), T0 + 1000);
    assert.equal(st.hosts.n1.lastBlock?.pending, true, 'still ours to add');
    observeBlocks(st, () => ({ end: T0 + H, updatedBy: 'detector', forJob: true }), T0 + 2000);
    assert.equal(st.hosts.n1.lastBlock?.pending, undefined);
    assert.ok(holdsCap(st.hosts.n1.lastBlock, { itemId: 'n1', by: 'detector', end: T0 + H, action: 'MARK_BLOCKED' }, 'enforce', T0 + 2000));
    // Long after, the item gone before its end: an operator's unblock as for any block.
    assert.deepEqual(observeBlocks(st, () => undefined, T0 + H / 2).unblockedByOperator, ['n1']);
  });

  it('merge: confirmed by either side wins over pending, abandoned by either side wins; idempotent', () => {
    const pending = reservedAtT0();
    const confirmed = structuredClone(pending);
    delete confirmed.hosts.n1.lastBlock!.pending;
    const m = mergeStates(pending, confirmed);
    assert.equal(m.hosts.n1.lastBlock?.pending, undefined);
    assert.deepEqual(mergeStates(confirmed, pending).hosts, m.hosts);
    const abandoned = structuredClone(pending);
    observeBlocks(abandoned, () => undefined, T0 + RESERVATION_MS);
    const m2 = mergeStates(pending, abandoned);
    assert.equal(m2.hosts.n1.lastBlock?.abandoned, true);
    assert.equal(m2.hosts.n1.lastBlock?.end, T0, 'no end of a block that was never made');
    assert.deepEqual(mergeStates(m2, m2), m2);
    assert.deepEqual(mergeStates(abandoned, pending).hosts, m2.hosts);
  });

  it('decide: a host another sidecar of the job is blocking is not planned again, and its reservation counts against the cap', () => {
    const st = reservedAtT0();
    const fail = (host: string, i: number) => ({ key: `k:${host}:${i}`, source: 'test', host, at: T0 - 10_000 + i, group: `g:${host}:${i}`, signature: `s:${host}`, summary: 'x' });
    ingest(st, [0, 1, 2].flatMap((i) => [fail('n1', i), fail('n2', i)]), T0, S.windowMs);
    const r = decide({ now: T0 + 1000, settings: S, state: st, runningNodes: 10, blocked: new Map(), applicationId: UNIT_APP });
    assert.equal(r.hosts.find((h) => h.host === 'n1')?.decision, 'blocked');
    assert.equal(r.hosts.find((h) => h.host === 'n2')?.decision, 'cap');
    assert.deepEqual(r.blocks, []);
    assert.equal(r.cap.inUse, 1);
  });
});

describe('detector: a reservation that aged while its sidecar stalled', () => {
  it('is given up, not used, once half its life is gone: another sidecar of the job may have abandoned it and taken its slot', async () => {
    // 20 RUNNING nodes x 0.1: two automatic blocks at most. Incidents count for a minute, so the
    // failures sidecar a saw are out of the window by the time sidecar b passes.
    const config = { 'cluster.resource-blocklist.detector.window': '60 s' };
    const clock = new FakeClock(T0);
    const backend = new MemoryBackend();
    const storeA = new MemoryStore({ backend, clock });
    const storeB = new MemoryStore({ backend, clock });
    const failures = (source: string, hosts: string[]) => ({
      name: source,
      poll: async () => ({ failures: hosts.flatMap((host) => [0, 1, 2].map((i) => ({ key: `${source}:${host}:${i}`, source, host, at: clock.now() - 5000 + i, group: `${source}:${host}:${i}`, signature: `sig-${host}`, summary: 'x' }))) }),
    });
    const b = unitDetector({ clock, store: storeB, config, member: 'b', sources: [failures('b-src', ['n3', 'n4'])], addItem: storeAdder(storeB, clock) });
    const addA = storeAdder(storeA, clock);
    // Sidecar a reserves n1 and n2 at T0 (the cap's two slots). Its first add stalls (a store that
    // stopped answering) for longer than its lease and the reservations' life: b takes over
    // meanwhile, abandons both reservations (no item came) and blocks n3 and n4. Then a's store
    // answers again: the first add failed, the second would go through.
    const a = unitDetector({
      clock,
      store: storeA,
      config,
      member: 'a',
      sources: [failures('a-src', ['n1', 'n2'])],
      addItem: async (spec, principal) => {
        if (spec.node !== 'n1') return addA(spec, principal);
        clock.advance(RESERVATION_MS + 10_000);
        await b.pass();
        assert.equal(b.view().runner.role, 'runner', "b took over once a's lease lapsed");
        throw new Error('operation timed out');
      },
    });
    await a.pass();
    const auto = (await storeA.list()).filter((i) => i.created.by === 'detector' && i.endTimestamp > clock.now()).map((i) => i.id);
    assert.deepEqual(auto.sort(), ['n3', 'n4'], 'never more automatic blocks than the cap');
    assert.equal(a.view().report?.hosts.find((h) => h.host === 'n2')?.decision, 'block');
    assert.match(a.view().report?.hosts.find((h) => h.host === 'n2')?.why ?? '', /reservation/);
  });
});

/**
 * A detector on a memory store whose one source reports three failures on n3 (enough to block it),
 * and whose first write of a pending reservation is applied, after which `afterApplied` answers
 * for the call instead (false: its reply lost; a throw: the call failed).
 */
function detectorWhoseReservationMisfires(afterApplied: () => boolean) {
  const clock = new FakeClock(T0);
  const store = new MemoryStore({ clock });
  const added: string[] = [];
  const source = { name: 'test', poll: async () => ({ failures: [0, 1, 2].map((i) => ({ key: `k${i}`, source: 'test', host: 'n3', at: clock.now() - 5000 + i, group: `g${i}`, signature: 's', summary: 'x' })) }) };
  const d = unitDetector({ clock, store, sources: [source], addItem: async (spec) => (added.push(spec.id), { outcome: 'created' }) });
  const replace = store.replaceRecord.bind(store);
  let misfired = false;
  store.replaceRecord = async (k, e, v) => {
    const ok = await replace(k, e, v);
    if (ok && !misfired && v.includes('"pending":true')) {
      misfired = true;
      return afterApplied();
    }
    return ok;
  };
  return { clock, added, d, misfired: () => misfired };
}

describe('detector: a reservation whose answer was lost', () => {
  it("is its own once the re-read finds its text (ZooKeeper answers a retried set that was applied with BAD_VERSION): the block is made at once, not taken for another sidecar's", async () => {
    // The reservation's write is applied, but its reply is lost: the store's retry answers false.
    const { added, d, misfired } = detectorWhoseReservationMisfires(() => false);
    await d.pass();
    assert.ok(misfired(), 'the reservation was written, its answer lost');
    assert.deepEqual(added, ['n3'], 'blocked in this pass');
    assert.equal(d.view().report?.hosts.find((h) => h.host === 'n3')?.decision, 'block');
  });
});

describe('detector: a reservation written by a pass that then failed', () => {
  it('is given up by its own sidecar at its next pass (it knows it never added the item), not held for two minutes as if another sidecar were adding it', async () => {
    // The reservation's write is applied, then the call fails (a ZooKeeper session that expired
    // before the answer came): the pass fails before it adds anything.
    const { clock, added, d } = detectorWhoseReservationMisfires(() => {
      throw new Error('session expired');
    });
    await d.pass();
    assert.match(String(d.view().lastError), /session expired/);
    assert.deepEqual(added, []);
    clock.advance(10_000);
    await d.pass();
    assert.equal(d.view().lastError, null);
    assert.deepEqual(added, ['n3'], 'blocked at the next pass');
  });
});

describe("detector: the job's detector lease", () => {
  it('one sidecar runs, the other stands by; a clean stop hands over at the next pass; a crash after the lease lapses', async () => {
    const clock = new FakeClock(T0);
    const backend = new MemoryBackend();
    const make = (member: string) => unitDetector({ clock, store: new MemoryStore({ backend, clock }), member });
    const a = make('a');
    const b = make('b');
    await a.pass();
    await b.pass();
    assert.deepEqual([a.view().runner.role, b.view().runner.role], ['runner', 'standby']);
    assert.equal(b.view().runner.holder?.member, 'a');
    await a.stop();
    clock.advance(10_000);
    await b.pass();
    assert.equal(b.view().runner.role, 'runner', 'handed over at once');
    // b crashes (no stop): a restarted sidecar c stands by until the lease lapses, then runs.
    const c = make('c');
    const lease = leaseMsFor(10_000);
    clock.advance(lease - 20_000);
    await c.pass();
    assert.equal(c.view().runner.role, 'standby');
    clock.advance(20_000);
    await c.pass();
    assert.equal(c.view().runner.role, 'runner');
  });

  it('a store that cannot write the reservation makes no block', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore({ clock });
    let adds = 0;
    const source = { name: 'test', poll: async () => ({ failures: [0, 1, 2].map((i) => ({ key: `k${i}`, source: 'test', host: 'n3', at: clock.now() - 5000 + i, group: `g${i}`, signature: 's', summary: 'x' })) }) };
    const d = unitDetector({ clock, store, sources: [source], addItem: async () => (adds++, { outcome: 'created' }) });
    await d.pass(); // claims the lease, and blocks n3
    assert.equal(adds, 1);
    const replace = store.replaceRecord.bind(store);
    store.replaceRecord = async (k, e, v) => {
      if (v.includes('"n4"')) throw new Error('store unreachable');
      return replace(k, e, v);
    };
    const more = { name: 'more', poll: async () => ({ failures: [0, 1, 2].map((i) => ({ key: `m${i}`, source: 'more', host: 'n4', at: clock.now() - 5000 + i, group: `h${i}`, signature: 't', summary: 'y' })) }) };
    const d2 = unitDetector({ clock, store, sources: [more], member: 'other', addItem: async () => (adds++, { outcome: 'created' }) });
    await d.stop();
    clock.advance(10_000);
    await d2.pass();
    assert.match(String(d2.view().lastError), /store unreachable/);
    assert.equal(adds, 1, 'no item without its reservation');
  });
});
