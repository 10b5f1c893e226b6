/**
 * ZooKeeper going away and coming back, as a supervisor sees it (issue: "a sidecar can stay
 * disconnected after ZooKeeper restarts, forever"):
 *  - 10 rounds of `kill -9` + restart on the same port with two sidecars of two applications:
 *    after each restart both must be back in sync (a block written through A enforced on both
 *    applications' blacklists, neither reporting storeDegraded) within session timeout + 5 s;
 *  - a server that accepts the connection and never answers the handshake (a TCP proxy in front
 *    of the real ZooKeeper turned into a black hole, then back): the client is replaced after the
 *    connect timeout and the sidecar recovers; /healthz fails past the unreachable limit and
 *    recovers with the store;
 *  - SIGTERM ends a sidecar process (default timeouts) within 5 s while ZooKeeper is down and a
 *    write is waiting on it.
 * Bounded: small tickTime and session timeout, every wait has a deadline, loopback only.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { ZkCluster, freePort, requireZookeeper, zkJobConfig } from '../support/zookeeper';
import { pollUntil } from '../support/wait';
import { tempDir } from '../support/sidecar';
import { spawnSidecar, sleep } from './support';
import { count, printFigures } from '../fuzz/figures';

const SESSION_MS = 2000;

/** One bounded request (a sidecar that hangs must not hang the test). */
async function call(base: string, method: string, p: string, body?: unknown, timeoutMs = 3000): Promise<{ status: number; body: unknown }> {
  try {
    const res = await fetch(base + p, {
      method,
      signal: AbortSignal.timeout(timeoutMs),
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  } catch (e) {
    return { status: 0, body: (e as Error).message };
  }
}

const until = (what: string, cond: () => Promise<boolean>, timeoutMs: number): Promise<number> => pollUntil(what, cond, timeoutMs, 20);

/** A TCP proxy to ZooKeeper that can turn into a black hole: it accepts, reads, never answers. */
class Blackhole {
  private readonly sockets = new Set<net.Socket>();
  private mode: 'forward' | 'blackhole' = 'forward';
  private constructor(private readonly server: net.Server, readonly port: number) {}

  static async start(targetPort: number): Promise<Blackhole> {
    const port = await freePort();
    let self: Blackhole | undefined = undefined;
    const server = net.createServer((client) => {
      const b = self as Blackhole;
      b.sockets.add(client);
      client.on('close', () => b.sockets.delete(client));
      client.on('error', () => undefined);
      if (b.mode === 'blackhole') {
        client.resume(); // read the ConnectRequest, answer nothing, close nothing
        return;
      }
      const up = net.connect({ host: '127.0.0.1', port: targetPort });
      b.sockets.add(up);
      up.on('close', () => {
        b.sockets.delete(up);
        client.destroy();
      });
      up.on('error', () => undefined);
      client.on('close', () => up.destroy());
      client.pipe(up).pipe(client);
    });
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    self = new Blackhole(server, port);
    return self;
  }

  /** Cuts every open connection; new ones are swallowed (blackhole) or forwarded. */
  set(mode: 'forward' | 'blackhole', cut: boolean): void {
    this.mode = mode;
    if (cut) for (const s of [...this.sockets]) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of [...this.sockets]) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

const zkDefines = (quorum: string, root: string): Record<string, string> => ({
  'cluster.resource-blocklist.store.type': 'zookeeper',
  'cluster.resource-blocklist.store.zookeeper.quorum': quorum,
  'cluster.resource-blocklist.store.zookeeper.root': root,
});

describe('faults: ZooKeeper restarts, black holes and SIGTERM', function () {
  this.timeout(150_000);
  let zk: ZkCluster | undefined;
  const sims: RunningSimulator[] = [];
  const sidecars: Sidecar[] = [];

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
    for (const appNumber of [1, 2]) sims.push(await startSimulator({ port: 0, nodes: 30, containers: 10, seed: 7, tickMs: 0, appNumber }));
  });

  afterEach(async () => {
    for (const s of sidecars.splice(0)) await s.close().catch(() => undefined);
  });

  after(async () => {
    for (const s of sims.splice(0)) await s.close().catch(() => undefined);
    await zk?.stop();
    printFigures('ZooKeeper restarts', ['ZooKeeper restarts', 'ZooKeeper restarts recovered in time', 'slowest recovery after a ZooKeeper restart (ms)', 'recovery from a swallowed handshake (ms)', 'SIGTERM to exit with ZooKeeper down (ms)']);
  });

  async function sidecar(i: number, quorum: string, root: string, extra: Record<string, string> = {}): Promise<Sidecar> {
    const config = zkJobConfig(quorum, root, sims[i], {
      'cluster.resource-blocklist.store.zookeeper.session-timeout': `${SESSION_MS} ms`,
      'cluster.resource-blocklist.store.zookeeper.operation-timeout': '1 s',
      'cluster.resource-blocklist.store.zookeeper.connect-timeout': '1 s',
      'cluster.resource-blocklist.poll-interval': '200 ms',
      'cluster.resource-blocklist.retry.initial-backoff': '50 ms',
      'cluster.resource-blocklist.retry.max-backoff': '500 ms',
      'cluster.resource-blocklist.max-blocked-fraction': '1',
      'rest.rate-limit.max-mutations': '0',
      ...extra,
    });
    const s = await startSidecar({ config, logger: silentLogger, env: {} });
    sidecars.push(s);
    return s;
  }

  const degraded = async (s: Sidecar): Promise<boolean> => {
    const r = await call(s.url, 'GET', '/status', undefined, 1000);
    return r.status !== 200 || (r.body as { storeDegraded?: boolean }).storeDegraded === true;
  };

  it('10 of 10 kill -9 + restarts: both sidecars back in sync within session timeout + 5 s', async () => {
    const z = zk as ZkCluster;
    const root = `/restarts${process.pid}`;
    const a = await sidecar(0, z.connectString(), root);
    const b = await sidecar(1, z.connectString(), root);
    const hosts = sims[0].cluster.nodes.map((n) => n.host);
    const limit = SESSION_MS + 5000;
    let recovered = 0;
    let slowest = 0;
    const failures: string[] = [];
    for (let round = 0; round < 10; round++) {
      count('ZooKeeper restarts');
      await z.kill(1);
      // Alternate short outages (the session survives) and ones longer than the session timeout.
      await sleep(round % 2 === 0 ? 300 : SESSION_MS + 500);
      z.restart(1);
      await z.waitReady([1], 20_000);
      const t0 = performance.now();
      const host = hosts[round];
      try {
        await until(`PUT ${host} through A accepted`, async () => (await call(a.url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: `round ${round}` }, 1500)).status === 201, limit);
        await until(
          `${host} enforced on both applications and no sidecar degraded`,
          async () =>
            sims.every((s) => s.cluster.clientBlacklistView().includes(host)) && !(await degraded(a)) && !(await degraded(b)),
          Math.max(0, limit - (performance.now() - t0)),
        );
        const took = performance.now() - t0;
        slowest = Math.max(slowest, took);
        recovered++;
      } catch (e) {
        failures.push(`round ${round}: ${(e as Error).message}`);
      }
    }
    count('ZooKeeper restarts recovered in time', recovered);
    count('slowest recovery after a ZooKeeper restart (ms)', Math.round(slowest));
    assert.deepEqual(failures, []);
    assert.equal(recovered, 10);
  });

  it('a server that never answers the handshake: fresh client after the connect timeout; /healthz fails past the limit and recovers', async () => {
    const z = zk as ZkCluster;
    const hole = await Blackhole.start(Number(z.connectString().split(':')[1]));
    try {
      const root = `/blackhole${process.pid}`;
      const a = await sidecar(0, `127.0.0.1:${hole.port}`, root, { 'cluster.resource-blocklist.store.unreachable-limit': '1500 ms' });
      const before = await call(a.url, 'PUT', '/blocklist/nodes/bh-before', { action: 'MARK_BLOCKED', cause: 'before' });
      assert.equal(before.status, 201, JSON.stringify(before.body));
      assert.equal((await call(a.url, 'GET', '/healthz')).status, 200);
      hole.set('blackhole', true);
      // The limit passes: a supervisor sees the sidecar unhealthy, with the reason.
      await until('/healthz 503', async () => (await call(a.url, 'GET', '/healthz', undefined, 1000)).status === 503, 6000);
      const h = await call(a.url, 'GET', '/healthz');
      assert.match(JSON.stringify(h.body), /unreachable for \d+ s \(limit cluster\.resource-blocklist\.store\.unreachable-limit/);
      // ZooKeeper answers again, but the client's pending handshake is on a swallowed connection:
      // only a fresh client gets through.
      hole.set('forward', false);
      const took = await until(
        'a write accepted again and /healthz 200',
        async () => (await call(a.url, 'PUT', '/blocklist/nodes/bh-after', { action: 'MARK_BLOCKED', cause: 'after' }, 1500)).status === 201 && (await call(a.url, 'GET', '/healthz')).status === 200,
        SESSION_MS + 5000,
      );
      count('recovery from a swallowed handshake (ms)', Math.round(took));
      const replaced = (a.store as unknown as { session: { replacements: number } }).session.replacements;
      assert.ok(replaced >= 1, 'the stuck client was replaced');
    } finally {
      await hole.close();
    }
  });

  it('SIGTERM ends a sidecar process within 5 s while ZooKeeper is down and a write waits on it (default timeouts)', async () => {
    const z = zk as ZkCluster;
    const sim = sims[0];
    const child = await spawnSidecar(`${tempDir('blocklist-zkterm-')}/unused.db`, sim.url.replace(/^http:\/\//, ''), sim.url, {
      ...zkDefines(z.connectString(), `/sigterm${process.pid}`),
      'yarn.application.id': sim.cluster.applicationId,
    });
    try {
      const before = await call(child.url, 'PUT', '/blocklist/nodes/term-before', { action: 'MARK_BLOCKED', cause: 'before' });
      assert.equal(before.status, 201, JSON.stringify(before.body));
      await z.kill(1);
      // A write now waits up to the 5 s operation timeout; the sync engine's reads too.
      const pending = call(child.url, 'PUT', '/blocklist/nodes/term-during', { action: 'MARK_BLOCKED', cause: 'during' }, 10_000);
      await sleep(300);
      const t0 = performance.now();
      child.child.kill('SIGTERM');
      const code = await Promise.race([child.exited, sleep(8000).then(() => 'hung' as const)]);
      const took = performance.now() - t0;
      count('SIGTERM to exit with ZooKeeper down (ms)', Math.round(took));
      assert.notEqual(code, 'hung', 'the sidecar did not exit within 8 s of SIGTERM');
      assert.ok(took < 5000, `exit took ${Math.round(took)} ms`);
      await pending;
    } finally {
      if (child.child.exitCode === null) child.child.kill('SIGKILL');
      if (!(await z.mode(1))) {
        z.restart(1);
        await z.waitReady([1], 20_000);
      }
    }
  });
});
