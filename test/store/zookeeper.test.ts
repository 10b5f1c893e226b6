/**
 * The ZooKeeper store against a real standalone server from the Debian package: the shared
 * conformance suite, plus what only ZooKeeper has — chroot, digest ACLs, watches (and their
 * propagation latency), session expiry, the timeout on every call.
 */
import { strict as assert } from 'node:assert';
import { ZookeeperStore, ZookeeperStoreOptions } from '../../src/store/zookeeper/zookeeper-store';
import { ZkLayout } from '../../src/store/zookeeper/paths';
import { ZkSession } from '../../src/store/zookeeper/session';
import { StoreUnavailableError } from '../../src/store/store';
import { describeStoreConformance, item } from './conformance';
import { ZkCluster, expireSession, freePort, requireZookeeper } from '../support/zookeeper';

let cluster: ZkCluster | undefined;
let seq = 0;
const T0 = 1_652_313_600_000;

const options = (over: Partial<ZookeeperStoreOptions> = {}): ZookeeperStoreOptions => {
  if (!cluster) throw new Error('ZooKeeper is not running');
  return { quorum: cluster.connectString(), root: `/t${process.pid}-${++seq}`, sessionTimeoutMs: 10_000, operationTimeoutMs: 3000, ...over };
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('zookeeper store (standalone server)', function () {
  this.timeout(30_000);

  before(async function () {
    requireZookeeper(this);
    cluster = await ZkCluster.start(1);
  });
  after(async () => {
    await cluster?.stop();
    cluster = undefined;
  });

  describeStoreConformance('zookeeper', async () => {
    const opts = options();
    const stores: ZookeeperStore[] = [];
    return {
      async open() {
        const s = await ZookeeperStore.open(opts);
        stores.push(s);
        return s;
      },
      async writeRaw(id, text) {
        const raw = new ZkSession({ hosts: opts.quorum, sessionTimeoutMs: 10_000, operationTimeoutMs: 3000 });
        try {
          const path = new ZkLayout('', opts.root).itemPath(id);
          const cur = await raw.getData(path, 3000);
          if (cur) await raw.multi([{ op: 'set', path, data: Buffer.from(text), version: -1 }], 3000);
          else await raw.create(path, Buffer.from(text), 3000);
        } finally {
          await raw.close();
        }
      },
      async cleanup() {
        for (const s of stores.splice(0)) await s.close();
      },
    };
  });

  describe('zookeeper specifics', () => {
    const open: ZookeeperStore[] = [];
    const openStore = async (over: Partial<ZookeeperStoreOptions> = {}): Promise<ZookeeperStore> => {
      const s = await ZookeeperStore.open(options(over));
      open.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });

    it('honours a chroot in the connect string (and creates it)', async () => {
      const chroot = `/chroot${process.pid}-${++seq}/deep`;
      const a = await openStore({ quorum: cluster!.connectString(chroot), root: '/blocklist' });
      assert.match(a.description, new RegExp(`${chroot}/blocklist$`));
      await a.add({ item: item('node1'), allowMerge: false });
      // The same data seen without the chroot, one level up.
      const b = await openStore({ root: `${chroot}/blocklist` });
      assert.equal((await b.get('node1'))?.id, 'node1');
    });

    it('digest auth: znodes are readable only with the credentials', async () => {
      const root = `/auth${process.pid}-${++seq}`;
      const a = await openStore({ root, auth: 'sidecar:s3cret' });
      await a.add({ item: item('node1'), allowMerge: false });
      const same = await openStore({ root, auth: 'sidecar:s3cret' });
      assert.equal((await same.get('node1'))?.id, 'node1');
      const anon = await openStore({ root });
      await assert.rejects(() => anon.list(), (e: unknown) => e instanceof StoreUnavailableError && /not authorised/.test(e.message));
      const wrong = await openStore({ root, auth: 'sidecar:guess' });
      await assert.rejects(() => wrong.get('node1'), (e: unknown) => e instanceof StoreUnavailableError && /not authorised/.test(e.message));
      await assert.rejects(() => wrong.add({ item: item('node2'), allowMerge: false }), StoreUnavailableError);
    });

    it('an unreachable ensemble fails open() within the operation timeout with a clear message', async () => {
      const port = await freePort(); // nothing listens there
      const t0 = performance.now();
      await assert.rejects(
        () => ZookeeperStore.open({ ...options(), quorum: `127.0.0.1:${port}`, operationTimeoutMs: 500 }),
        (e: unknown) => e instanceof StoreUnavailableError && /within 500 ms/.test(e.message) && e.message.includes(`127.0.0.1:${port}`),
      );
      const took = performance.now() - t0;
      assert.ok(took < 1500, `took ${took} ms`);
    });

    it('watch(): another instance is told about creates, merges and removes, not about no-ops', async () => {
      const root = `/watch${process.pid}-${++seq}`;
      const writer = await openStore({ root });
      const reader = await openStore({ root });
      let calls = 0;
      const off = reader.watch(() => calls++);
      await sleep(100); // armed
      const changes: [string, () => Promise<unknown>][] = [
        ['create', () => writer.add({ item: item('n1', { cause: 'a' }), allowMerge: false })],
        ['merge', () => writer.add({ item: item('n1', { cause: 'b', at: T0 + 1 }), allowMerge: true })],
        ['remove', () => writer.remove('n1')],
      ];
      for (const [what, f] of changes) {
        const before = calls;
        await f();
        for (let i = 0; i < 50 && calls === before; i++) await sleep(20);
        assert.ok(calls > before, `${what} did not notify`);
      }
      await writer.add({ item: item('n2', { cause: 'a' }), allowMerge: false });
      await sleep(200);
      const settled = calls;
      await writer.add({ item: item('n2', { cause: 'a', at: T0 + 2 }), allowMerge: true }); // no-op merge
      await writer.add({ item: item('n2', { at: T0 + 3 }), allowMerge: false }); // conflict
      await sleep(300);
      assert.equal(calls, settled, 'a write that changed nothing notified');
      off();
      await writer.remove('n2');
      await sleep(200);
      assert.equal(calls, settled, 'an unsubscribed listener was called');
    });

    it('watch propagation latency writer → other instance (p50/p99 over 300 writes)', async () => {
      const root = `/lat${process.pid}-${++seq}`;
      const writer = await openStore({ root });
      const reader = await openStore({ root });
      // Every notification is stamped and followed by a version() read on the reader; a write
      // counts as seen at the first notification whose read shows the writer's new version
      // (a notification can be early or duplicated; only the one that reveals the write counts).
      let notes: { at: number; version: Promise<string> }[] = [];
      const off = reader.watch(() => notes.push({ at: performance.now(), version: reader.version() }));
      await sleep(100);
      const fromStart: number[] = [];
      const fromAck: number[] = [];
      for (let i = 0; i < 300; i++) {
        notes = [];
        const t0 = performance.now();
        await writer.add({ item: item(`n${i % 20}`, { cause: `c${i}`, at: T0 + i }), allowMerge: true });
        const acked = performance.now();
        const target = await writer.version();
        let seenAt: number | undefined;
        for (let k = 0; seenAt === undefined && k < 300; k++) {
          for (const n of [...notes]) {
            if ((await n.version) === target) {
              seenAt = n.at;
              break;
            }
          }
          if (seenAt === undefined) await sleep(10);
        }
        assert.ok(seenAt !== undefined, `write ${i} was never notified`);
        fromStart.push(seenAt - t0);
        fromAck.push(Math.max(0, seenAt - acked));
      }
      off();
      const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
      const f = (x: number): string => x.toFixed(2);
      console.log(
        `      watch propagation over 300 writes (ms): write start → watch: p50 ${f(pct(fromStart, 50))} p99 ${f(pct(fromStart, 99))}; ` +
          `write ack → watch: p50 ${f(pct(fromAck, 50))} p99 ${f(pct(fromAck, 99))} (0 = the watch fired before the writer saw its ack)`,
      );
      assert.ok(pct(fromStart, 50) < 1000);
    });

    it('survives session expiry: a new session is opened, writes go on, watches are re-armed', async function () {
      this.timeout(60_000); // up to eight tries at stealing the session (expireSession)
      const root = `/expire${process.pid}-${++seq}`;
      const s = await openStore({ root, sessionTimeoutMs: 1000 });
      const other = await openStore({ root });
      await s.add({ item: item('n1'), allowMerge: false });
      let calls = 0;
      s.watch(() => calls++);
      await sleep(100);
      // Expire s's session from outside (test/support/zookeeper.ts expireSession).
      const session = (s as unknown as { session: ZkSession }).session;
      const renewed = new Promise<boolean>((resolve) => session.once('session', () => resolve(true)));
      const expired = await expireSession(cluster!.connectString(), () => session.credentials(), renewed);
      assert.ok(expired, 'the session did not expire');
      // Writes through the expired store work on the new session…
      await s.add({ item: item('n2'), allowMerge: false });
      assert.deepEqual((await s.list()).map((x) => x.id), ['n1', 'n2']);
      // …and its watch was re-armed on it.
      const before = calls;
      await other.add({ item: item('n3'), allowMerge: false });
      for (let i = 0; i < 100 && calls === before; i++) await sleep(20);
      assert.ok(calls > before, 'the watch did not survive the new session');
    });
  });
});
