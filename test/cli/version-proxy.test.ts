/**
 * `blocklist version` names the running interceptor when a proxy answers (`interceptorVersion` of
 * GET /amrm/v1/attempt), says so when the proxy predates the field, and finds the proxy the way the
 * sidecar in the AM container does (its variables, else the hand-off in $LOCAL_DIRS).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { SIM_INTERCEPTOR_VERSION } from '../../src/sim/proxy-attempt';
import { tempDir } from '../support/paths';
import { expectCode, runCli } from './run';

interface VersionJson {
  interceptor: string;
  runningInterceptor?: { kind: string; version?: string; appAttemptId?: string; where: { address: string; source: string }; error?: string };
}

describe('cli: blocklist version and the running interceptor', function () {
  this.timeout(30_000);
  let sim: RunningSimulator;
  let older: http.Server;
  let olderUrl: string;
  let olderSawAuthorization: string | undefined;

  before(async () => {
    sim = await startSimulator({ port: 0, nodes: 2, containers: 1, seed: 1, tickMs: 0 });
    // A proxy from before the field: the same attempt, no interceptorVersion.
    older = http.createServer((req, res) => {
      olderSawAuthorization = req.headers.authorization;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ applicationId: 'application_1700000000000_0001', appAttemptId: 'appattempt_1700000000000_0001_000001', registered: true }));
    });
    await new Promise<void>((r) => older.listen(0, '127.0.0.1', r));
    olderUrl = `http://127.0.0.1:${(older.address() as AddressInfo).port}`;
  });

  after(async () => {
    await sim?.close();
    await new Promise((r) => older?.close(r));
  });

  it('--proxy: the version the proxy answers, beside the one this release is built with', async () => {
    const r = expectCode(await runCli(['version', '--proxy', sim.url, '-o', 'json']), 0, 'version --proxy');
    const v = JSON.parse(r.stdout) as VersionJson;
    assert.equal(v.runningInterceptor?.kind, 'answered');
    assert.equal(v.runningInterceptor?.version, SIM_INTERCEPTOR_VERSION);
    assert.equal(v.runningInterceptor?.appAttemptId, sim.cluster.currentAttempt.id);
    const text = expectCode(await runCli(['version', '--proxy', sim.url]), 0, 'version --proxy (text)').stdout;
    assert.match(text, new RegExp(`^running +blocklist-amrm-interceptor ${SIM_INTERCEPTOR_VERSION.replace(/\./g, '\\.')} \\(the proxy at ${sim.url}`, 'm'));
  });

  it('a proxy older than the field: said so, not guessed', async () => {
    const text = expectCode(await runCli(['version', '--proxy', olderUrl]), 0, 'version against an older proxy').stdout;
    assert.match(text, /^running +blocklist-amrm-interceptor older than interceptorVersion, version unknown/m);
  });

  it("inside the AM container: the sidecar's variable, else the hand-off in $LOCAL_DIRS", async () => {
    const byEnv = JSON.parse(expectCode(await runCli(['version', '-o', 'json'], { env: { BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS: sim.url } }), 0, 'by env').stdout) as VersionJson;
    assert.equal(byEnv.runningInterceptor?.version, SIM_INTERCEPTOR_VERSION);
    const dirs = [tempDir('blocklist-local-a-'), tempDir('blocklist-local-b-')];
    fs.writeFileSync(path.join(dirs[1], 'x.secret'), 'the-secret\n');
    fs.writeFileSync(path.join(dirs[1], 'blocklist-amrm-proxy.json'), JSON.stringify({ address: olderUrl, secretFile: path.join(dirs[1], 'x.secret') }));
    const byHandoff = JSON.parse(expectCode(await runCli(['version', '-o', 'json'], { env: { LOCAL_DIRS: dirs.join(',') } }), 0, 'by hand-off').stdout) as VersionJson;
    assert.equal(byHandoff.runningInterceptor?.kind, 'older');
    assert.equal(byHandoff.runningInterceptor?.where.source, path.join(dirs[1], 'blocklist-amrm-proxy.json'));
    assert.equal(olderSawAuthorization, 'Bearer the-secret', "with the hand-off's secret");
  });

  it('no proxy named: no running line; a named proxy that does not answer: exit 5 with the reason', async () => {
    const plain = expectCode(await runCli(['version']), 0, 'version').stdout;
    assert.doesNotMatch(plain, /^running/m);
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const r = expectCode(await runCli(['version', '--proxy', `127.0.0.1:${port}`]), 5, 'version against nothing');
    assert.match(r.stdout, /^running +unknown: no answer from the proxy at 127\.0\.0\.1:/m);
    assert.match(r.stderr, /did not answer/);
  });
});
