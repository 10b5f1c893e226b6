/**
 * The detector's own blocks beside the other writers of a shared store, pure, fake time: an
 * operator who makes an automatic block permanent (its end Infinity, which JSON cannot hold), then
 * lifts it after a restart; another sidecar's expiry job, its clock a little ahead, deleting the
 * item a few seconds before its end; the backoff after an operator's long extension.
 */
import { strict as assert } from 'node:assert';
import { DEFAULT_DECIDE_SETTINGS, DecideSettings } from '../../src/detect/decide';
import { StoredBlock, nextBlock, observeBlocks, recordBlock } from '../../src/detect/auto-blocks';
import { decodeState, emptyState, encodeState } from '../../src/detect/state';

const H = 3_600_000;
const T0 = 1_716_900_000_000;
const S: DecideSettings = { ...DEFAULT_DECIDE_SETTINGS, mode: 'enforce' };

function blockedAtT0() {
  const st = emptyState();
  recordBlock(st, { host: 'n1', itemId: 'n1', end: T0 + H, level: 0 }, 'enforce', T0);
  return st;
}

describe('detector beside other writers: permanent extensions, early expiry, backoff', () => {
  it('an operator makes it permanent; the sidecar restarts; the operator lifts it: an operator unblock, not an expiry at 1970', () => {
    const st = blockedAtT0();
    const permanent: StoredBlock = { end: Infinity, updatedBy: 'alice' };
    observeBlocks(st, () => permanent, T0 + 10);
    const restarted = decodeState(encodeState(st)).state;
    assert.ok((restarted.hosts.n1.lastBlock?.end ?? 0) > T0 + 1000 * H, `end read back as ${restarted.hosts.n1.lastBlock?.end}`);
    const { unblockedByOperator } = observeBlocks(restarted, () => undefined, T0 + 48 * H);
    assert.deepEqual(unblockedByOperator, ['n1']);
    assert.equal(restarted.hosts.n1.lastBlock?.endedBy, 'operator');
  });

  it("a record written with a permanent end as null reads back as permanent", () => {
    const st = blockedAtT0();
    const text = encodeState(st).replace(`"end":${T0 + H}`, '"end":null');
    assert.match(text, /"end":null/);
    assert.equal(decodeState(text).state.hosts.n1.lastBlock?.end, Number.MAX_SAFE_INTEGER);
  });

  it("deleted a few seconds before its end by another sidecar's expiry job (its clock ahead): an expiry", () => {
    const st = blockedAtT0();
    const { unblockedByOperator } = observeBlocks(st, () => undefined, T0 + H - 3_000);
    assert.deepEqual(unblockedByOperator, []);
    assert.equal(st.hosts.n1.lastBlock?.endedBy, 'expiry');
    assert.equal(st.hosts.n1.operatorUnblockedAt, undefined);
    // Well before its end, it is an operator's unblock as ever.
    const early = blockedAtT0();
    assert.deepEqual(observeBlocks(early, () => undefined, T0 + H / 2).unblockedByOperator, ['n1']);
  });

  it("backoff measures the detector's own block: a permanent extension an operator lifted does not double every later block", () => {
    const st = blockedAtT0();
    observeBlocks(st, () => ({ end: Infinity, updatedBy: 'alice' }), T0 + 10);
    observeBlocks(st, () => undefined, T0 + 72 * H); // lifted after three days
    // Soon after (within the 1 h the detector gave it): twice as long, as after any lifted block.
    assert.equal(nextBlock(st.hosts.n1.lastBlock, T0 + 72 * H + H / 2, S).level, 1);
    // A day later: a first block again.
    assert.deepEqual(nextBlock(st.hosts.n1.lastBlock, T0 + 96 * H, S), { level: 0, durationMs: H });
  });
});
