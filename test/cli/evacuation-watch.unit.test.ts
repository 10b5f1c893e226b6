/**
 * The --wait follower follows an evacuation to its end: READY is exit 0 however the task managers
 * went (a release at the deadline, after a checkpoint or without one, is Flink's normal path), and
 * the last line says how; only --wait-timeout (exit 6) or the item's end (exit 4) stop it earlier.
 */
import { strict as assert } from 'node:assert';
import { ApiResponse, BlocklistClient, Transport } from '../../src/cli/client';
import { followEvacuation } from '../../src/cli/evacuation-watch';
import { EXIT } from '../../src/cli/exit-codes';
import { paint } from '../../src/cli/format';

type Ev = { phase: 'WAIT_CONTAINER' | 'CHECKPOINTING' | 'RELEASING' | 'TIMEOUT' | 'READY'; containers: string[]; released: string[]; waiting?: { code: string; detail: string }; checkpoint?: { jobId: string; id?: number; status: string; detail?: string } };

/** Answers GET of the item with the next of the given evacuation states (the last one repeats). */
function scripted(id: string, timeoutSeconds: number, states: Ev[]): Transport {
  let i = 0;
  return {
    direct: false,
    description: 'scripted',
    async request(): Promise<ApiResponse> {
      const ev = states[Math.min(i++, states.length - 1)];
      const since = 1_000_000;
      return {
        status: 200,
        body: {
          id,
          kind: 'node',
          action: 'MARK_BLOCKED_AND_EVACUATE_TASKS',
          sync: { state: ev.phase === 'READY' ? 'evacuated' : 'evacuating', evacuation: { itemId: id, node: id, since, timeoutSeconds, deadline: since + timeoutSeconds * 1000, remainingSeconds: 0, ...ev } },
        },
      };
    },
    async close() {},
  };
}

const follow = (t: Transport) => {
  const out: string[] = [];
  return followEvacuation(new BlocklistClient(t), 'n1', { paint: paint(false), interactive: false, intervalMs: 0, out: { write: (s: string) => out.push(s) }, now: () => 2_000_000, sleep: async () => undefined }).then((r) => ({ ...r, out: out.join('') }));
};

describe('cli --wait follower: outcome from state, not from a sampled phase', () => {
  it('a release at the deadline is the normal path: WAIT_CONTAINER, then READY with releases under a 2 s timeout → exit 0, saying they went at the deadline', async () => {
    const r = await follow(scripted('n1', 2, [{ phase: 'WAIT_CONTAINER', containers: ['c1', 'c2'], released: [] }, { phase: 'READY', containers: [], released: ['c1', 'c2'] }]));
    assert.equal(r.code, EXIT.OK);
    assert.match(r.message, /n1 evacuated in .*; 2 task manager\(s\) released at the deadline/);
  });
  it('follows CHECKPOINTING and RELEASING to READY (exit 0), printing why it waits, and says which checkpoint the release followed', async () => {
    const checkpoint = { jobId: 'j1', id: 42, status: 'COMPLETED' };
    const r = await follow(
      scripted('n1', 0, [
        { phase: 'CHECKPOINTING', containers: ['c1'], released: [], waiting: { code: 'checkpoint', detail: 'released once the checkpoint triggered 0.1 s ago of job j1 completes' }, checkpoint: { jobId: 'j1', status: 'IN_PROGRESS' } },
        { phase: 'RELEASING', containers: ['c1'], released: ['c1'], waiting: { code: 'release', detail: '1 task manager(s) released: waiting for YARN to report them gone' }, checkpoint },
        { phase: 'READY', containers: [], released: ['c1'] },
      ]),
    );
    assert.equal(r.code, EXIT.OK);
    assert.match(r.out, /CHECKPOINTING .*released once the checkpoint triggered/);
    assert.match(r.out, /RELEASING .*waiting for YARN/);
    assert.match(r.message, /1 task manager\(s\) released right after checkpoint 42 of job j1/);
  });
  it('a TIMEOUT without a fresh checkpoint still ends in exit 0, and says so', async () => {
    const r = await follow(scripted('n1', 0, [{ phase: 'TIMEOUT', containers: ['c1'], released: ['c1'], checkpoint: { jobId: 'j1', status: 'FAILED', detail: 'Checkpoint expired before completing.' } }, { phase: 'READY', containers: [], released: ['c1'] }]));
    assert.equal(r.code, EXIT.OK);
    assert.match(r.message, /without a fresh checkpoint \(Checkpoint expired before completing\.\)/);
  });
  it('the same under timeout 0 (release at once is the plan) → exit 0', async () => {
    const r = await follow(scripted('n1', 0, [{ phase: 'READY', containers: [], released: ['c1'] }]));
    assert.equal(r.code, EXIT.OK);
    assert.match(r.message, /n1 evacuated in .*; 1 task manager\(s\) released$/);
  });
  it('emptied by the job itself (nothing released) → exit 0', async () => {
    const r = await follow(scripted('n1', 60, [{ phase: 'WAIT_CONTAINER', containers: ['c1'], released: [] }, { phase: 'READY', containers: [], released: [] }]));
    assert.equal(r.code, EXIT.OK);
  });

  describe('a wait without --wait-timeout is bounded', () => {
    /** GET answers `sync` every time; the clock moves a minute per poll. */
    const steady = (sync: Record<string, unknown>) => {
      let t = 1_000_000;
      const transport: Transport = { direct: false, description: 'steady', request: async () => ({ status: 200, body: { id: 'n1', kind: 'node', action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', sync } }), close: async () => undefined };
      return followEvacuation(new BlocklistClient(transport), 'n1', { paint: paint(false), interactive: false, intervalMs: 0, out: { write: () => true }, now: () => (t += 60_000), sleep: async () => undefined });
    };
    it('still pending (nothing says when it ends) → gives up after 30 min, exit 6, saying why', async () => {
      const r = await steady({ state: 'pending', detail: 'proxy down' });
      assert.equal(r.code, EXIT.WAIT_TIMEOUT);
      assert.match(r.message, /gave up waiting after 30m \(no deadline is known: the default limit; --wait-timeout sets another\)/);
    });
    it('an evacuation waiting forever → the same bound; one with a deadline → 5 min past it', async () => {
      const forever = await steady({ state: 'evacuating', evacuation: { itemId: 'n1', node: 'n1', phase: 'WAIT_CONTAINER', since: 1_000_000, timeoutSeconds: -1, remainingSeconds: -1, containers: ['c1'], released: [] } });
      assert.match(forever.message, /gave up waiting after 30m/);
      const deadline = 1_000_000 + 3_600_000;
      const late = await steady({ state: 'evacuating', evacuation: { itemId: 'n1', node: 'n1', phase: 'WAIT_CONTAINER', since: 1_000_000, timeoutSeconds: 3600, deadline, remainingSeconds: 1, containers: ['c1'], released: [] } });
      assert.match(late.message, /gave up waiting after 1h [45]m \(5 minutes past its deadline/);
    });
    it('a block the safety cap holds back → exit 7 at once, with the reason', async () => {
      const r = await steady({ state: 'deferred', detail: 'held back by the safety cap: 1 of at most 1 of 3 RUNNING nodes' });
      assert.equal(r.code, EXIT.DEFERRED);
      assert.match(r.message, /n1 is deferred: stored, but not on YARN's blacklist, so no evacuation starts: held back by the safety cap/);
    });
  });
});
