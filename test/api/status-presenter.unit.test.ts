/** The status presenter words the engine's data; pure, no engine needed. */
import { strict as assert } from 'node:assert';
import { EVACUATE } from '../../src/model/item';
import { planDesired } from '../../src/sync/desired';
import { emptyView, SyncView } from '../../src/sync/view';
import { clockSkewStatus, createdItemSyncStatus, itemSyncStatus, sidecarStatus } from '../../src/api/status-presenter';
import { APP, nodeItem, tmItem } from '../sync/items';

const T0 = 1_652_313_600_000;

function view(o: Partial<SyncView> = {}): SyncView {
  const items = [nodeItem('h1', { start: T0 + 1 }), nodeItem('h2', { start: T0 + 2 }), tmItem('h3', 'container_e01_1652313600000_0001_01_000002', { action: EVACUATE })];
  const plan = planDesired({ items, applicationId: APP, now: T0, nodes: [1, 2, 3, 4].map((i) => ({ host: `h${i}`, state: 'RUNNING' as const })), maxBlockedFraction: 0.25 });
  return { ...emptyView(true, true, 0.25), applicationId: APP, items, plan, actual: new Set(['h1']), ...o };
}

describe('api/status-presenter', () => {
  it("applied only for what YARN has; deferred says the cap's numbers; an EVACUATE task manager without a decision is pending", () => {
    const v = view();
    assert.equal(itemSyncStatus(v, 'h1', T0)?.state, 'applied');
    assert.match(itemSyncStatus(v, 'h2', T0)?.detail ?? '', /at most 1 of 4 RUNNING nodes.*max-blocked-fraction 0.25/);
    assert.equal(itemSyncStatus(view({ actual: new Set() }), 'h1', T0)?.state, 'pending');
    assert.equal(itemSyncStatus(v, 'h3/container_e01_1652313600000_0001_01_000002', T0)?.state, 'pending');
  });

  it('no engine → no sync state; disabled → disabled; before the first pass → pending', () => {
    assert.equal(itemSyncStatus(emptyView(true, false), 'h1', T0), undefined);
    assert.equal(itemSyncStatus(emptyView(false, false), 'h1', T0)?.state, 'disabled');
    assert.match(itemSyncStatus(emptyView(true, true), 'h1', T0)?.detail ?? '', /no reconcile pass/);
  });

  it("a just-created item's state (no plan lookup) is what the lookup would say of an item no pass has seen: pending, out of scope, over, or why the last pass failed", () => {
    const fresh = nodeItem('h9', { start: T0 });
    const other = { ...nodeItem('h8', { start: T0 }), scope: 'application_1652313600000_9999' };
    const over = nodeItem('h7', { start: T0 - 10, end: T0 - 1 });
    for (const v of [view(), view({ lastFailure: { stage: 'push', error: 'proxy down' } })]) {
      for (const item of [fresh, other, over]) {
        // The general path, once the engine's snapshot holds the item and no plan does yet.
        const seen = itemSyncStatus({ ...v, items: [...(v.items ?? []), item] }, item.id, T0);
        const created = createdItemSyncStatus(v, item, T0);
        assert.equal(created?.state, seen?.state, item.id);
        if (created?.state === 'not-applicable') assert.equal(created.detail, seen?.detail);
      }
    }
    assert.equal(createdItemSyncStatus(view(), fresh, T0)?.detail, 'not yet seen by the sync engine');
    assert.match(createdItemSyncStatus(view({ lastFailure: { stage: 'push', error: 'proxy down' } }), fresh, T0)?.detail ?? '', /not yet applied: push: proxy down/);
    assert.equal(createdItemSyncStatus(view(), other, T0)?.state, 'not-applicable');
    assert.match(createdItemSyncStatus(view(), over, T0)?.detail ?? '', /expired/);
    assert.equal(createdItemSyncStatus(emptyView(true, false), fresh, T0), undefined);
    assert.equal(createdItemSyncStatus(emptyView(false, false), fresh, T0)?.state, 'disabled');
    assert.match(createdItemSyncStatus(emptyView(true, true), fresh, T0)?.detail ?? '', /no reconcile pass/);
  });

  it("a new block the cap will hold back says so in its own answer: deferred, with the cap's numbers; a batch counts its own new blocks", () => {
    // 4 RUNNING nodes at 0.25: one slot, and h1 holds it.
    const v = view();
    const h4 = nodeItem('h4', { start: T0 + 5 });
    const held = createdItemSyncStatus(v, h4, T0);
    assert.equal(held?.state, 'deferred');
    assert.match(held?.detail ?? '', /1 of at most 1 of 4 RUNNING nodes are blacklisted already \(max-blocked-fraction 0.25\)/);
    // A host already holding a slot, or not RUNNING, needs none.
    assert.equal(createdItemSyncStatus(v, nodeItem('h9', { start: T0 + 5 }), T0)?.state, 'pending');
    // Room for one more (two slots): the first new block of a batch takes it, the second is held back.
    const roomy = { ...view(), plan: planDesired({ items: [nodeItem('h1', { start: T0 + 1 })], applicationId: APP, now: T0, nodes: [1, 2, 3, 4].map((i) => ({ host: `h${i}`, state: 'RUNNING' as const })), maxBlockedFraction: 0.5 }) };
    const claimed = new Set<string>();
    assert.equal(createdItemSyncStatus(roomy, nodeItem('h2', { start: T0 + 5 }), T0, claimed)?.state, 'pending');
    assert.equal(createdItemSyncStatus(roomy, nodeItem('h2', { start: T0 + 5 }), T0, claimed)?.state, 'pending', 'the same host again takes no second slot');
    assert.equal(createdItemSyncStatus(roomy, nodeItem('h3', { start: T0 + 6 }), T0, claimed)?.state, 'deferred');
  });

  it('the cap of a small cluster: the one node of a cluster is never blacklisted, and the reason says so', () => {
    const items = [nodeItem('h1', { start: T0 + 1 })];
    const plan = planDesired({ items, applicationId: APP, now: T0, nodes: [{ host: 'h1', state: 'RUNNING' as const }], maxBlockedFraction: 0.33 });
    const v: SyncView = { ...emptyView(true, true, 0.33), applicationId: APP, items, plan, actual: new Set() };
    assert.equal(itemSyncStatus(v, 'h1', T0)?.state, 'deferred');
    assert.match(itemSyncStatus(v, 'h1', T0)?.detail ?? '', /the cluster has 1 RUNNING node, and the last one is never blacklisted/);
    const three = planDesired({ items: [...items, nodeItem('h2', { start: T0 + 2 })], applicationId: APP, now: T0, nodes: [1, 2, 3].map((i) => ({ host: `h${i}`, state: 'RUNNING' as const })), maxBlockedFraction: 0.33 });
    const v3: SyncView = { ...v, items: three.effective, plan: three };
    assert.match(itemSyncStatus(v3, 'h2', T0)?.detail ?? '', /0.33 × 3 rounds to 0, and one node may always be blocked while another stays free/);
  });

  it('the sidecar status names a store outage before the last failure', () => {
    const s = sidecarStatus(view({ storeError: 'down', lastFailure: { stage: 'push', error: 'x' } }), T0);
    assert.equal(s.storeDegraded, true);
    assert.match(s.lastError ?? '', /store unreachable.*down/);
    assert.equal(sidecarStatus(view({ lastFailure: { stage: 'push', error: 'x' } }), T0).lastError, 'push: x');
    assert.deepEqual(s.blacklist, { desired: ['h1'], actual: ['h1'] });
    assert.deepEqual(s.deferred, ['h2']);
  });
});

describe("api/status-presenter clockSkewStatus: /status's clockSkew in words", () => {
  const at = (skewMs: number) => ({ skewMs, uncertaintyMs: 1.4, storeNow: T0 - skewMs, measuredAt: T0, limitMs: 10_000 });
  it('no reference (SQLite), not measured, agrees, ahead, behind', () => {
    assert.equal(clockSkewStatus(false, undefined).state, 'no-reference');
    assert.equal(clockSkewStatus(true, undefined).state, 'not-measured');
    assert.deepEqual(clockSkewStatus(true, at(-9_999.6)), { state: 'agrees', skewMs: -10_000, uncertaintyMs: 1, limitMs: 10_000, measuredAt: T0, detail: "within 10000 ms of the store's time" });
    const fast = clockSkewStatus(true, at(2 * 3_600_000));
    assert.equal(fast.state, 'ahead');
    assert.match(fast.detail, /expiry of shared items is refused/);
    const slow = clockSkewStatus(true, at(-2 * 3_600_000));
    assert.equal(slow.state, 'behind');
    assert.match(slow.detail, /see them end early/);
  });
});
