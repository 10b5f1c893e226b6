/**
 * The YARN completed-containers source across an AMRM proxy restart. The proxy numbers its ring
 * from 1 again when it restarts; if it has completed more containers than the detector's cursor
 * before the detector reads again, `next` alone does not go down, and only the proxy's epoch says
 * the numbering began again. A fake proxy with the contract's paging (an `after` beyond the newest
 * entry answers the whole ring); the failures are fed to the detector's own ingest.
 */
import { strict as assert } from 'node:assert';
import { silentLogger } from '../../src/core/logger';
import { ingest } from '../../src/detect/incidents';
import { SourceContext, SourceReport } from '../../src/detect/source';
import { JsonValue, emptyState } from '../../src/detect/state';
import { YarnCompletedContainersSource, readCompletedCursor } from '../../src/detect/sources/yarn-containers';
import { CompletedContainer, CompletedContainersPage } from '../../src/yarn/types';

const NOW = 1_716_900_000_000;
const WINDOW = 3_600_000;

/** One proxy's ring; `restart()` is a new proxy: numbering from 1, a new epoch (or none, an old proxy). */
class FakeProxy {
  private ring: CompletedContainer[] = [];
  private attempt = 1;
  epoch: string | undefined;
  readonly asked: number[] = [];
  constructor(private readonly withEpoch: boolean) {
    this.epoch = withEpoch ? 'a1b2c3d4e5f60718' : undefined;
  }
  restart(): void {
    this.ring = [];
    this.attempt++;
    this.epoch = this.withEpoch ? `0f1e2d3c4b5a69${String(this.attempt).padStart(2, '0')}` : undefined;
  }
  fail(n: number, exitStatus = 1): void {
    for (let i = 0; i < n; i++) {
      const seq = this.ring.length + 1;
      const containerId = `container_1716900000000_0001_${String(this.attempt).padStart(2, '0')}_${String(seq + 1).padStart(6, '0')}`;
      this.ring.push({ seq, containerId, nodeId: 'sick:8041', host: 'sick', exitStatus, diagnostics: 'Exit code: 1', finishedAt: NOW - 1000 });
    }
  }
  async completedContainers(after: number): Promise<CompletedContainersPage> {
    this.asked.push(after);
    const next = this.ring.length;
    const from = after > next ? 0 : after;
    const page: CompletedContainersPage = { containers: this.ring.filter((c) => c.seq > from).map((c) => ({ ...c })), next };
    if (this.epoch !== undefined) page.epoch = this.epoch;
    return page;
  }
}

class Ctx {
  cursor: JsonValue | undefined;
  readonly missed: string[] = [];
  readonly state = emptyState();
  counted = 0;
  async poll(src: YarnCompletedContainersSource): Promise<SourceReport> {
    const ctx: SourceContext = {
      now: NOW,
      logger: silentLogger,
      hostOfContainer: () => undefined,
      isKnownHost: () => true,
      noteContainer: () => undefined,
      cursor: this.cursor,
      missed: (_n, why) => this.missed.push(why),
    };
    const r = await src.poll(ctx);
    if (r.cursor !== undefined) this.cursor = r.cursor;
    this.counted += ingest(this.state, r.failures, NOW, WINDOW).added.length;
    return r;
  }
}

describe('detect/sources/yarn-containers across an AMRM proxy restart', () => {
  it('a restarted proxy that completed more than the old cursor: a new epoch reads its ring from the start, every failure counted once', async () => {
    const proxy = new FakeProxy(true);
    const src = new YarnCompletedContainersSource(proxy);
    const ctx = new Ctx();
    proxy.fail(3);
    assert.equal((await ctx.poll(src)).failures.length, 3);
    assert.deepEqual(ctx.cursor, { epoch: 'a1b2c3d4e5f60718', seq: 3 });
    proxy.restart();
    proxy.fail(5); // seq 1..5 of the new proxy: next 5 >= the old cursor 3
    const r = await ctx.poll(src);
    assert.equal(r.failures.length, 5, 'seq 1..3 of the new proxy are not skipped');
    assert.equal(ctx.counted, 8);
    assert.deepEqual(ctx.cursor, { epoch: proxy.epoch, seq: 5 });
    assert.deepEqual(ctx.missed, [], 'a restart is no dropped ring');
    assert.deepEqual(proxy.asked, [0, 3, 0]);
    // Same epoch: paging by seq as before; a re-read of the ring counts nothing twice.
    proxy.fail(1);
    assert.equal((await ctx.poll(src)).failures.length, 1);
    ctx.cursor = 0;
    await ctx.poll(src);
    assert.equal(ctx.counted, 9);
  });

  it('a restarted proxy still below the old cursor answers from the start: no second read', async () => {
    const proxy = new FakeProxy(true);
    const src = new YarnCompletedContainersSource(proxy);
    const ctx = new Ctx();
    proxy.fail(4);
    await ctx.poll(src);
    proxy.restart();
    proxy.fail(2);
    assert.equal((await ctx.poll(src)).failures.length, 2);
    assert.deepEqual(proxy.asked, [0, 4]);
    assert.deepEqual(ctx.cursor, { epoch: proxy.epoch, seq: 2 });
  });

  it('a proxy without an epoch keeps the `next < after` rule and a bare-number cursor', async () => {
    const proxy = new FakeProxy(false);
    const src = new YarnCompletedContainersSource(proxy);
    const ctx = new Ctx();
    proxy.fail(4);
    await ctx.poll(src);
    assert.equal(ctx.cursor, 4);
    proxy.restart();
    proxy.fail(2);
    assert.equal((await ctx.poll(src)).failures.length, 2, 'next 2 < 4: read from the start');
    assert.equal(ctx.cursor, 2);
    proxy.fail(3);
    assert.equal((await ctx.poll(src)).failures.length, 3);
    assert.equal(ctx.cursor, 5);
  });

  it('a cursor stored before epochs (a bare number) is read as its seq and comes back with the epoch', async () => {
    const proxy = new FakeProxy(true);
    const src = new YarnCompletedContainersSource(proxy);
    const ctx = new Ctx();
    proxy.fail(6);
    ctx.cursor = 4;
    assert.deepEqual((await ctx.poll(src)).failures.map((f) => f.containerId?.slice(-2)), ['06', '07']);
    assert.deepEqual(ctx.cursor, { epoch: 'a1b2c3d4e5f60718', seq: 6 });
    assert.deepEqual(readCompletedCursor({ seq: -1, epoch: 7 }), { seq: 0 }, 'an unreadable cursor starts from the beginning');
    assert.deepEqual(readCompletedCursor('x'), { seq: 0 });
  });
});
