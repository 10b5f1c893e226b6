/**
 * The automatic-block cap counts the detector's own blocks, while they are the detector's alone
 * (auto-blocks.ts#holdsCap): an automatic block an operator extended, re-caused or re-created is
 * theirs and frees the cap at once; one an operator shortened or lifted frees it at once; a later
 * end another job's detector merged in does not make it count longer. Pure, fake time.
 */
import { strict as assert } from 'node:assert';
import { DEFAULT_DECIDE_SETTINGS, DecideSettings, decide } from '../../src/detect/decide';
import { ingest } from '../../src/detect/incidents';
import { EffectiveBlock, StoredBlock, holdsCap, observeBlocks, recordBlock } from '../../src/detect/auto-blocks';
import { DetectorState, emptyState } from '../../src/detect/state';
import { Failure } from '../../src/detect/types';

const MIN = 60_000;
const H = 3_600_000;
const T0 = 1_716_900_000_000;
const S: DecideSettings = { ...DEFAULT_DECIDE_SETTINGS, mode: 'enforce' };
/** 10 RUNNING nodes × 0.1: one automatic block at a time. */
const RUNNING = 10;

let seq = 0;
function failThrice(st: DetectorState, host: string, at: number): void {
  const fs: Failure[] = [0, 1, 2].map((i) => {
    seq++;
    return { key: `k${seq}`, source: 'flink', host, at: at + i, group: `g${seq}`, signature: `sig-${host}`, summary: 'No space left on device' };
  });
  ingest(st, fs, at + 10, S.windowMs);
}

/** n1 blocked automatically at T0 for 1 h (the cap's one slot); n2 then fails three times. */
function setUp(): { st: DetectorState; items: Map<string, StoredBlock> } {
  const st = emptyState();
  failThrice(st, 'n1', T0 - MIN);
  const first = decide({ now: T0, settings: S, state: st, runningNodes: RUNNING, blocked: new Map(), applicationId: 'app' });
  assert.equal(first.blocks.length, 1);
  recordBlock(st, first.blocks[0], 'enforce', T0);
  failThrice(st, 'n2', T0 + MIN);
  return { st, items: new Map([['n1', { end: T0 + H, updatedBy: 'detector' }]]) };
}

/** A pass at `now`: the store's items observed, then the decision for n2. */
function passAt(st: DetectorState, items: Map<string, StoredBlock>, now: number) {
  observeBlocks(st, (id) => items.get(id), now);
  const blocked = new Map<string, EffectiveBlock>();
  for (const [id, it] of items) if (it.end > now) blocked.set(id, { itemId: id, by: it.updatedBy, end: it.end, action: 'MARK_BLOCKED' });
  const r = decide({ now, settings: S, state: st, runningNodes: RUNNING, blocked, applicationId: 'app' });
  return { r, n2: r.hosts.find((h) => h.host === 'n2')! };
}

describe('detector cap: automatic blocks an operator took over, shortened or lifted', () => {
  it('own block in force: it holds the one slot; n2 is refused', () => {
    const { st, items } = setUp();
    const { r, n2 } = passAt(st, items, T0 + 2 * MIN);
    assert.equal(n2.decision, 'cap', n2.why);
    assert.deepEqual(r.cap, { max: 1, inUse: 1, runningNodes: RUNNING });
  });

  it('an operator extended it (PUT merge, CLI extend): it is theirs now; the slot is free at once', () => {
    const { st, items } = setUp();
    items.set('n1', { end: T0 + 24 * H, updatedBy: 'alice' });
    const { r, n2 } = passAt(st, items, T0 + 2 * MIN);
    assert.equal(n2.decision, 'block', n2.why);
    assert.equal(r.cap.inUse, 1, "n2's block only");
    assert.equal(st.hosts.n1.lastBlock?.takenOverBy, 'alice');
    // Another job's detector joins the item later (updated.by = detector again): still the operator's.
    items.set('n1', { end: T0 + 24 * H, updatedBy: 'detector' });
    assert.equal(passAt(st, items, T0 + 3 * MIN).n2.decision, 'block');
  });

  it('an operator shortened it (re-created with an earlier end): the slot is free at once, not at the new end', () => {
    const { st, items } = setUp();
    items.set('n1', { end: T0 + 30 * MIN, updatedBy: 'alice' });
    const { n2 } = passAt(st, items, T0 + 2 * MIN);
    assert.equal(n2.decision, 'block', n2.why);
  });

  it('an operator lifted it: the slot is free at once', () => {
    const { st, items } = setUp();
    items.delete('n1');
    const { r, n2 } = passAt(st, items, T0 + 2 * MIN);
    assert.equal(n2.decision, 'block', n2.why);
    assert.equal(r.cap.inUse, 1, "n2's block only");
  });

  it("another job's detector merged a later end into it: it counts until the end this detector gave it, no longer", () => {
    const { st, items } = setUp();
    items.set('n1', { end: T0 + 4 * H, updatedBy: 'detector' });
    assert.equal(passAt(st, items, T0 + 2 * MIN).n2.decision, 'cap');
    // Past our own end (1 h), the item still in force for the other job's 4 h: the slot is free.
    failThrice(st, 'n2', T0 + H);
    const later = passAt(st, items, T0 + H + MIN);
    assert.equal(later.n2.decision, 'block', later.n2.why);
  });

  it('holdsCap is the one rule: shadow blocks in shadow mode only; ended or taken-over blocks never', () => {
    const own = { itemId: 'n1', start: T0, end: T0 + H, ownEnd: T0 + H, level: 0, mode: 'enforce' as const };
    const ours: EffectiveBlock = { itemId: 'n1', by: 'detector', end: T0 + H, action: 'MARK_BLOCKED' };
    assert.equal(holdsCap(own, ours, 'enforce', T0 + 1), true);
    assert.equal(holdsCap(own, ours, 'enforce', T0 + H), false, 'end is exclusive');
    assert.equal(holdsCap(own, undefined, 'enforce', T0 + 1), false, 'not in force for the job');
    assert.equal(holdsCap(own, { ...ours, by: 'bob' }, 'enforce', T0 + 1), false, 'changed by someone else');
    assert.equal(holdsCap({ ...own, takenOverAt: T0 + 5, takenOverBy: 'bob' }, ours, 'enforce', T0 + 10), false);
    assert.equal(holdsCap({ ...own, endedAt: T0 + 5, endedBy: 'operator' }, ours, 'enforce', T0 + 10), false);
    const shadow = { ...own, mode: 'shadow' as const };
    assert.equal(holdsCap(shadow, undefined, 'shadow', T0 + 1), true);
    assert.equal(holdsCap(shadow, undefined, 'enforce', T0 + 1), false);
  });
});
