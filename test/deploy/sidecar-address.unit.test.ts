/** The address record a sidecar publishes, which one `--app` picks, and Prometheus' http_sd shape of them. */
import { strict as assert } from 'node:assert';
import * as os from 'node:os';
import { advertisedRecord, attemptOfContainer } from '../../src/sidecar/address';
import { SidecarRecord, parseSidecarRecord, sidecarOf } from '../../src/store/zookeeper/sidecar-registry';
import { targetGroups } from '../../src/api/routes/discovery';

const base = { tls: false, restAddress: '', env: {}, version: '1.0.0', application: 'application_1652313600000_0001', started: Date.UTC(2026, 11, 1) };

describe('deploy: the published sidecar address', () => {
  it('names the bound host, rest.address when set, and for a wildcard bind the NodeManager host', () => {
    assert.equal(advertisedRecord({ ...base, bound: { address: '127.0.0.1', family: 'IPv4', port: 41000 } }).url, 'http://127.0.0.1:41000');
    const wild = advertisedRecord({ ...base, tls: true, env: { NM_HOST: 'nm7.example' }, bound: { address: '0.0.0.0', family: 'IPv4', port: 41001 } });
    assert.deepEqual([wild.url, wild.address, wild.scheme, wild.host], ['https://nm7.example:41001', 'nm7.example:41001', 'https', 'nm7.example']);
    assert.equal(advertisedRecord({ ...base, bound: { address: '::', family: 'IPv6', port: 1 } }).address, `${os.hostname()}:1`);
    assert.equal(advertisedRecord({ ...base, restAddress: 'jm.example', bound: { address: '0.0.0.0', family: 'IPv4', port: 2 } }).url, 'http://jm.example:2');
    assert.equal(advertisedRecord({ ...base, bound: { address: '::1', family: 'IPv6', port: 3 } }).url, 'http://[::1]:3');
    assert.equal(advertisedRecord({ ...base, bound: { address: '127.0.0.1', family: 'IPv4', port: 4 } }).started, '2026-12-01T00:00:00.000Z');
  });

  it('takes the attempt from CONTAINER_ID only when the container is of this application', () => {
    const env = { CONTAINER_ID: 'container_e17_1652313600000_0001_02_000001' };
    assert.equal(attemptOfContainer(env, 'application_1652313600000_0001'), 'appattempt_1652313600000_0001_000002');
    assert.equal(attemptOfContainer(env, 'application_1652313600000_0002'), undefined);
    assert.equal(attemptOfContainer({}, 'application_1652313600000_0001'), undefined);
  });

  const rec = (application: string, attempt: string | undefined, started: string): SidecarRecord => ({
    url: 'http://h:1', address: 'h:1', scheme: 'http', version: 'v', application, ...(attempt ? { attempt } : {}), started, host: 'h', pid: 1,
  });

  it('reads back only what a sidecar wrote, and --app picks the highest attempt, then the newest', () => {
    const r = rec('application_1652313600000_0001', 'appattempt_1652313600000_0001_000001', '2026-12-01T00:00:00.000Z');
    assert.deepEqual(parseSidecarRecord(JSON.stringify({ ...r, instance: 'x' })), { ...r, instance: 'x' });
    for (const bad of ['', 'null', '[]', '{"url":"u"}', JSON.stringify({ ...r, scheme: 'ftp' }), JSON.stringify({ ...r, pid: '1' })]) assert.equal(parseSidecarRecord(bad), undefined, bad);
    const app = 'application_1652313600000_0001';
    const all = [
      rec(app, 'appattempt_1652313600000_0001_000001', '2026-12-01T00:00:09.000Z'),
      rec(app, 'appattempt_1652313600000_0001_000002', '2026-12-01T00:00:01.000Z'),
      rec(app, 'appattempt_1652313600000_0001_000002', '2026-12-01T00:00:02.000Z'),
      rec('application_1652313600000_0002', 'appattempt_1652313600000_0002_000003', '2026-12-01T00:00:03.000Z'),
    ];
    assert.equal(sidecarOf(all, app), all[2]);
    assert.equal(sidecarOf(all, 'application_1652313600000_0003'), undefined);
  });

  it('http_sd: one target group per sidecar, labelled, in application order', () => {
    const groups = targetGroups([rec('application_1652313600000_0002', undefined, 's'), { ...rec('application_1652313600000_0001', 'appattempt_1652313600000_0001_000001', 's'), scheme: 'https', address: 'nm:2' }]);
    assert.deepEqual(groups, [
      { targets: ['nm:2'], labels: { __scheme__: 'https', application: 'application_1652313600000_0001', attempt: 'appattempt_1652313600000_0001_000001', host: 'h' } },
      { targets: ['h:1'], labels: { __scheme__: 'http', application: 'application_1652313600000_0002', host: 'h' } },
    ]);
  });
});
