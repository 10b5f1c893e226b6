/**
 * The --wait follower judges the outcome from the state it reads, not from catching a phase: a
 * TIMEOUT that lasts less than one poll (the release happens, the node is empty at the next read)
 * is still "the deadline passed" (exit 6), and a release under timeout 0 is the plan (exit 0).
 */
import { strict as assert } from 'node:assert';
import { ApiResponse, BlocklistClient, Transport } from '../../src/cli/client';
import { followEvacuation } from '../../src/cli/evacuation-watch';
import { EXIT } from '../../src/cli/exit-codes';
import { paint } from '../../src/cli/format';

type Ev = { phase: 'WAIT_CONTAINER' | 'TIMEOUT' | 'READY'; containers: string[]; released: string[] };

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
  it('WAIT_CONTAINER then straight to READY with releases under a 2 s timeout → exit 6, shown as TIMEOUT', async () => {
    const r = await follow(scripted('n1', 2, [{ phase: 'WAIT_CONTAINER', containers: ['c1', 'c2'], released: [] }, { phase: 'READY', containers: [], released: ['c1', 'c2'] }]));
    assert.equal(r.code, EXIT.WAIT_TIMEOUT);
    assert.match(r.message, /the evacuation deadline passed with 2 container\(s\) still there; the sidecar released them/);
    assert.match(r.out, /TIMEOUT {2}0 containers left, 2 released, deadline passed/);
  });
  it('the same under timeout 0 (release at once is the plan) → exit 0', async () => {
    const r = await follow(scripted('n1', 0, [{ phase: 'READY', containers: [], released: ['c1'] }]));
    assert.equal(r.code, EXIT.OK);
    assert.match(r.message, /n1 evacuated in .*1 container\(s\) were released/);
  });
  it('emptied by the job itself (nothing released) → exit 0', async () => {
    const r = await follow(scripted('n1', 60, [{ phase: 'WAIT_CONTAINER', containers: ['c1'], released: [] }, { phase: 'READY', containers: [], released: [] }]));
    assert.equal(r.code, EXIT.OK);
  });
});
