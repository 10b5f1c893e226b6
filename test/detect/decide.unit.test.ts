import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { DEFAULT_DECIDE_SETTINGS, DecideSettings, decide } from '../../src/detect/decide';
import { ingest, recordHealth } from '../../src/detect/incidents';
import { EffectiveBlock, consumeWhileBlocked, nextBlock, observeBlocks, recordBlock } from '../../src/detect/auto-blocks';
import { explain } from '../../src/detect/explain';
import { DetectorState, decodeState, emptyState, encodeState } from '../../src/detect/state';
import { Failure } from '../../src/detect/types';

const MIN = 60_000;
const H = 3_600_000;
const T0 = 1_716_900_000_000;
const S: DecideSettings = { ...DEFAULT_DECIDE_SETTINGS, mode: 'enforce' };

let seq = 0;
function failure(host: string, at: number, over: Partial<Failure> = {}): Failure {
  seq++;
  return {
    key: `k${seq}`,
    source: 'flink',
    host,
    at,
    group: `g${seq}`,
    signature: 'java.io.IOException: No space left on device',
    summary: 'java.io.IOException: No space left on device',
    ...over,
  };
}

function run(state: DetectorState, now: number, opts: { settings?: Partial<DecideSettings>; running?: number | null; blocked?: Map<string, EffectiveBlock> } = {}) {
  return decide({ now, settings: { ...S, ...opts.settings }, state, runningNodes: opts.running === undefined ? 100 : opts.running, blocked: opts.blocked ?? new Map(), applicationId: 'application_1_0001' });
}

describe('detect/decide: the detector\'s rules (pure, fake clock)', () => {
  it('incidents, not log lines: one restart with many concurrent exceptions on a host is one incident; re-reads count once', () => {
    const st = emptyState();
    const restart = (i: number) => [0, 1, 2, 3].map((j) => failure('node7', T0 + i * MIN + j, { group: `flink:job:${i}`, key: `flink:job:${i}:${j}` }));
    ingest(st, restart(0), T0 + 5 * MIN, S.windowMs);
    ingest(st, restart(0), T0 + 5 * MIN, S.windowMs); // re-read of the same history
    ingest(st, restart(1), T0 + 5 * MIN, S.windowMs);
    assert.equal(st.incidents.length, 2);
    const r = run(st, T0 + 5 * MIN);
    assert.equal(r.hosts[0].score, 2);
    assert.equal(r.hosts[0].decision, 'watching');
    assert.match(r.hosts[0].why, /2 of 3 failures in 10m/);
    assert.deepEqual(r.blocks, []);
  });

  it('a Flink failure and YARN\'s completion of the same container are one incident', () => {
    const st = emptyState();
    ingest(st, [failure('node7', T0, { containerId: 'c1', group: 'flink:j:1' }), failure('node7', T0 + 50, { containerId: 'c1', group: 'yarn:c1', source: 'yarn-containers', signature: 'exit 137', summary: 'exit 137' })], T0 + MIN, S.windowMs);
    assert.equal(st.incidents.length, 1);
    assert.deepEqual(st.incidents[0].sources, ['flink', 'yarn-containers']);
  });

  it('the same container failing in three restarts (the task manager lived) is three incidents', () => {
    const st = emptyState();
    ingest(st, [0, 1, 2].map((i) => failure('node7', T0 + i * 1000, { containerId: 'c1', group: `flink:j:${i}` })), T0 + MIN, S.windowMs);
    assert.equal(st.incidents.length, 3);
    assert.equal(run(st, T0 + MIN).hosts[0].decision, 'block');
  });

  it("a block spends its own evidence, even failures stamped a little ahead of the detector's clock", () => {
    const st = emptyState();
    // Flink's clock runs 3 ms ahead of ours: the third failure is stamped after the pass that blocks.
    ingest(st, [0, 1, 3].map((d, i) => failure('node7', T0 + d, { group: `flink:j:${i}` })), T0 + 1, S.windowMs);
    const r = run(st, T0 + 1);
    assert.equal(r.blocks.length, 1);
    recordBlock(st, r.blocks[0], 'enforce', T0 + 1);
    const blocked = new Map<string, EffectiveBlock>([['node7', { itemId: 'node7', by: 'detector', end: r.blocks[0].end, action: r.blocks[0].action }]]);
    const after = run(st, T0 + 2, { blocked });
    assert.equal(after.hosts[0].score, 0, 'no incident of the block counts toward the next one');
  });

  it('blocks at failures-per-host within the window; incidents older than the window fall out (decay)', () => {
    const st = emptyState();
    ingest(st, [failure('node7', T0), failure('node7', T0 + 4 * MIN)], T0 + 4 * MIN, S.windowMs);
    ingest(st, [failure('node7', T0 + 11 * MIN)], T0 + 11 * MIN, S.windowMs);
    let r = run(st, T0 + 11 * MIN);
    assert.equal(r.hosts[0].score, 2, 'the first incident is out of the 10 min window');
    ingest(st, [failure('node7', T0 + 12 * MIN, { summary: 'exit 137', signature: 'exit 137', source: 'yarn-containers', containerId: 'container_x' })], T0 + 12 * MIN, S.windowMs);
    r = run(st, T0 + 12 * MIN);
    assert.equal(r.hosts[0].decision, 'block');
    assert.equal(r.blocks.length, 1);
    const b = r.blocks[0];
    assert.equal(b.host, 'node7');
    assert.equal(b.durationMs, H);
    assert.equal(b.end, T0 + 12 * MIN + H);
    assert.match(b.cause, /^auto: 3 failures in 10m on node7 \(java\.io\.IOException: No space left on device ×2, exit 137 ×1\); blocked for 1h; evidence: /);
    assert.match(b.cause, /yarn-containers exit 137 container_x/);
    assert.ok(!/[\n\t]/.test(b.cause));
  });

  it('ignores failures older than the window when first seen, and remembers them so they never count', () => {
    const st = emptyState();
    const old = failure('node1', T0 - 20 * MIN);
    const r = ingest(st, [old], T0, S.windowMs);
    assert.equal(r.stale, 1);
    assert.equal(st.incidents.length, 0);
  });

  it('job-fault contrast: the same failure on job-fault-hosts distinct hosts blames none of them; a host-only failure still counts', () => {
    const st = emptyState();
    const npe = { signature: 'java.lang.NullPointerException', summary: 'java.lang.NullPointerException' };
    const fs: Failure[] = [];
    for (const h of ['node1', 'node2', 'node3']) for (let i = 0; i < 3; i++) fs.push(failure(h, T0 + i * MIN, npe));
    for (let i = 0; i < 3; i++) fs.push(failure('node9', T0 + i * MIN));
    ingest(st, fs, T0 + 5 * MIN, S.windowMs);
    const r = run(st, T0 + 5 * MIN);
    assert.deepEqual(r.jobFaults, [{ signature: 'java.lang.NullPointerException', hosts: ['node1', 'node2', 'node3'] }]);
    assert.deepEqual(r.blocks.map((b) => b.host), ['node9']);
    for (const h of ['node1', 'node2', 'node3']) {
      const hr = r.hosts.find((x) => x.host === h)!;
      assert.equal(hr.decision, 'job-fault');
      assert.equal(hr.score, 0);
      assert.match(hr.why, /the job's fault/);
    }
    assert.deepEqual(r.suppressed.filter((x) => x.reason === 'job-fault').map((x) => x.host), ['node1', 'node2', 'node3']);
    // Two hosts only: not yet the job's fault.
    const st2 = emptyState();
    ingest(st2, fs.filter((f) => f.host !== 'node3'), T0 + 5 * MIN, S.windowMs);
    assert.deepEqual(run(st2, T0 + 5 * MIN).blocks.map((b) => b.host).sort(), ['node1', 'node2', 'node9']);
  });

  it('cap: at most max-blocked-fraction of RUNNING nodes blocked automatically; the rest refused (most-failing first); manual blocks never dropped', () => {
    const st = emptyState();
    const fs: Failure[] = [];
    ['a', 'b', 'c'].forEach((h, k) => {
      for (let i = 0; i < 3 + k; i++) fs.push(failure(h, T0 + i * 1000, { signature: `sig-${h}`, summary: `E ${h}` }));
    });
    ingest(st, fs, T0 + MIN, S.windowMs);
    const manual = new Map<string, EffectiveBlock>([['m', { itemId: 'm', by: 'alice', end: T0 + 10 * H, action: 'MARK_BLOCKED' }]]);
    const r = run(st, T0 + MIN, { running: 20, blocked: manual }); // 0.1 × 20 = 2
    assert.deepEqual(r.cap, { max: 2, inUse: 2, runningNodes: 20 }, 'in use after this pass');
    assert.deepEqual(r.blocks.map((b) => b.host), ['c', 'b']);
    const a = r.hosts.find((x) => x.host === 'a')!;
    assert.equal(a.decision, 'cap');
    assert.match(a.why, /2 of at most 2 automatic blocks \(0\.1 of 20 RUNNING nodes\)/);
    assert.deepEqual(r.suppressed, [{ host: 'a', reason: 'cap' }]);
    // Our blocks in effect count toward the cap on the next pass.
    for (const b of r.blocks) recordBlock(st, b, 'enforce', T0 + MIN);
    const blocked = new Map(r.blocks.map((b) => [b.host, { itemId: b.itemId, by: 'detector', end: b.end, action: b.action } as EffectiveBlock]));
    const r2 = run(st, T0 + 2 * MIN, { running: 20, blocked });
    assert.equal(r2.cap.inUse, 2);
    assert.equal(r2.hosts.find((x) => x.host === 'a')!.decision, 'cap');
    // The RM's node list unreadable: no automatic block at all.
    const r3 = run(st, T0 + 2 * MIN, { running: null, blocked });
    assert.equal(r3.hosts.find((x) => x.host === 'a')!.decision, 'cap');
    assert.match(r3.hosts.find((x) => x.host === 'a')!.why, /could not be read/);
  });

  it('a blocked host is not counted again; after a block its incidents are consumed', () => {
    const st = emptyState();
    ingest(st, [0, 1, 2].map((i) => failure('n', T0 + i)), T0 + MIN, S.windowMs);
    const r = run(st, T0 + MIN);
    recordBlock(st, r.blocks[0], 'enforce', T0 + MIN);
    const blocked = new Map([['n', { itemId: 'n', by: 'detector', end: T0 + MIN + H, action: 'MARK_BLOCKED' } as EffectiveBlock]]);
    assert.equal(run(st, T0 + 2 * MIN, { blocked }).hosts[0].decision, 'blocked');
    // The block expires; the old incidents do not block it again.
    observeBlocks(st, () => undefined, T0 + MIN + H + 1);
    assert.equal(st.hosts.n.lastBlock!.endedBy, 'expiry');
    const after = run(st, T0 + MIN + H + 1);
    assert.deepEqual(after.blocks, []);
  });

  it("failures a host has under a block (ours, or an operator's) are spent by it: they do not block it once the block is gone", () => {
    // Our own block: the job keeps failing on the host's task managers (MARK_BLOCKED keeps them) until near its end.
    const st = emptyState();
    ingest(st, [0, 1, 2].map((i) => failure('n', T0 + i)), T0 + MIN, S.windowMs);
    recordBlock(st, run(st, T0 + MIN).blocks[0], 'enforce', T0 + MIN);
    const ours = new Map([['n', { itemId: 'n', by: 'detector', end: T0 + MIN + H, action: 'MARK_BLOCKED' } as EffectiveBlock]]);
    ingest(st, [0, 1, 2].map((i) => failure('n', T0 + H - MIN + i, { group: `late:${i}`, key: `late:${i}` })), T0 + H, S.windowMs);
    consumeWhileBlocked(st, ours.keys(), 'enforce', T0 + H);
    assert.equal(run(st, T0 + H, { blocked: ours }).hosts[0].decision, 'blocked');
    observeBlocks(st, () => undefined, T0 + MIN + H);
    assert.deepEqual(run(st, T0 + MIN + H).blocks, [], 'the failures under the block do not re-block it at its end');

    // An operator's block, lifted: the same.
    const op = emptyState();
    const theirs = new Map([['m', { itemId: 'm', by: 'ops', end: T0 + H, action: 'MARK_BLOCKED' } as EffectiveBlock]]);
    ingest(op, [0, 1, 2].map((i) => failure('m', T0 + i)), T0 + MIN, S.windowMs);
    consumeWhileBlocked(op, theirs.keys(), 'enforce', T0 + MIN);
    assert.deepEqual(run(op, T0 + 2 * MIN).blocks, []);
    // Hosts without incidents leave the state as it was (it does not grow with the blocklist).
    consumeWhileBlocked(op, ['x1', 'x2'], 'enforce', T0 + 2 * MIN);
    assert.deepEqual(Object.keys(op.hosts), ['m']);
  });

  it('backoff: blocked again soon after a block ended → twice as long, up to max-block-duration; later → back to the base', () => {
    const clock = new FakeClock(T0);
    const st = emptyState();
    const durations: number[] = [];
    for (let round = 0; round < 7; round++) {
      ingest(st, [0, 1, 2].map((i) => failure('n', clock.now() + i)), clock.now() + 10, S.windowMs);
      clock.advance(10);
      const r = run(st, clock.now());
      assert.equal(r.blocks.length, 1, `round ${round}`);
      durations.push(r.blocks[0].durationMs / H);
      recordBlock(st, r.blocks[0], 'enforce', clock.now());
      clock.advance(r.blocks[0].durationMs);
      observeBlocks(st, () => undefined, clock.now());
      clock.advance(MIN); // fails again a minute after the block ended
    }
    assert.deepEqual(durations, [1, 2, 4, 8, 16, 24, 24]);
    // A long quiet spell resets the backoff.
    clock.advance(48 * H);
    ingest(st, [0, 1, 2].map((i) => failure('n', clock.now() + i)), clock.now() + 10, S.windowMs);
    clock.advance(10);
    assert.equal(run(st, clock.now()).blocks[0].durationMs, H);
    assert.deepEqual(nextBlock(undefined, T0, S), { level: 0, durationMs: H });
  });

  it('operator unblock is respected: the same incidents never re-block; new ones can', () => {
    const st = emptyState();
    const history = [0, 1, 2].map((i) => failure('n', T0 + i));
    ingest(st, history, T0 + MIN, S.windowMs);
    const r = run(st, T0 + MIN);
    recordBlock(st, r.blocks[0], 'enforce', T0 + MIN);
    // An operator deletes the item 5 minutes later.
    const o = observeBlocks(st, () => undefined, T0 + 6 * MIN);
    assert.deepEqual(o.unblockedByOperator, ['n']);
    assert.equal(st.hosts.n.lastBlock!.endedBy, 'operator');
    // A restart re-reads the same history: nothing new is counted, nothing is blocked.
    assert.equal(ingest(st, history, T0 + 6 * MIN, S.windowMs).duplicates, 3);
    let again = run(st, T0 + 6 * MIN);
    assert.deepEqual(again.blocks, []);
    // New incidents after the unblock, with the forgiven ones, would reach the threshold: suppressed, said so.
    ingest(st, [failure('n', T0 + 7 * MIN)], T0 + 7 * MIN, S.windowMs);
    again = run(st, T0 + 7 * MIN);
    assert.equal(again.hosts[0].decision, 'operator-unblock');
    assert.match(again.hosts[0].why, /an operator lifted the automatic block/);
    assert.deepEqual(again.hosts[0].incidents.map((i) => i.status), ['forgiven', 'forgiven', 'forgiven', 'counted']);
    ingest(st, [failure('n', T0 + 8 * MIN), failure('n', T0 + 9 * MIN)], T0 + 9 * MIN, S.windowMs);
    again = run(st, T0 + 9 * MIN);
    assert.equal(again.hosts[0].decision, 'block', 'three new incidents after the unblock');
    assert.equal(again.blocks[0].level, 1, 'blocked again soon after the operator lifted the last block');
  });

  it('operator unblock of incidents not consumed by a block: suppressed with reason operator-unblock', () => {
    const st = emptyState();
    ingest(st, [failure('n', T0), failure('n', T0 + 1)], T0 + MIN, S.windowMs);
    st.hosts.n = { countAfter: T0 + MIN, operatorUnblockedAt: T0 + MIN, lastBlock: { itemId: 'n', start: T0 - H, end: T0 + H, level: 0, mode: 'enforce', endedAt: T0 + MIN, endedBy: 'operator' } };
    ingest(st, [failure('n', T0 + 2 * MIN)], T0 + 2 * MIN, S.windowMs);
    const r = run(st, T0 + 2 * MIN);
    assert.equal(r.hosts[0].decision, 'operator-unblock');
    assert.deepEqual(r.suppressed, [{ host: 'n', reason: 'operator-unblock' }]);
  });

  it('shadow mode decides the same but records a would-be block of its own; the cap counts shadow blocks', () => {
    const st = emptyState();
    ingest(st, [0, 1, 2].map((i) => failure('n', T0 + i)), T0 + MIN, S.windowMs);
    const r = run(st, T0 + MIN, { settings: { mode: 'shadow' } });
    assert.equal(r.hosts[0].decision, 'would-block');
    recordBlock(st, r.blocks[0], 'shadow', T0 + MIN);
    const r2 = run(st, T0 + 2 * MIN, { settings: { mode: 'shadow' } });
    assert.equal(r2.hosts[0].decision, 'shadow-blocked');
    assert.equal(r2.cap.inUse, 1);
    observeBlocks(st, () => undefined, T0 + MIN + H);
    assert.equal(st.hosts.n.lastBlock!.endedBy, 'expiry', 'shadow blocks end by themselves, never as an operator unblock');
  });

  it('node health is evidence; a DECOMMISSIONING node is evacuated early only when configured, once, outside the cap', () => {
    const st = emptyState();
    recordHealth(st, [{ host: 'd', state: 'DECOMMISSIONING', healthReport: '', seenAt: T0 }, { host: 'u', state: 'UNHEALTHY', healthReport: 'disk full', seenAt: T0 }], T0);
    let r = run(st, T0, { running: 5 });
    assert.deepEqual(r.blocks, []);
    assert.equal(r.hosts.find((h) => h.host === 'u')!.health!.healthReport, 'disk full');
    r = run(st, T0, { running: 5, settings: { evacuateDecommissioning: true } });
    assert.equal(r.blocks.length, 1);
    assert.equal(r.blocks[0].action, 'MARK_BLOCKED_AND_EVACUATE_TASKS');
    assert.equal(r.blocks[0].capped, false);
    assert.equal(r.cap.max, 0, 'the cap (0.1 × 5 = 0) does not stop an evacuation YARN itself ordered');
    st.hosts.d = { evacuatedAt: T0 };
    assert.deepEqual(run(st, T0 + 1, { running: 5, settings: { evacuateDecommissioning: true } }).blocks, []);
    recordHealth(st, [], T0 + 2);
    assert.equal(st.hosts.d.evacuatedAt, undefined, 'back to RUNNING: a later decommissioning evacuates again');
  });

  it('restart: the state round-trips through its stored text; garbage starts afresh with a reason', () => {
    const st = emptyState();
    ingest(st, [failure('n', T0), failure('n', T0 + 1)], T0 + MIN, S.windowMs);
    st.hosts.n = { countAfter: T0 - 1 };
    const back = decodeState(encodeState(st));
    assert.equal(back.problem, undefined);
    assert.deepEqual(back.state, st);
    assert.equal(run(back.state, T0 + MIN).hosts[0].score, 2);
    assert.match(decodeState('{nope').problem!, /not JSON/);
    assert.match(decodeState('{"version":9}').problem!, /unknown shape/);
    assert.deepEqual(decodeState(undefined).state, emptyState());
  });

  it('the cause stays one line within the item limit, however long the evidence', () => {
    const st = emptyState();
    ingest(st, Array.from({ length: 12 }, (_, i) => failure('n', T0 + i, { summary: `E${i} ${'x'.repeat(300)}\nline2` })), T0 + MIN, S.windowMs);
    const c = explain('n', st.incidents, S, H, 0);
    assert.ok(c.length <= 1000, String(c.length));
    assert.ok(!/[\u0000-\u001f]/.test(c));
    assert.match(c, /^auto: 12 failures in 10m on n /);
  });
});
