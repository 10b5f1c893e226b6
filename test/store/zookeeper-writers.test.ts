/**
 * Three kinds of writer merge into one item on the shared ZooKeeper store at once: two sidecars'
 * stores (one on a session it shares, as a sidecar's store shares its one session with the
 * election) and the `blocklist` CLI with `--store zookeeper:…` (a child process). In the middle,
 * the shared session is expired from outside while its writes are in flight. FLIP-224's
 * allowMerge: every acknowledged cause ends up in the item exactly once, whoever wrote it, and a
 * write in flight across the expiry is either acknowledged (and kept) or fails as unavailable.
 */
import { strict as assert } from 'node:assert';
import { ZookeeperStore } from '../../src/store/zookeeper/zookeeper-store';
import { ZkSession } from '../../src/store/zookeeper/session';
import { zookeeperSessionOptions } from '../../src/store/zookeeper/zookeeper-store';
import { StoreUnavailableError } from '../../src/store/store';
import { silentLogger } from '../../src/core/logger';
import { newItem } from '../../src/model/merge';
import { ZkCluster, expireSession, requireZookeeper } from '../support/zookeeper';
import { expectCode, runCli } from '../cli/run';
import { tempDir } from '../support/sidecar';

const actor = { by: 't', from: 't' };
const HOT = 'hot.example.com';
const merge = (cause: string, end: number) => ({
  item: newItem({ id: HOT, kind: 'node', node: HOT, action: 'MARK_BLOCKED', end: { type: 'at', at: end }, cause, scope: 'cluster', allowMerge: true }, Date.now(), actor),
  allowMerge: true,
});

describe('zookeeper store: two sidecars and the CLI merge into one item while a session expires', function () {
  this.timeout(40_000);
  let zk: ZkCluster | undefined;
  const closers: (() => Promise<void>)[] = [];

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
  });
  after(async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
    await zk?.stop();
  });

  it('every acknowledged cause is in the item once; the end is the latest acknowledged one', async () => {
    const root = `/writers${process.pid}`;
    const quorum = zk!.connectString();
    const settings = { quorum, root, sessionTimeoutMs: 2000, operationTimeoutMs: 4000 };
    const session = new ZkSession(zookeeperSessionOptions(settings, silentLogger));
    closers.push(() => session.close());
    const a = await ZookeeperStore.open({ ...settings, session });
    closers.push(() => a.close());
    const b = await ZookeeperStore.open(settings);
    closers.push(() => b.close());

    const base = Date.now() + 3_600_000;
    const acked: string[] = [];
    const failed: unknown[] = [];
    let ends: number[] = [];
    let expired = false;
    let afterExpiry = 0;
    const stopAt = Date.now() + 25_000;
    const writer = async (store: ZookeeperStore, name: string) => {
      // Until the expiry is over (the attach from outside can take seconds) and a few writes went
      // through the new session; paced, and bounded in time (not in count: how long the expiry
      // takes varies with the machine's load). The causes cycle through 60 per writer: a
      // merged cause holds at most 4,096 characters and counts the rest in a '…(+N more)' token,
      // so 6 × 150 distinct causes would push acknowledged ones out of sight on a slow expiry.
      // Every write still changes the item (a new end), and a repeated cause merges to nothing.
      for (let i = 0; Date.now() < stopAt && !(expired && afterExpiry >= 12); i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 15));
        const cause = `${name}-${i % 60}`;
        const end = base + Math.floor(Math.random() * 100_000);
        try {
          await store.add(merge(cause, end));
          acked.push(cause);
          ends.push(end);
          if (expired) afterExpiry++;
        } catch (e) {
          failed.push(e);
        }
      }
    };
    const writers = Promise.all([writer(a, 'a0'), writer(a, 'a1'), writer(a, 'a2'), writer(b, 'b0'), writer(b, 'b1'), writer(b, 'b2')]);
    const cli = runCli(['block', HOT, '--cause', 'cli', '--merge', '--store', `zookeeper:${quorum}${root}`], { cwd: tempDir('blocklist-zk-writers-'), timeoutMs: 30_000 });
    while (acked.length < 6) await new Promise((r) => setTimeout(r, 5));
    const renewed = new Promise((resolve) => session.once('session', resolve));
    expired = await expireSession(quorum, () => session.credentials(), renewed);
    assert.ok(expired, 'the shared session did not expire');
    await writers;
    expectCode(await cli, 0, 'block --merge --store zookeeper');

    for (const e of failed) assert.ok(e instanceof StoreUnavailableError, String(e));
    const item = await b.get(HOT);
    assert.ok(item);
    assert.ok(!item.cause.includes('more)'), `the merged cause overflowed its bound, so not every cause can be checked: …${item.cause.slice(-40)}`);
    const causes = item.cause.split(',');
    const missing = [...acked, 'cli'].filter((c) => !causes.includes(c));
    assert.deepEqual(missing, [], `acknowledged causes missing from the item (${acked.length} acknowledged, ${failed.length} failed)`);
    assert.equal(new Set(causes).size, causes.length, 'a cause merged twice (a retried write applied again)');
    assert.ok(afterExpiry >= 1, 'no write went through the new session');
    ends = ends.sort((x, y) => x - y);
    assert.ok(item.endTimestamp >= ends[ends.length - 1], 'the latest acknowledged end was lost');
    // The store on the renewed session reads the same item.
    assert.deepEqual((await a.get(HOT))?.cause, item.cause);
  });
});
