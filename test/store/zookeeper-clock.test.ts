/**
 * Clocks on the shared ZooKeeper store, against a real server, with the sidecars' clocks injected
 * (a clock 2 h ahead on real timers, as libfaketime with a real monotonic clock is):
 *  - a sidecar 2 h ahead never deletes another job's 1 h block (its expiry is refused, nothing is
 *    deleted, the skew is in /status and the metrics), keeps enforcing a block whose end has
 *    passed only on its own clock, and stamps the blocks it makes on the store's time;
 *  - a clock that steps ahead while running is caught at the next expiry without a new
 *    measurement; back within the limit, expiry resumes.
 * docs/zookeeper.md (Clocks).
 */
import { strict as assert } from 'node:assert';
import { Clock, systemClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { ClockSkewError } from '../../src/store/store';
import { ZookeeperStore } from '../../src/store/zookeeper/zookeeper-store';
import { ZkCluster, requireZookeeper, zkJobConfig } from '../support/zookeeper';
import { pollUntil } from '../support/wait';
import { http } from '../support/sidecar';
import { item } from './conformance';

const HOUR = 3_600_000;
const ahead = (ms: number): Clock => ({ now: () => Date.now() + ms, setTimer: systemClock.setTimer });

describe('clocks on the shared ZooKeeper store (real ZooKeeper, injected clocks)', function () {
  this.timeout(40_000);
  let zk: ZkCluster | undefined;
  const sims: RunningSimulator[] = [];
  const sidecars: Sidecar[] = [];
  const audits: MemoryAudit[] = [];

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
    for (const [appNumber, clock] of [
      [1, systemClock],
      [2, ahead(2 * HOUR)],
    ] as const) {
      const sim = await startSimulator({ port: 0, nodes: 6, containers: 4, seed: 5, tickMs: 0, appNumber });
      sims.push(sim);
      const config = zkJobConfig(zk.connectString(), `/clock${process.pid}`, sim, { 'cluster.resource-blocklist.max-blocked-fraction': '0.9', 'cluster.resource-blocklist.poll-interval': '100 ms' });
      const audit = new MemoryAudit();
      audits.push(audit);
      sidecars.push(await startSidecar({ config, clock, audit, logger: silentLogger, env: {} }));
    }
  });
  after(async () => {
    for (const s of sidecars.splice(0)) await s.close().catch(() => undefined);
    for (const s of sims.splice(0)) await s.close().catch(() => undefined);
    await zk?.stop();
  });

  const [normal, fast] = [0, 1];
  const host = (i: number): string => sims[0].cluster.nodes[i].host;
  const blacklist = (i: number): string[] => sims[i].cluster.clientBlacklistView();

  it("a sidecar 2 h ahead never deletes another job's 1 h block: expiry refused, skew reported, the block still enforced where it applies", async () => {
    const appA = sims[normal].cluster.applicationId;
    // Job A's own block and a cluster-wide one, both for an hour, made through A's sidecar.
    for (const [h, scope] of [
      [host(0), appA],
      [host(1), 'cluster'],
    ]) {
      const r = await http(sidecars[normal].url, 'PUT', `/blocklist/nodes/${h}`, { action: 'MARK_BLOCKED', cause: 'disk', timeout: String(HOUR), scope });
      assert.equal(r.status, 201, r.text);
    }
    await pollUntil('the cluster block on both jobs, A\'s own on A only', () => blacklist(normal).includes(host(0)) && blacklist(normal).includes(host(1)) && blacklist(fast).includes(host(1)), 10_000);

    const st = (await http(sidecars[fast].url, 'GET', '/status')).body as { clockSkew: { state: string; skewMs: number; limitMs: number } };
    assert.equal(st.clockSkew.state, 'ahead', JSON.stringify(st.clockSkew));
    assert.ok(Math.abs(st.clockSkew.skewMs - 2 * HOUR) < 2000, JSON.stringify(st.clockSkew));
    assert.equal(st.clockSkew.limitMs, 10_000);
    const metrics = (await http(sidecars[fast].url, 'GET', '/metrics')).text;
    const skewSeconds = Number(/^blocklist_store_clock_skew_seconds (\S+)/m.exec(metrics)?.[1]);
    assert.ok(Math.abs(skewSeconds - 7200) < 2, `${skewSeconds}`);
    assert.match(metrics, /^blocklist_store_clock_skew_limit_seconds 10$/m);

    // On its own clock both blocks ended an hour ago; its expiry is refused and deletes nothing.
    for (let run = 0; run < 3; run++) {
      const out = await sidecars[fast].sync.expireNow();
      assert.equal(out.outcome, 'failed', JSON.stringify(out));
      assert.match(out.outcome === 'failed' ? out.error : '', /expiry refused: this sidecar's clock is 2 h 0 min ahead of the store's time/);
    }
    const refused = await http(sidecars[fast].url, 'POST', '/blocklist/expire');
    assert.equal(refused.status, 503, refused.text);
    assert.ok(!audits[fast].records.some((r) => r.op === 'expire'), 'no "removed by expiry"');
    const left = (await http(sidecars[normal].url, 'GET', '/blocklist')).body as Record<string, unknown>;
    assert.deepEqual(Object.keys(left).sort(), [host(0), host(1)].sort());
    const normalRun = await sidecars[normal].sync.expireNow();
    assert.deepEqual(normalRun, { outcome: 'removed', items: [] }, 'a sidecar whose clock agrees expires as before');

    // Items count on the store's time there: the cluster block stays on the fast job's blacklist
    // through passes (before, it counted as ended and was never pushed), and GET lists it.
    sidecars[fast].sync.kick('test');
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(blacklist(fast).includes(host(1)), `fast job's blacklist: ${blacklist(fast).join(',')}`);
    assert.ok(!blacklist(fast).includes(host(0)), "job A's own block is not the fast job's");
    const seen = (await http(sidecars[fast].url, 'GET', `/blocklist/nodes/${host(1)}`)).status;
    assert.equal(seen, 200);

    // A block made through it is stamped on the store's time: an hour from now, not three.
    const made = await http(sidecars[fast].url, 'PUT', `/blocklist/nodes/${host(2)}`, { action: 'MARK_BLOCKED', cause: 'disk', timeout: String(HOUR) });
    assert.equal(made.status, 201, made.text);
    const end = Number((made.body as { endTimestamp: string }).endTimestamp);
    assert.ok(Math.abs(end - (Date.now() + HOUR)) < 5000, `end ${new Date(end).toISOString()}`);
    for (const h of [host(0), host(1), host(2)]) assert.equal((await http(sidecars[normal].url, 'DELETE', `/blocklist/nodes/${h}`)).status, 200);
  });

  it('a clock that steps ahead while running is caught at the next expiry, with no new measurement; back within the limit, expiry resumes', async () => {
    let offset = 0;
    const opts = { quorum: zk!.connectString(), root: `/step${process.pid}`, sessionTimeoutMs: 10_000, operationTimeoutMs: 3000, logger: silentLogger };
    const writer = await ZookeeperStore.open(opts);
    const stepping = await ZookeeperStore.open({ ...opts, localTime: () => Date.now() + offset });
    try {
      const now = Date.now();
      await writer.add({ item: item('n1', { at: now, end: { type: 'at', at: now + HOUR } }), allowMerge: false });
      await writer.add({ item: item('n2', { at: now - 10_000, end: { type: 'at', at: now - 1 } }), allowMerge: false });
      assert.ok(Math.abs(stepping.clockSkew()!.skewMs) < 1000);
      offset = 2 * HOUR;
      assert.ok(Math.abs(stepping.clockSkew()!.skewMs - 2 * HOUR) < 1000, 'the step shows at once');
      await assert.rejects(() => stepping.removeExpired(Date.now() + offset), (e: unknown) => e instanceof ClockSkewError);
      await assert.rejects(() => stepping.removeExpired(Date.now()), (e: unknown) => e instanceof ClockSkewError, "this machine's clock is checked whatever `now` says");
      assert.deepEqual((await writer.list()).map((i) => i.id), ['n1', 'n2'], 'nothing deleted');
      offset = 5_000;
      assert.deepEqual((await stepping.removeExpired(Date.now() + offset)).map((i) => i.id), ['n2'], 'within the limit: what has ended goes');
      offset = -2 * HOUR;
      assert.deepEqual(await stepping.removeExpired(Date.now() + offset), [], 'behind: allowed, and n1 has not ended');
      assert.deepEqual((await writer.list()).map((i) => i.id), ['n1']);
    } finally {
      await stepping.close();
      await writer.close();
    }
  });
});
