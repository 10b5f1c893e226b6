/**
 * The clean-up of gone jobs' records (evacuation starts, detector state) once per cluster. Each
 * look reads every other job's record; with every sidecar looking once a day, a thousand jobs on
 * one ZooKeeper made a million reads a day. Now only the sidecar the cluster-state election chose
 * looks (core/sweep-schedule.ts), and when it goes away the newly elected one takes the looks over.
 *
 * Three sidecars of three jobs on one real ZooKeeper ensemble, each on its own session with its
 * store and its member of the real election (ZooKeeper's recipe, the path the cluster-state
 * election uses), on a fake clock; twelve other jobs' records, some of jobs that are gone.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { FIRST_LOOK_AFTER_ELECTION_MS } from '../../src/core/sweep-schedule';
import { stateKeyOf } from '../../src/detect/state-record';
import { GoneStates } from '../../src/detect/gone-job-records';
import { emptyState, encodeState } from '../../src/detect/state';
import { newItem } from '../../src/model/merge';
import { BlockedItem, EVACUATE } from '../../src/model/item';
import { StartsRecord } from '../../src/sync/starts-record';
import { encodeStarts, startsRecordKey } from '../../src/sync/evacuation-starts';
import { ZkLeaderElection } from '../../src/store/zookeeper/election';
import { ZkLayout } from '../../src/store/zookeeper/paths';
import { ZkSession } from '../../src/store/zookeeper/session';
import { ZookeeperStore, zookeeperSessionOptions } from '../../src/store/zookeeper/zookeeper-store';
import { ZkCluster, requireZookeeper } from '../support/zookeeper';
import { pollUntil } from '../support/wait';

const DAY = 24 * 3_600_000;
const T0 = 1_716_900_000_000;
const app = (n: number): string => `application_1652313600000_${String(n).padStart(4, '0')}`;

interface Member {
  name: string;
  session: ZkSession;
  store: ZookeeperStore;
  election: ZkLeaderElection;
  starts: StartsRecord;
  states: GoneStates;
  /** Other jobs' records this sidecar read. */
  reads: number;
}

describe('records of gone jobs: looked for once per cluster, by the elected sidecar', function () {
  this.timeout(60_000);
  let zk: ZkCluster | undefined;
  const members: Member[] = [];

  before(function () {
    requireZookeeper(this);
  });
  after(async () => {
    for (const m of members.splice(0)) {
      await m.election.stop().catch(() => undefined);
      await m.store.close().catch(() => undefined);
      await m.session.close().catch(() => undefined);
    }
    await zk?.stop();
  });

  it('three sidecars: only the elected one reads the other jobs\' records; when it goes, the next one elected does', async () => {
    zk = await ZkCluster.start(1);
    const clock = new FakeClock(T0);
    const settings = { quorum: zk.connectString(), root: `/sweep-once${process.pid}`, sessionTimeoutMs: 2000, operationTimeoutMs: 4000 };
    const base = new ZkLayout('', settings.root).base;
    // Live blocks of the running jobs (what the sidecars' snapshots hold).
    const items: BlockedItem[] = [0, 1, 2, 3].map((i) => newItem({ id: `live${i}`, kind: 'node', node: `live${i}`, action: EVACUATE, end: { type: 'after', ms: DAY * 10 }, cause: 'x', scope: 'cluster', allowMerge: false }, T0 - DAY, { by: 'op', from: 'test' }));
    for (let i = 0; i < 3; i++) {
      const session = new ZkSession(zookeeperSessionOptions(settings, silentLogger));
      const store = await ZookeeperStore.open({ ...settings, session });
      const election = new ZkLeaderElection({ session, path: `${base}/cluster-state/election`, member: `s${i}`, operationTimeoutMs: settings.operationTimeoutMs });
      const m: Member = { name: `s${i}`, session, store, election, reads: 0, starts: undefined as unknown as StartsRecord, states: undefined as unknown as GoneStates };
      const own = new Set([startsRecordKey(app(i)), stateKeyOf(app(i))]);
      // The store as the records see it, counting reads of other jobs' records.
      const counted = {
        readRecord: async (k: string) => {
          if (!own.has(k)) m.reads++;
          return store.readRecord(k);
        },
        writeRecord: (k: string, v: string) => store.writeRecord(k, v),
        replaceRecord: (k: string, e: string | undefined, v: string) => store.replaceRecord(k, e, v),
        recordKeys: (p: string) => store.recordKeys(p),
        removeRecord: (k: string, e: string) => store.removeRecord(k, e),
      };
      m.starts = new StartsRecord({ store: counted, logger: silentLogger, sweeper: () => election.isLeader });
      m.states = new GoneStates({ store: counted, logger: silentLogger, sweeper: () => election.isLeader });
      members.push(m);
      election.start();
      // Joined in order: the first is elected.
      await pollUntil(`s${i} joined`, () => election.role !== 'candidate', 10_000, 20);
    }
    assert.deepEqual(members.map((m) => m.election.role), ['leader', 'follower', 'follower']);
    for (const [i, m] of members.entries()) await m.starts.load(app(i));

    // Twelve other jobs: four running (their records name live blocks, or were written lately),
    // eight gone (every block they name is gone; their detector wrote nothing for a week).
    let writer = (): ZookeeperStore => members[0].store;
    const seed = async (n: number, gone: boolean): Promise<void> => {
      const live = items[n % 4];
      const starts = gone ? new Map([[`gone${n}`, { since: T0 - 3 * DAY, created: T0 - 3 * DAY }]]) : new Map([[live.id, { since: T0 - DAY, created: live.created.at }]]);
      await writer().writeRecord(startsRecordKey(app(n)), encodeStarts(starts));
      const st = emptyState();
      st.touchedAt = gone ? T0 - 8 * DAY : T0;
      await writer().writeRecord(stateKeyOf(app(n)), encodeState(st));
    };
    for (let n = 10; n < 22; n++) await seed(n, n >= 14);

    const look = async (ms: Member[]): Promise<void> => {
      for (const m of ms) {
        await m.starts.collect(items, clock.now());
        await m.states.collect(app(members.indexOf(m)), clock.now());
      }
    };
    // A day and a bit: every sidecar has passed its moment of the day.
    for (let h = 0; h <= 25; h++) {
      clock.advance(3_600_000);
      await look(members);
    }
    assert.deepEqual(members.map((m) => m.reads > 0), [true, false, false], `reads of other jobs' records: ${members.map((m) => m.reads).join(', ')}`);
    // Two looks in these 26 hours (the first within an hour of being elected, the next a day
    // later): each of the twelve jobs' two records, then the four running jobs' two.
    assert.equal(members[0].reads, 2 * 12 + 2 * 4, "each look reads each other job's two records once");
    const left = async (prefix: string): Promise<string[]> => (await members[1].store.recordKeys(prefix)).sort();
    assert.deepEqual(await left('evacuation.'), [10, 11, 12, 13].map((n) => startsRecordKey(app(n))), 'the gone jobs\' start records are removed');
    assert.deepEqual(await left('detector.'), [10, 11, 12, 13].map((n) => stateKeyOf(app(n))), "the gone jobs' detector records are removed");

    // The elected sidecar goes away (its session ends with it): the next one is elected, and looks.
    const gone = members[0];
    await gone.store.close();
    await gone.session.close();
    writer = () => members[1].store;
    await pollUntil('s1 elected', () => members[1].election.isLeader, 15_000, 20);
    assert.equal(members[2].election.role, 'follower');
    await seed(30, true);
    for (const m of members) m.reads = 0;
    for (let t = 0; t <= FIRST_LOOK_AFTER_ELECTION_MS; t += 600_000) {
      clock.advance(600_000);
      await look(members.slice(1));
    }
    assert.deepEqual(members.slice(1).map((m) => m.reads), [2 * 5, 0], 'the newly elected sidecar looked, within an hour; the follower did not');
    assert.equal(await members[1].store.readRecord(startsRecordKey(app(30))), undefined);
    assert.equal(await members[1].store.readRecord(stateKeyOf(app(30))), undefined);
  });
});
