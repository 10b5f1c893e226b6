/**
 * GET /discovery/prometheus keeps a crashed sidecar's target while its attempt still runs
 * (src/api/routes/discovery.ts RunningTargets): published sidecars are ephemeral znodes, so without
 * it a sidecar that dies leaves Prometheus' targets and BlocklistSidecarDown (`up == 0`) can never
 * fire for it. Fake published list, fake RM, a hand-moved clock.
 */
import { strict as assert } from 'node:assert';
import { ApplicationState, DiscoveryPort, RECHECK_MS, RunningTargets, UNKNOWN_HOLD_MS, targetGroups } from '../../src/api/routes/discovery';
import type { SidecarRecord } from '../../src/store/zookeeper/sidecar-registry';
import { applicationStates } from '../../src/sidecar/published-address';
import { ResourceManagerReader, YarnCallError } from '../../src/yarn/types';

const APP_A = 'application_1652313600000_0001';
const APP_B = 'application_1652313600000_0002';
const record = (application: string, n: number, port = 20000 + n): SidecarRecord => ({
  url: `http://nm${n}.example:${port}`,
  address: `nm${n}.example:${port}`,
  scheme: 'http',
  version: '0.1.0',
  application,
  attempt: `appattempt_${application.slice('application_'.length)}_00000${n}`,
  started: '2026-12-02T00:00:00Z',
  host: `nm${n}.example`,
  pid: 100 + n,
});

function setup() {
  let now = 1_000_000;
  const published: SidecarRecord[] = [];
  const apps = new Map<string, ApplicationState | Error | undefined>();
  const asked: string[] = [];
  const inner: DiscoveryPort = { source: 'test', sidecars: async () => [...published] };
  const rm = {
    application: async (id: string) => {
      asked.push(id);
      const a = apps.get(id);
      if (a instanceof Error) throw a;
      return a;
    },
  };
  const d = new RunningTargets(inner, rm, () => now);
  const addresses = async () => targetGroups(await d.sidecars()).map((g) => g.targets[0]);
  return { d, published, apps, asked, addresses, advance: (ms: number) => (now += ms) };
}

describe('api/discovery: a crashed sidecar stays a target while its attempt runs', () => {
  it('a vanished sidecar of a RUNNING attempt is still listed, as it was (same target and labels), so up == 0 can fire', async () => {
    const t = setup();
    const a = record(APP_A, 1);
    const b = record(APP_B, 2);
    t.published.push(a, b);
    const before = targetGroups(await t.d.sidecars());
    t.apps.set(APP_A, { state: 'RUNNING', currentAppAttemptId: a.attempt });
    t.published.splice(0, 1); // a's znode went with its ZooKeeper session
    t.advance(60_000);
    const after = targetGroups(await t.d.sidecars());
    assert.deepEqual(after.map((g) => g.targets[0]).sort(), [a.address, b.address].sort());
    assert.deepEqual(after.find((g) => g.targets[0] === a.address), before.find((g) => g.targets[0] === a.address));
    assert.deepEqual(t.asked, [APP_A], 'only the vanished one is asked about');
  });

  it('it goes when the application ends, is unknown to the RM, or runs another attempt (a restarted AM publishes its own)', async () => {
    for (const [why, state] of [
      ['finished', { state: 'FINISHED', currentAppAttemptId: record(APP_A, 1).attempt }],
      ['unknown to the RM', undefined],
      ['another attempt', { state: 'RUNNING', currentAppAttemptId: record(APP_A, 3).attempt }],
    ] as const) {
      const t = setup();
      t.published.push(record(APP_A, 1));
      await t.d.sidecars();
      t.apps.set(APP_A, state);
      t.published.length = 0;
      t.advance(60_000);
      assert.deepEqual(await t.addresses(), [], why);
      t.advance(RECHECK_MS);
      t.apps.set(APP_A, { state: 'RUNNING', currentAppAttemptId: record(APP_A, 1).attempt });
      assert.deepEqual(await t.addresses(), [], `${why}: let go for good`);
    }
  });

  it('the same attempt published again (a newer process, another port) replaces it; the RM is asked at most once per RECHECK_MS', async () => {
    const t = setup();
    const first = record(APP_A, 1);
    t.published.push(first);
    await t.d.sidecars();
    t.apps.set(APP_A, { state: 'RUNNING', currentAppAttemptId: first.attempt });
    t.published.length = 0;
    for (let i = 0; i < 5; i++) {
      t.advance(1_000);
      assert.deepEqual(await t.addresses(), [first.address]);
    }
    assert.equal(t.asked.length, 1, 'one RM call for five discovery reads within RECHECK_MS');
    t.apps.set(APP_A, { state: 'FINISHED' });
    t.advance(RECHECK_MS);
    assert.deepEqual(await t.addresses(), [], 'asked again after RECHECK_MS');
    const again = setup();
    again.published.push(first);
    await again.d.sidecars();
    again.published.length = 0;
    again.published.push(record(APP_A, 1, 29999));
    assert.deepEqual(await again.addresses(), ['nm1.example:29999']);
    assert.deepEqual(again.asked, []);
  });

  it('the RM unreadable: kept for UNKNOWN_HOLD_MS after it was last published, then let go', async () => {
    const t = setup();
    t.published.push(record(APP_A, 1));
    await t.d.sidecars();
    t.apps.set(APP_A, new Error('no ResourceManager reachable'));
    t.published.length = 0;
    t.advance(UNKNOWN_HOLD_MS - 1);
    assert.deepEqual(await t.addresses(), [record(APP_A, 1).address]);
    t.advance(1);
    assert.deepEqual(await t.addresses(), []);
  });

  describe('with the store\'s registrations (the ZooKeeper store: they outlive the serving sidecar)', () => {
    function registered() {
      let now = 1_000_000;
      const published: SidecarRecord[] = [];
      const registrations: SidecarRecord[] = [];
      const forgotten: string[] = [];
      const apps = new Map<string, ApplicationState | undefined>();
      const inner: DiscoveryPort = {
        source: 'test',
        sidecars: async () => [...published],
        registered: async () => [...registrations],
        forget: async (r) => {
          forgotten.push(r.address);
          registrations.splice(registrations.indexOf(r), 1);
        },
      };
      const serving = () => new RunningTargets(inner, { application: async (id) => apps.get(id) }, () => now);
      return { published, registrations, forgotten, apps, serving, advance: (ms: number) => (now += ms) };
    }

    it('a serving sidecar started after the crash still keeps the crashed target, marked __meta_blocklist_published: "false"', async () => {
      const t = registered();
      const a = record(APP_A, 1);
      const b = record(APP_B, 2);
      t.registrations.push(a, b);
      t.published.push(b); // a crashed: its ephemeral znode went, its registration stayed
      t.apps.set(APP_A, { state: 'RUNNING', currentAppAttemptId: a.attempt });
      const all = await t.serving().targets();
      assert.deepEqual(all.map((x) => [x.record.address, x.vanished]), [[b.address, false], [a.address, true]]);
      const groups = targetGroups(all.map((x) => x.record), new Set(all.filter((x) => x.vanished).map((x) => x.record)));
      assert.equal(groups.find((g) => g.targets[0] === a.address)?.labels.__meta_blocklist_published, 'false');
      assert.equal(groups.find((g) => g.targets[0] === b.address)?.labels.__meta_blocklist_published, undefined);
      assert.deepEqual(t.forgotten, []);
    });

    it('once the application ends the registration is forgotten (nothing stays per job); a clean stop leaves none to keep', async () => {
      const t = registered();
      const a = record(APP_A, 1);
      t.registrations.push(a);
      t.apps.set(APP_A, { state: 'FINISHED', currentAppAttemptId: a.attempt });
      const d = t.serving();
      assert.deepEqual(await d.sidecars(), []);
      assert.deepEqual(t.forgotten, [a.address]);
      assert.equal(t.registrations.length, 0);
      // Published, then stopped cleanly (its registration removed by the stop): not kept, whatever the RM says.
      const b = record(APP_B, 2);
      t.published.push(b);
      t.registrations.push(b);
      await d.sidecars();
      t.published.length = 0;
      t.registrations.length = 0;
      t.apps.set(APP_B, { state: 'RUNNING', currentAppAttemptId: b.attempt });
      assert.deepEqual(await d.sidecars(), []);
    });
  });

  it("the current attempt is the RM's newest in the attempts list (a real RM's app report names none); an unknown application is undefined", async () => {
    const attempts = ['appattempt_1652313600000_0001_000002', 'appattempt_1652313600000_0001_000010', 'appattempt_1652313600000_0001_000001'];
    const rm = {
      application: async (id: string) => {
        if (id === APP_B) throw new YarnCallError('RM GET /ws/v1/cluster/apps/…: 404', 404);
        return { id, state: id === APP_A ? 'RUNNING' : 'FINISHED' };
      },
      attempts: async () => attempts.map((appAttemptId) => ({ appAttemptId })),
    } as unknown as ResourceManagerReader;
    const states = applicationStates(rm);
    assert.equal((await states.application(APP_A))?.currentAppAttemptId, 'appattempt_1652313600000_0001_000010');
    assert.equal(await states.application(APP_B), undefined);
    assert.deepEqual(await states.application('application_1652313600000_0003'), { id: 'application_1652313600000_0003', state: 'FINISHED' }, 'no attempts read for an application that does not run');
    const down = applicationStates({ application: async () => Promise.reject(new YarnCallError('no ResourceManager reachable', undefined)) } as unknown as ResourceManagerReader);
    await assert.rejects(down.application(APP_A), /no ResourceManager reachable/);
  });
});
