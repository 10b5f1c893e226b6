/**
 * The connection deadlines under a ZooKeeper session, on a fake clock: a client that does not
 * reach a session within the connect timeout is declared stuck; a connected one is probed only
 * after a silence, and declared stuck only when the probe itself gets no answer in time; a verdict
 * about a client that was replaced meanwhile is dropped.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { ConnectionDeadlines } from '../../src/store/zookeeper/deadlines';
import { ZkTimeoutError } from '../../src/store/zookeeper/errors';

const CONNECT_MS = 1000;
const SESSION_MS = 6000;
/** Probes start after min(connect timeout, session timeout / 3) of silence. */
const SILENCE_MS = Math.min(CONNECT_MS, SESSION_MS / 3);

interface Rig {
  clock: FakeClock;
  d: ConnectionDeadlines;
  stuck: string[];
  probes: { timeoutMs: number; answer(ok: boolean): void }[];
}

function rig(): Rig {
  const clock = new FakeClock();
  const stuck: string[] = [];
  const probes: Rig['probes'] = [];
  const d = new ConnectionDeadlines({
    connectTimeoutMs: CONNECT_MS,
    sessionTimeoutMs: SESSION_MS,
    clock,
    // As the session does: a stuck client is replaced by a fresh one at once.
    stuck: (why) => {
      stuck.push(why);
      d.clientStarted();
    },
    probe: (timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        probes.push({ timeoutMs, answer: (ok) => (ok ? resolve() : reject(new ZkTimeoutError('exists / got no answer in time'))) });
      }),
  });
  return { clock, d, stuck, probes };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('ZooKeeper connection deadlines (fake clock)', () => {
  it('a client without a session past the connect timeout is stuck; one that connects in time is not', () => {
    const { clock, d, stuck } = rig();
    d.clientStarted();
    clock.advance(CONNECT_MS - 10);
    d.connected();
    clock.advance(CONNECT_MS);
    assert.deepEqual(stuck, []);
    d.disconnected();
    clock.advance(CONNECT_MS + 300);
    assert.equal(stuck.length, 1);
    assert.match(stuck[0], /no session within 1000 ms/);
    d.close();
  });

  it('a connected client is probed only after a silence, and stuck only when the probe gets no answer', async () => {
    const { clock, d, stuck, probes } = rig();
    d.clientStarted();
    d.connected();
    // Answers keep coming: no probe.
    for (let i = 0; i < 5; i++) {
      clock.advance(SILENCE_MS / 2);
      d.answered();
    }
    assert.equal(probes.length, 0);
    // Silence: one probe (never two at a time), bounded by the connect timeout.
    clock.advance(SILENCE_MS + 300);
    clock.advance(SILENCE_MS + 300);
    assert.equal(probes.length, 1);
    assert.equal(probes[0].timeoutMs, CONNECT_MS);
    probes[0].answer(true);
    await settle();
    assert.deepEqual(stuck, []);
    assert.equal(d.unreachableForMs(), 0);
    // The next probe gets no answer in time: stuck, and unreachable since then.
    clock.advance(SILENCE_MS + 300);
    assert.equal(probes.length, 2);
    probes[1].answer(false);
    await settle();
    assert.equal(stuck.length, 1);
    assert.match(stuck[0], /probe got no answer within 1000 ms/);
    clock.advance(500);
    assert.ok(d.unreachableForMs() >= 500);
    d.close();
  });

  it("a probe's verdict about a client replaced meanwhile is dropped; after close nothing is checked", async () => {
    const { clock, d, stuck, probes } = rig();
    d.clientStarted();
    d.connected();
    clock.advance(SILENCE_MS + 300);
    assert.equal(probes.length, 1);
    d.clientStarted(); // replaced (expiry) while the probe was out
    probes[0].answer(false);
    await settle();
    assert.deepEqual(stuck, []);
    d.close();
    clock.advance(10 * CONNECT_MS);
    assert.deepEqual(stuck, []);
  });

  it('unreachable time runs from start until connected, and again from a disconnect', () => {
    const { clock, d } = rig();
    d.clientStarted();
    clock.advance(700);
    assert.equal(d.unreachableForMs(), 700);
    d.connected();
    assert.equal(d.unreachableForMs(), 0);
    clock.advance(200);
    d.disconnected();
    clock.advance(300);
    assert.equal(d.unreachableForMs(), 300);
    d.close();
  });
});
