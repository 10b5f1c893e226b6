/** The Flink watcher: where the JobManager is looked for, how often, and what a failed read leaves. */
import { strict as assert } from 'node:assert';
import { silentLogger } from '../../src/core/logger';
import { FlinkLocation } from '../../src/flink/locate';
import { FlinkJobManager } from '../../src/flink/types';
import { FlinkWatcher, RELOCATE_MS, versionAtLeast } from '../../src/sync/watch-flink';
import { ApplicationInfo, ResourceManagerReader } from '../../src/yarn/types';

const APP = 'application_1652313600000_0001';
const need = { evacuating: false, covered: new Set<string>(), triggers: [] };

function rmNaming(app: Partial<ApplicationInfo>): { rm: ResourceManagerReader; calls: () => number } {
  let calls = 0;
  const rm = { application: async (id: string) => (calls++, { id, state: 'RUNNING', ...app }) } as unknown as ResourceManagerReader;
  return { rm, calls: () => calls };
}

const down = (loc: FlinkLocation): FlinkJobManager => ({ baseUrl: loc.baseUrl, canPost: loc.canPost, version: async () => { throw new Error('ECONNREFUSED'); } }) as unknown as FlinkJobManager;

describe('sync/watch-flink: finding the JobManager', () => {
  it("tries the AM's REST port (amRPCAddress), then the RM's web proxy (read-only), and says which failed", async () => {
    const { rm } = rmNaming({ amRPCAddress: 'jm-host:40123', trackingUrl: 'http://rm:8088/proxy/application_1652313600000_0001/' });
    const tried: FlinkLocation[] = [];
    const w = new FlinkWatcher({ rm, logger: silentLogger, connect: (l) => (tried.push(l), down(l)), address: '', enabled: true, minIntervalMs: 1000 });
    await w.refresh(0, APP, need);
    assert.deepEqual(tried.map((l) => [l.baseUrl, l.canPost, l.source]), [['http://jm-host:40123', true, 'am-rpc-address'], ['http://rm:8088/proxy/application_1652313600000_0001', false, 'tracking-url']]);
    const k = w.knowledge;
    assert.equal(k.kind, 'unknown');
    assert.match(k.kind === 'unknown' ? k.error : '', /no JobManager answers: http:\/\/jm-host:40123 \(am-rpc-address\): ECONNREFUSED; .*tracking-url/);
  });

  it("a JobManager that does not answer costs the RM one application report a minute, not one per read", async () => {
    const { rm, calls } = rmNaming({ amRPCAddress: 'jm-host:40123' });
    const w = new FlinkWatcher({ rm, logger: silentLogger, connect: down, address: '', enabled: true, minIntervalMs: 1000 });
    for (let t = 0; t < 59_000; t += 1000) await w.refresh(t, APP, need);
    assert.equal(calls(), 1);
    for (let t = 59_000; t < 121_000; t += 1000) await w.refresh(t, APP, need);
    assert.equal(calls(), 3, 'read again once a minute');
  });

  it('a configured address is used alone, and no report is read; an AM registered without a port names none', async () => {
    const { rm, calls } = rmNaming({ amRPCAddress: 'nm:0' });
    const tried: string[] = [];
    const w = new FlinkWatcher({ rm, logger: silentLogger, connect: (l) => (tried.push(l.baseUrl), down(l)), address: 'https://jm.example:8443', enabled: true, minIntervalMs: 1000 });
    await w.refresh(0, APP, need);
    assert.deepEqual(tried, ['https://jm.example:8443']);
    assert.equal(calls(), 0);
    const none = new FlinkWatcher({ rm, logger: silentLogger, connect: down, address: '', enabled: true, minIntervalMs: 1000 });
    await none.refresh(RELOCATE_MS, APP, need);
    const k = none.knowledge;
    assert.match(k.kind === 'unknown' ? k.error : '', /names no JobManager address .*flink\.rest-address/);
  });

  it('switched off: never read, and says so', async () => {
    const { rm, calls } = rmNaming({});
    const w = new FlinkWatcher({ rm, logger: silentLogger, connect: down, address: '', enabled: false, minIntervalMs: 1000 });
    await w.refresh(0, APP, need);
    assert.equal(calls(), 0);
    assert.deepEqual(w.knowledge, { kind: 'off', why: 'cluster.resource-blocklist.flink.enabled is false' });
  });

  it('checkpoint triggers from 1.17 (FLINK-27101); an unknown version is taken to have them', () => {
    assert.equal(versionAtLeast('1.16.3', [1, 17]), false);
    assert.equal(versionAtLeast('1.17.0', [1, 17]), true);
    assert.equal(versionAtLeast('2.3.0', [1, 17]), true);
    assert.equal(versionAtLeast(undefined, [1, 17]), true);
  });
});
