/**
 * The plan's hosts as a sorted set (sync/sorted-hosts.ts): the merge walks a pass uses instead of
 * hash sets must answer exactly what the hash-set code answers, whatever the two sides hold.
 */
import { strict as assert } from 'node:assert';
import { SortedHosts, sortedDifference } from '../../src/sync/sorted-hosts';
import { blacklistSet, diffBlacklist, planDesired } from '../../src/sync/desired';
import { appliedIs } from '../../src/sync/watch-blacklist';
import { rng } from '../support/random';
import { APP, nodeItem, tmItem, containerOf } from './items';

const T = 1_652_313_600_000;

/** A sorted, unique list of up to `n` hosts drawn from a small universe (so two lists overlap). */
function hostList(next: () => number, n: number, universe = 60): string[] {
  const s = new Set<string>();
  const k = Math.floor(next() * n);
  for (let i = 0; i < k; i++) s.add(`h${String(Math.floor(next() * universe)).padStart(3, '0')}.example`);
  return [...s].sort();
}

/** The reference: the plain hash-set difference, sorted. */
function setDiff(a: readonly string[], b: readonly string[], all: boolean): { onlyA: string[]; onlyB: string[] } {
  const sb = new Set(b);
  const sa = new Set(a);
  return { onlyA: a.filter((h) => all || !sb.has(h)).sort(), onlyB: b.filter((h) => !sa.has(h)).sort() };
}

describe('sync/sorted-hosts: the plan hosts as a sorted set', () => {
  it('has() by binary search, then by a hash set after many lookups; the same answers either way', () => {
    const hosts = ['a', 'b.x', 'c', 'd-1', 'zz'];
    const s = new SortedHosts(hosts);
    for (let round = 0; round < 40; round++) {
      for (const h of hosts) assert.equal(s.has(h), true, h);
      for (const h of ['', '0', 'a0', 'b', 'b.y', 'd', 'zzz']) assert.equal(s.has(h), false, h);
    }
    assert.equal(s.includes('c'), true);
    assert.equal(s.includes('cc'), false);
    assert.equal(s.size, 5);
    assert.deepEqual([...s], hosts);
    assert.deepEqual([...s.entries()], hosts.map((h) => [h, h]));
    const seen: string[] = [];
    s.forEach((v, k) => seen.push(`${v}=${k}`));
    assert.deepEqual(seen, hosts.map((h) => `${h}=${h}`));
    assert.equal(new SortedHosts([]).has('a'), false);
  });

  it('sortedDifference = the hash-set difference over random pairs (12 seeds × 300 pairs), a re-push of all included', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const next = rng(seed);
      for (let k = 0; k < 300; k++) {
        const a = hostList(next, 40);
        const b = hostList(next, 40);
        const all = next() < 0.2;
        assert.deepEqual(sortedDifference(a, b, all), setDiff(a, b, all), `seed ${seed} pair ${k}`);
      }
    }
  });

  it('diffBlacklist of two sorted sets (merge) = of the same hosts as hash sets, maybe-on-YARN hosts included', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const next = rng(seed * 7919);
      for (let k = 0; k < 200; k++) {
        const want = hostList(next, 30);
        const have = hostList(next, 30);
        const maybe = next() < 0.3 ? hostList(next, 6) : [];
        const repush = next() < 0.2;
        const merged = diffBlacklist(new SortedHosts(want), new SortedHosts(have), repush, maybe);
        const hashed = diffBlacklist(new Set(want), new Set(have), repush, maybe);
        assert.deepEqual(merged, hashed, `seed ${seed} case ${k}`);
      }
    }
  });

  it('appliedIs over sorted sets = over hash sets, for exact and wrong results of a change', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const next = rng(seed * 104729);
      for (let k = 0; k < 200; k++) {
        const before = hostList(next, 30);
        const change = { additions: hostList(next, 8), removals: hostList(next, 8) };
        // The exact result (additions, then removals: removal wins), or a random other set.
        const exact = [...new Set([...before, ...change.additions])].filter((h) => !change.removals.includes(h)).sort();
        const after = next() < 0.5 ? exact : hostList(next, 30);
        const want = appliedIs(new Set(before), change, new Set(after));
        assert.equal(appliedIs(new SortedHosts(before), change, new SortedHosts(after)), want, `seed ${seed} case ${k}`);
        assert.equal(appliedIs(new SortedHosts(before), change, new Set(after)), want);
        assert.equal(appliedIs(new Set(before), change, new SortedHosts(after)), want);
      }
    }
  });

  it('a diff computed between two plan sets is known to lead from one to the other; any other change or target is checked host by host', () => {
    const planOf = (hosts: string[]) => planDesired({ items: hosts.map((h) => nodeItem(h)), applicationId: APP, now: T, nodes: [], maxBlockedFraction: 1, assumeRunning: true, runningNodes: 10 });
    const before = blacklistSet(planOf(['a', 'b']));
    const after = blacklistSet(planOf(['b', 'c']));
    const other = blacklistSet(planOf(['b', 'd']));
    const d = diffBlacklist(after, before);
    assert.deepEqual(d, { additions: ['c'], removals: ['a'] });
    assert.equal(appliedIs(before, d, after), true);
    assert.equal(appliedIs(before, { ...d }, after), true, 'the same change made elsewhere: checked, and right');
    assert.equal(appliedIs(before, d, other), false, 'another result than the one it was computed towards');
    assert.equal(appliedIs(other, d, after), false, 'applied to another set than the one it was computed from');
  });

  it("a plan's blacklist set is its own sorted list (no copy), and a plan with nothing held back shares one list for effective and enforced", () => {
    const plan = planDesired({ items: [nodeItem('b'), nodeItem('a'), nodeItem('c')], applicationId: APP, now: T, nodes: [], maxBlockedFraction: 1, assumeRunning: true, runningNodes: 10 });
    const set = blacklistSet(plan);
    assert.equal(set.hosts, plan.blacklist);
    assert.deepEqual([...set], ['a', 'b', 'c']);
    assert.equal(plan.enforced, plan.effective);
  });

  it('enforced = effective minus the held back and the task managers, in age order, wherever the first of those falls', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const next = rng(seed * 31);
      for (let k = 0; k < 100; k++) {
        const items = Array.from({ length: 1 + Math.floor(next() * 12) }, (_, i) => {
          const start = T - Math.floor(next() * 1_000_000);
          return next() < 0.2 ? tmItem(`h${i}`, containerOf(1, i), { start }) : nodeItem(`h${i}`, { start });
        });
        const nodes = items.map((it) => ({ host: it.node, state: next() < 0.7 ? ('RUNNING' as const) : ('LOST' as const) }));
        const plan = planDesired({ items, applicationId: APP, now: T + k + seed * 1000, nodes, maxBlockedFraction: next() * 0.6, runningNodes: 10 });
        const off = new Set([...plan.deferred, ...plan.taskManagers]);
        assert.deepEqual(plan.enforced, plan.effective.filter((i) => !off.has(i)), `seed ${seed} case ${k}`);
      }
    }
  });
});
