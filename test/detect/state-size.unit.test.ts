/**
 * The detector's state record stays as small as what it must remember. It kept an entry for every
 * host that ever failed under a block (or was ever blocked), forever: on a big cluster over weeks
 * the record grows past ZooKeeper's 1 MB znode limit, and from then on every write of it fails.
 * A real Detector on a memory store, fake clock.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { Detector } from '../../src/detect/detector';
import { unitDetector } from './unit-detector';
import { GoneStates } from '../../src/detect/gone-job-records';
import { silentLogger } from '../../src/core/logger';
import { decodeState } from '../../src/detect/state';
import { Failure } from '../../src/detect/types';
import { newItem } from '../../src/model/merge';
import { MemoryBackend, MemoryStore } from '../../src/store/memory-store';
import { ClusterNode } from '../../src/yarn/types';

const APP = 'application_1652313600000_0001';
const HOSTS = 2_000;

describe('detector state: what it no longer needs is forgotten', () => {
  it('hosts that failed under operator blocks are forgotten once their window and blocks are over; the record shrinks back', async () => {
    const clock = new FakeClock(1_716_900_000_000);
    const nodes: ClusterNode[] = Array.from({ length: HOSTS }, (_, i) => ({ id: `n${i}:8041`, host: `n${i}`, rack: '/r', state: 'RUNNING', healthReport: '', numContainers: 0 }));
    const store = new MemoryStore({ clock });
    const pending: Failure[] = [];
    const d = unitDetector({ clock, store, nodeList: nodes, sources: [{ name: 'test', poll: async () => ({ failures: pending.splice(0) }) }], applicationId: APP });
    await d.pass();
    // Operators block every host for an hour (maintenance waves); each fails once meanwhile.
    const ops = nodes.map((n) => ({ item: newItem({ id: n.host, kind: 'node' as const, node: n.host, action: 'MARK_BLOCKED' as const, end: { type: 'after' as const, ms: 3_600_000 }, cause: 'maintenance', scope: 'cluster', allowMerge: false }, clock.now(), { by: 'ops', from: 'cli' }), allowMerge: false }));
    await store.addMany(ops);
    for (const n of nodes) pending.push({ key: `test:${n.host}`, source: 'test', host: n.host, at: clock.now(), group: `test:${n.host}`, signature: 'x', summary: 'x' });
    clock.advance(1000);
    await d.pass();
    const record = async (): Promise<string> => (await store.readRecord(`detector.${APP}`)) ?? '';
    const busy = await record();
    assert.equal(Object.keys(decodeState(busy).state.hosts).length, HOSTS, 'while the failures are in the window, each host is remembered');

    // A day later: the blocks are over, the failures out of the window.
    clock.advance(24 * 3_600_000);
    await d.pass();
    const quiet = await record();
    assert.deepEqual(decodeState(quiet).state.hosts, {}, 'nothing left to remember about any host');
    assert.ok(quiet.length < 1_000, `record ${quiet.length} bytes (was ${busy.length} while busy)`);
  });
});

describe('detector state records of jobs that are gone', () => {
  it('are removed a week after their last write; records of running jobs (quiet ones too) stay', async () => {
    const DAY = 24 * 3_600_000;
    const clock = new FakeClock(1_716_900_000_000);
    const backend = new MemoryBackend();
    const nodes: ClusterNode[] = Array.from({ length: 10 }, (_, i) => ({ id: `n${i}:8041`, host: `n${i}`, rack: '/r', state: 'RUNNING', healthReport: '', numContainers: 0 }));
    const detectorOf = (app: string): Detector => unitDetector({ clock, store: new MemoryStore({ backend, clock }), nodeList: nodes, applicationId: app });
    const app = (n: number): string => `application_1652313600000_${String(n).padStart(4, '0')}`;
    const store = new MemoryStore({ backend });
    // The clean-up runs in the sync engine of any sidecar (here, one that runs no detector).
    const gone = new GoneStates({ store: new MemoryStore({ backend, clock }), logger: silentLogger });
    // Ten jobs ran and finished: each left its record.
    for (let i = 1; i <= 10; i++) await detectorOf(app(i)).pass();
    // One running, quiet job; one whose sidecar is down for three days and comes back.
    const running = detectorOf(app(100));
    const away = detectorOf(app(200));
    await away.pass();
    for (let day = 1; day <= 9; day++) {
      clock.advance(DAY);
      await running.pass();
      await gone.collect(app(300), clock.now());
      if (day === 3) await detectorOf(app(200)).pass();
    }
    const keys = (await store.recordKeys('detector.')).sort();
    assert.deepEqual(keys, [`detector.${app(100)}`, `detector.${app(200)}`], 'the ten finished jobs\' records are gone');
  });
});
