/**
 * Every outgoing call has a total deadline and a bounded answer (issue #31.4, #31.5), whichever
 * peer it goes to: the RM (on the event loop and through the node-list worker), the AMRM proxy and
 * Flink's JobManager. The peers are fake servers on loopback: one trickles its answer a byte at a
 * time (an idle timeout never fires), one sends an endless body. Deadlines run on a FakeClock.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { FakeClock } from '../../src/core/clock';
import { FlinkRestSource } from '../../src/detect/sources/flink-rest';
import { FlinkRestClient } from '../../src/flink/client';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { stopParsingWorker } from '../../src/yarn/off-thread';
import { PeerCallError } from '../../src/yarn/peer-http';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { pollUntil } from '../support/wait';

interface FakePeer {
  url: string;
  /** Body bytes written so far, over every request. */
  written(): number;
  /** Requests whose connection the client closed. */
  closedByClient(): number;
  requests(): number;
  close(): Promise<void>;
}

/** Answers every request 200 and then writes `chunk` every `everyMs`, at most `maxChunks` times (bounded), never ending on its own. */
async function trickler(opts: { chunk: string; everyMs: number; maxChunks: number; contentLength?: number }): Promise<FakePeer> {
  return fakePeer((res, count) => {
    res.writeHead(200, { 'Content-Type': 'application/json', ...(opts.contentLength !== undefined ? { 'Content-Length': String(opts.contentLength) } : {}) });
    let n = 0;
    const t = setInterval(() => {
      if (n++ >= opts.maxChunks || res.destroyed) return clearInterval(t);
      res.write(opts.chunk);
      count(Buffer.byteLength(opts.chunk));
    }, opts.everyMs);
    res.on('close', () => clearInterval(t));
  });
}

/** Answers with `total` bytes of a JSON string (chunked, no Content-Length unless `declare`), written as fast as the client reads. */
async function flood(total: number, declare = false): Promise<FakePeer> {
  const piece = Buffer.alloc(64 * 1024, 'a');
  return fakePeer((res, count) => {
    res.writeHead(200, { 'Content-Type': 'application/json', ...(declare ? { 'Content-Length': String(total) } : {}) });
    let sent = 0;
    const pump = (): void => {
      while (sent < total && !res.destroyed) {
        const n = Math.min(piece.length, total - sent);
        sent += n;
        count(n);
        if (!res.write(n === piece.length ? piece : piece.subarray(0, n))) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
}

async function fakePeer(answer: (res: http.ServerResponse, count: (n: number) => void) => void): Promise<FakePeer> {
  let written = 0;
  let closed = 0;
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    res.on('close', () => {
      if (!res.writableFinished) closed++;
    });
    answer(res, (n) => (written += n));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    written: () => written,
    closedByClient: () => closed,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Settles with the call's error, or fails when it has not settled `withinMs` after the clock moved (the wedge). */
async function failureOf(p: Promise<unknown>, withinMs = 3000): Promise<PeerCallError> {
  const wedged = Symbol('wedged');
  let timer: NodeJS.Timeout | undefined;
  const r = await Promise.race([p.then(() => 'answered', (e: unknown) => e), new Promise((resolve) => (timer = setTimeout(() => resolve(wedged), withinMs)))]);
  clearTimeout(timer);
  assert.notEqual(r, wedged, `the call was still waiting ${withinMs} ms after its deadline`);
  assert.ok(r instanceof PeerCallError, `expected a PeerCallError, got ${String(r)}`);
  return r;
}

describe('peer calls: a total deadline and a bounded answer for every peer (#31.4, #31.5)', function () {
  this.timeout(20_000);
  const peers: FakePeer[] = [];
  const start = async (p: Promise<FakePeer>): Promise<FakePeer> => {
    const peer = await p;
    peers.push(peer);
    return peer;
  };
  afterEach(async () => {
    for (const p of peers.splice(0)) await p.close();
  });
  after(() => stopParsingWorker());

  /** Starts `call`, waits until the trickling peer has sent a few bytes, then moves the clock past the deadline. */
  async function pastDeadline(peer: FakePeer, clock: FakeClock, deadlineMs: number, call: () => Promise<unknown>): Promise<PeerCallError> {
    const p = call();
    p.catch(() => undefined);
    await pollUntil('the peer trickles', () => peer.written() >= 3, 5000);
    clock.advance(deadlineMs);
    return failureOf(p);
  }

  it('the RM: a trickled answer (one byte every 30 ms) fails at the deadline, naming the key and what had come', async () => {
    const rm = await start(trickler({ chunk: ' ', everyMs: 30, maxChunks: 400 }));
    const clock = new FakeClock();
    const client = new ResourceManagerClient({ addresses: rm.url, timeoutMs: 10_000, clock });
    const e = await pastDeadline(rm, clock, 10_000, () => client.clusterInfo());
    assert.equal(e.failure, 'deadline');
    assert.match(e.message, /RM GET \/ws\/v1\/cluster\/info: .* did not complete its answer within 10000 ms \(cluster\.resource-blocklist\.yarn\.request-timeout\): \d+ bytes of it/);
    await pollUntil('the connection is closed', () => rm.closedByClient() === 1, 2000);
  });

  it('the RM node list read by the worker thread: the same deadline, on the caller clock; another RM of the HA list is tried', async () => {
    const slow = await start(trickler({ chunk: ' ', everyMs: 30, maxChunks: 400 }));
    const good = await start(fakePeer((res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"nodes":{"node":[{"id":"h1:8041","nodeHostName":"h1","state":"RUNNING","rack":"/r"}]}}')));
    const clock = new FakeClock();
    const client = new ResourceManagerClient({ addresses: [slow.url, good.url], timeoutMs: 10_000, clock });
    const p = client.nodes();
    await pollUntil('the peer trickles', () => slow.written() >= 3, 5000);
    clock.advance(10_000);
    const r = await Promise.race([p, new Promise((resolve) => setTimeout(() => resolve('wedged'), 3000))]);
    assert.notEqual(r, 'wedged', 'the node list was still waiting after its deadline');
    assert.deepEqual((r as { host: string }[]).map((n) => n.host), ['h1']);
    await pollUntil('the worker closed the trickling connection', () => slow.closedByClient() === 1, 2000);
    // Alone, the RM's failure is the deadline's.
    const solo = new ResourceManagerClient({ addresses: slow.url, timeoutMs: 10_000, clock });
    const before = slow.written();
    const q = solo.nodes();
    q.catch(() => undefined);
    await pollUntil('the peer trickles again', () => slow.written() >= before + 3, 5000);
    clock.advance(10_000);
    const e = await failureOf(q);
    assert.equal(e.failure, 'deadline');
    assert.match(e.message, /RM GET \/ws\/v1\/cluster\/nodes: .* within 10000 ms \(cluster\.resource-blocklist\.yarn\.request-timeout\)/);
  });

  it('the AMRM proxy: a trickled blacklist and a trickled push both fail at the deadline', async () => {
    const proxy = await start(trickler({ chunk: ' ', everyMs: 30, maxChunks: 400 }));
    const clock = new FakeClock();
    const client = new AmrmProxyClient({ address: proxy.url, timeoutMs: 5000, clock });
    const read = await pastDeadline(proxy, clock, 5000, () => client.blacklistSince(undefined));
    assert.equal(read.failure, 'deadline');
    assert.match(read.message, /AMRM proxy GET \/amrm\/v1\/blacklist: .* within 5000 ms/);
    const before = proxy.written();
    const push = client.updateBlacklist({ additions: ['h1'], removals: [] });
    push.catch(() => undefined);
    await pollUntil('the peer trickles', () => proxy.written() >= before + 3, 5000);
    clock.advance(5000);
    assert.equal((await failureOf(push)).failure, 'deadline');
  });

  it("Flink's JobManager: a trickled overview fails the detector source's poll at the deadline", async () => {
    const jm = await start(trickler({ chunk: ' ', everyMs: 30, maxChunks: 400 }));
    const clock = new FakeClock();
    const source = new FlinkRestSource({ address: jm.url, timeoutMs: 5000, clock });
    source.flinkVersion = '1.20.5'; // no GET /config first
    const ctx = { cursor: undefined, missed: () => undefined } as unknown as Parameters<FlinkRestSource['poll']>[0];
    const e = await pastDeadline(jm, clock, 5000, () => source.poll(ctx));
    assert.match(e.message, /Flink JobManager GET \/jobs\/overview: .* within 5000 ms/);
  });

  it("Flink's JobManager for evacuations (src/flink): a trickled answer fails at the deadline, an endless one at the bound", async () => {
    // The client says its failures as FlinkCallError (the evacuation's words); the wedge is what matters.
    const settled = async (p: Promise<unknown>, withinMs: number): Promise<Error> => {
      let timer: NodeJS.Timeout | undefined;
      const r = await Promise.race([p.then(() => 'answered', (e: unknown) => e), new Promise((resolve) => (timer = setTimeout(() => resolve('wedged'), withinMs)))]);
      clearTimeout(timer);
      assert.ok(r instanceof Error, `the call ${String(r)} ${withinMs} ms after its deadline`);
      return r;
    };
    const jm = await start(trickler({ chunk: ' ', everyMs: 30, maxChunks: 400 }));
    const clock = new FakeClock();
    const client = new FlinkRestClient({ baseUrl: jm.url, canPost: true, timeoutMs: 5000, clock });
    const trickled = client.jobs();
    trickled.catch(() => undefined);
    await pollUntil('the JobManager trickles', () => jm.written() >= 3, 5000);
    clock.advance(5000);
    const e = await settled(trickled, 3000);
    assert.match(e.message, /Flink JobManager GET \/jobs\/overview: .* within 5000 ms \(cluster\.resource-blocklist\.yarn\.request-timeout\)/);
    const big = await start(flood(64 * 1024 * 1024));
    const bounded = new FlinkRestClient({ baseUrl: big.url, canPost: true, maxAnswerBytes: 512 * 1024 });
    const f = await settled(bounded.taskManagers(), 10_000);
    assert.match(f.message, /Flink JobManager GET \/taskmanagers: .* larger than 512 KiB .*cluster\.resource-blocklist\.detector\.flink\.max-answer-size/);
  });

  it('an endless RM body is cut at the bound (event loop and worker), with an error naming the key; little more than the bound is read', async () => {
    const total = 256 * 1024 * 1024;
    const rm = await start(flood(total));
    const bound = 1024 * 1024;
    for (const offThread of [false, true]) {
      const client = new ResourceManagerClient({ addresses: rm.url, maxListBytes: bound, offThread });
      const before = rm.written();
      const e = await failureOf(client.nodes(), 10_000);
      assert.equal(e.failure, 'too-large', e.message);
      assert.equal(e.retriable, false);
      assert.match(e.message, /RM GET \/ws\/v1\/cluster\/nodes: the answer of .* is larger than 1 MiB .*raise cluster\.resource-blocklist\.yarn\.max-answer-size/);
      // The server could write only what the socket buffers took beyond the bound.
      const sent = rm.written() - before;
      assert.ok(sent < 32 * bound, `${offThread ? 'worker' : 'event loop'}: ${sent} bytes were sent for a bound of ${bound}`);
    }
  });

  it('a declared Content-Length past the bound is refused before the body is read; small answers have their own, tighter bound', async () => {
    const rm = await start(flood(64 * 1024 * 1024, true));
    const client = new ResourceManagerClient({ addresses: rm.url, offThread: true });
    const info = await failureOf(client.clusterInfo(), 10_000);
    assert.equal(info.failure, 'too-large');
    assert.match(info.message, /larger than 4 MiB/);
    const list = await failureOf(client.nodes(), 10_000);
    assert.match(list.message, /larger than 32 MiB/);
  });

  it('the AMRM proxy and Flink answers are bounded as well', async () => {
    const big = await start(flood(64 * 1024 * 1024));
    const proxy = new AmrmProxyClient({ address: big.url, maxAnswerBytes: 512 * 1024 });
    const e = await failureOf(proxy.blacklistSince(undefined), 10_000);
    assert.match(e.message, /AMRM proxy GET \/amrm\/v1\/blacklist: .* larger than 512 KiB .*cluster\.resource-blocklist\.amrm-proxy\.max-answer-size/);
    const attempt = await failureOf(proxy.attempt(), 10_000);
    assert.match(attempt.message, /larger than 64 KiB/);
    const jm = new FlinkRestSource({ address: big.url, maxAnswerBytes: 512 * 1024 });
    jm.flinkVersion = '1.20.5';
    const ctx = { cursor: undefined, missed: () => undefined } as unknown as Parameters<FlinkRestSource['poll']>[0];
    const f = await failureOf(jm.poll(ctx), 10_000);
    assert.match(f.message, /Flink JobManager GET \/jobs\/overview: .* larger than 512 KiB .*cluster\.resource-blocklist\.detector\.flink\.max-answer-size/);
  });
});
