/**
 * One ZooKeeper session per sidecar, on a real ZooKeeper server (its `cons` answer counts the
 * client connections) and the real simulator: with yarn.cluster-state.shared on, the store, its
 * watch, the cluster-state election and the shared readings all run on one session — one TCP
 * connection per sidecar, so 50 sidecars on one host stay within ZooKeeper's default
 * maxClientCnxns (60 per address). And when that one session ends — expired from outside, or
 * ZooKeeper killed and restarted — all three recover on the new one: the election joins again
 * (its ephemeral member znode died with the old session), the store's watch is re-armed (a write
 * made through another sidecar fires it), and the shared readings are read again from ZooKeeper.
 */
import { strict as assert } from 'node:assert';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { SharedClusterStats } from '../../src/sidecar/shared-cluster-state';
import { ZkSession } from '../../src/store/zookeeper/session';
import { ZkCluster, expireSession, requireZookeeper, zkJobConfig } from '../support/zookeeper';
import { pollUntil } from '../support/wait';
import { http } from '../support/sidecar';

const SESSION_MS = 2000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const until = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> => pollUntil(what, cond, timeoutMs, 20);

const sessionOf = (s: Sidecar): ZkSession => (s.store as unknown as { session: ZkSession }).session;
const stats = (s: Sidecar): SharedClusterStats => {
  const st = s.sync.clusterState?.();
  assert.ok(st, 'the sidecar runs no shared cluster state');
  return st;
};

describe('ZooKeeper store: one session per sidecar, shared by the store and the cluster-state election (real ZooKeeper)', function () {
  this.timeout(60_000);
  let zk: ZkCluster | undefined;
  const sims: RunningSimulator[] = [];
  let sidecars: Sidecar[] = [];
  let seq = 0;
  let root = '';

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
    for (const appNumber of [1, 2]) sims.push(await startSimulator({ port: 0, nodes: 20, containers: 4, seed: 5, tickMs: 0, appNumber }));
  });
  beforeEach(() => {
    root = `/one-session${process.pid}-${++seq}`;
  });
  afterEach(async () => {
    for (const s of sidecars.splice(0)) await s.close().catch(() => undefined);
  });
  after(async () => {
    for (const s of sims.splice(0)) await s.close().catch(() => undefined);
    await zk?.stop();
  });

  /** Sidecar i on simulator i's application; passes and cluster-state readings every 300 ms / 1 s. */
  async function sidecar(i: number): Promise<Sidecar> {
    const sim = sims[i];
    const config = zkJobConfig((zk as ZkCluster).connectString(), root, sim, {
      'cluster.resource-blocklist.store.zookeeper.session-timeout': `${SESSION_MS} ms`,
      'cluster.resource-blocklist.store.zookeeper.operation-timeout': '1 s',
      'cluster.resource-blocklist.store.zookeeper.connect-timeout': '1 s',
      'cluster.resource-blocklist.yarn.cluster-state.shared': 'true',
      'cluster.resource-blocklist.yarn.refresh-interval': '300 ms',
      // While node items are in force every engine re-reads the node list this often: a
      // follower's through the shared reading, so its answers show that the reading works.
      'cluster.resource-blocklist.yarn.nodes.refresh-interval': '1 s',
      // Passes (and with node items in force, the node-count reads) run on the poll tick.
      'cluster.resource-blocklist.poll-interval': '300 ms',
      'cluster.resource-blocklist.max-blocked-fraction': '1',
      'rest.rate-limit.max-mutations': '0',
    });
    const s = await startSidecar({ config, logger: silentLogger, env: {} });
    sidecars.push(s);
    return s;
  }

  /** Both sidecars started, the first one leading: [leader, follower]. */
  async function pair(): Promise<[Sidecar, Sidecar]> {
    const a = await sidecar(0);
    await until('the first sidecar leads', () => stats(a).role === 'leader', 10_000);
    const b = await sidecar(1);
    await until('the second sidecar follows', () => stats(b).role === 'follower', 10_000);
    return [a, b];
  }

  const connections = async (): Promise<number> => (await (zk as ZkCluster).connections()).count;

  const sharedTotal = (st: SharedClusterStats): number => st.sharedAnswers.metrics + st.sharedAnswers.nodes;

  /**
   * All three users of `s`'s session work: the election has a member znode and exactly one of the
   * two sidecars leads; a block written through `other` fires `s`'s store watch (a listener of
   * the one watch the engine also uses; it fires only once re-armed on the current session) and is
   * enforced on `s`'s application; the follower keeps answering the node counts and list from the
   * leader's shared reading (node items are in force now, so its passes need them).
   */
  async function allThreeWork(s: Sidecar, other: Sidecar, host: string, simIndex: number, limitMs: number): Promise<void> {
    await until('one leader, one follower, both with a member znode', () => {
      const roles = [stats(s).role, stats(other).role].sort();
      return roles[0] === 'follower' && roles[1] === 'leader' && stats(s).memberNode !== undefined && stats(other).memberNode !== undefined;
    }, limitMs);
    const follower = stats(s).role === 'follower' ? s : other;
    const before = stats(follower);
    let fired = 0;
    const unsubscribe = (s.store.watch as (f: () => void) => () => void)(() => fired++);
    try {
      const put = await http(other.url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'after the new session' });
      assert.equal(put.status, 201, put.text);
      await until("the sidecar's store watch fired", () => fired > 0, limitMs);
    } finally {
      unsubscribe();
    }
    await until(`${host} enforced on sidecar ${simIndex}'s application`, () => sims[simIndex].cluster.clientBlacklistView().includes(host), limitMs);
    await until('the follower answered twice from the shared reading', () => sharedTotal(stats(follower)) >= sharedTotal(before) + 2, limitMs);
  }

  it('one ZooKeeper connection per sidecar (store, watch, election and shared readings on one session); closing ends it', async () => {
    const [a, b] = await pair();
    assert.equal(await connections(), 2, `connections for two sidecars: ${JSON.stringify((await zk!.connections()).lines)}`);
    // Over those connections, all three work.
    await allThreeWork(b, a, sims[0].cluster.nodes[4].host, 1, 5000);
    assert.equal(await connections(), 2);
    await a.close();
    sidecars = sidecars.filter((s) => s !== a);
    await until('the other sidecar takes over the election', () => stats(b).role === 'leader', SESSION_MS + 3000);
    await until('the closed sidecar holds no connection', async () => (await connections()) === 1, 3000);
    await b.close();
    sidecars = [];
    await until('no connection left', async () => (await connections()) === 0, 3000);
  });

  it('after its session expires, the election re-joins, the store watch is re-armed and the shared readings recover on the new session', async () => {
    const [a, b] = await pair();
    const session = sessionOf(a);
    const member = stats(a).memberNode;
    const renewed = new Promise<void>((resolve) => session.once('session', () => resolve()));
    assert.ok(await expireSession(zk!.connectString(), () => session.credentials(), renewed), 'the session did not expire');
    // The leader's member znode died with its session: the other sidecar leads, this one joins again behind it.
    await until('the expired sidecar rejoined as a follower with a new member znode', () => stats(a).role === 'follower' && stats(a).memberNode !== member, SESSION_MS * 3);
    assert.equal(stats(b).role, 'leader');
    await allThreeWork(a, b, sims[0].cluster.nodes[1].host, 0, SESSION_MS + 5000);
    // The abandoned client's connection is gone: still one per sidecar.
    await until('two connections', async () => (await connections()) === 2, 3000);
  });

  it('after ZooKeeper is killed and restarted (down longer than the session timeout), both sidecars recover all three on one connection each', async () => {
    const z = zk as ZkCluster;
    const [a, b] = await pair();
    await z.kill(1);
    await sleep(SESSION_MS + 500);
    z.restart(1);
    await z.waitReady([1], 20_000);
    await allThreeWork(a, b, sims[0].cluster.nodes[2].host, 0, SESSION_MS + 5000);
    await allThreeWork(b, a, sims[1].cluster.nodes[3].host, 1, SESSION_MS + 5000);
    await until('two connections', async () => (await connections()) === 2, 3000);
  });
});
