/**
 * The SQLite store's group-commit queue on its own, with a fake commit whose groups the test ends
 * when it chooses: which calls form a group, how many groups commit at once, which calls a failure
 * reaches, and when a write besides the groups counts as lone.
 */
import { strict as assert } from 'node:assert';
import { CallAnswer, GROUPS_IN_FLIGHT, GroupCommit, GroupShape, WAL_GROUPS_IN_FLIGHT } from '../../src/store/sqlite/group-commit';

/** One group handed to the fake commit, ended by the test. */
interface Committing {
  calls: string[];
  shape: GroupShape;
  answer(answers: CallAnswer<string>[]): void;
  fail(e: Error): void;
}

function fakeCommit(): { commits: Committing[]; commit: (calls: string[], shape: GroupShape) => Promise<CallAnswer<string>[]> } {
  const commits: Committing[] = [];
  return {
    commits,
    commit: (calls, shape) =>
      new Promise((resolve, reject) => {
        commits.push({ calls, shape, answer: resolve, fail: reject });
      }),
  };
}

const done = (calls: string[]): CallAnswer<string>[] => calls.map((c) => ({ kind: 'done', value: `${c}!` }));
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Settles each promise into what it came to, without an unhandled rejection. */
const outcome = (p: Promise<string>): Promise<string> => p.then(
  (v) => v,
  (e: unknown) => `rejected: ${e instanceof Error ? e.message : String(e)}`,
);

describe('sqlite store group commit (the queue alone, fake commit)', () => {
  it('a lone call is a group of its own, lone; calls made in one turn share one group, concurrent and not lone', async () => {
    const f = fakeCommit();
    const q = new GroupCommit(f.commit, { walSync: false });
    const a = q.add('a');
    await turn();
    assert.deepEqual(f.commits.map((c) => [c.calls, c.shape]), [[['a'], { concurrent: false, lone: true }]]);
    f.commits[0].answer(done(['a']));
    assert.equal(await a, 'a!');

    const bc = [q.add('b'), q.add('c')];
    await turn();
    assert.deepEqual(f.commits[1].calls, ['b', 'c']);
    assert.deepEqual(f.commits[1].shape, { concurrent: true, lone: false });
    f.commits[1].answer(done(['b', 'c']));
    assert.deepEqual(await Promise.all(bc), ['b!', 'c!']);
  });

  it(`calls arriving while ${GROUPS_IN_FLIGHT} groups commit wait, then form ONE next group as soon as one group ends`, async () => {
    const f = fakeCommit();
    const q = new GroupCommit(f.commit, { walSync: false });
    const all: Promise<string>[] = [q.add('a')];
    await turn();
    all.push(q.add('b'));
    await turn();
    // Two in flight: b's group is not lone (a's is committing).
    assert.deepEqual(f.commits.map((c) => c.calls), [['a'], ['b']]);
    assert.equal(f.commits[1].shape.lone, false);
    all.push(q.add('c'), q.add('d'));
    await turn();
    all.push(q.add('e'));
    await turn();
    assert.equal(f.commits.length, GROUPS_IN_FLIGHT, 'no third group while two commit');
    f.commits[1].answer(done(['b']));
    await turn();
    assert.deepEqual(f.commits.map((c) => c.calls), [['a'], ['b'], ['c', 'd', 'e']]);
    assert.deepEqual(f.commits[2].shape, { concurrent: true, lone: false });
    f.commits[0].answer(done(['a']));
    f.commits[2].answer(done(['c', 'd', 'e']));
    assert.deepEqual(await Promise.all(all), ['a!', 'b!', 'c!', 'd!', 'e!']);
  });

  it(`with a WalSync up to ${WAL_GROUPS_IN_FLIGHT} groups commit at once`, async () => {
    const f = fakeCommit();
    const q = new GroupCommit(f.commit, { walSync: true });
    const all: Promise<string>[] = [];
    for (let i = 0; i < WAL_GROUPS_IN_FLIGHT + 3; i++) {
      all.push(q.add(`x${i}`));
      await turn();
    }
    assert.equal(f.commits.length, WAL_GROUPS_IN_FLIGHT);
    f.commits[0].answer(done(f.commits[0].calls));
    await turn();
    assert.deepEqual(f.commits[WAL_GROUPS_IN_FLIGHT].calls, ['x8', 'x9', 'x10']);
    for (const c of f.commits.slice(1)) c.answer(done(c.calls));
    assert.equal((await Promise.all(all)).length, WAL_GROUPS_IN_FLIGHT + 3);
  });

  it("a failed group rejects every call in it with the commit's error and no call of another group", async () => {
    const f = fakeCommit();
    const q = new GroupCommit(f.commit, { walSync: false });
    const first = [q.add('a'), q.add('b')].map(outcome);
    await turn();
    const second = outcome(q.add('c'));
    await turn();
    const waiting = outcome(q.add('d'));
    await turn();
    f.commits[0].fail(new Error('disk I/O error'));
    assert.deepEqual(await Promise.all(first), ['rejected: disk I/O error', 'rejected: disk I/O error']);
    f.commits[1].answer(done(['c']));
    assert.equal(await second, 'c!');
    // d waited behind the failed group and is committed after it, in a group of its own.
    assert.deepEqual(f.commits[2].calls, ['d']);
    f.commits[2].answer(done(['d']));
    assert.equal(await waiting, 'd!');
  });

  it("a call's own failure in a group's answer rejects that call alone", async () => {
    const f = fakeCommit();
    const q = new GroupCommit(f.commit, { walSync: false });
    const calls = [q.add('a'), q.add('b'), q.add('c')].map(outcome);
    await turn();
    f.commits[0].answer([
      { kind: 'done', value: 'a!' },
      { kind: 'failed', error: new Error('corrupt row b') },
      { kind: 'done', value: 'c!' },
    ]);
    assert.deepEqual(await Promise.all(calls), ['a!', 'rejected: corrupt row b', 'c!']);
  });

  it('quiet only while no group commits or waits; drained() resolves once every call is answered', async () => {
    const f = fakeCommit();
    const q = new GroupCommit(f.commit, { walSync: false });
    assert.equal(q.quiet, true);
    const a = q.add('a');
    assert.equal(q.quiet, false, 'a call waiting for its group');
    await turn();
    assert.equal(q.quiet, false, 'a group committing');
    let drained = false;
    const d = q.drained().then(() => {
      drained = true;
    });
    await turn();
    assert.equal(drained, false);
    f.commits[0].answer(done(['a']));
    await a;
    await d;
    assert.equal(q.quiet, true);
  });
});
