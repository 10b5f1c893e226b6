/**
 * docs/amrm-proxy.openapi.yaml against both servers of the contract: the interceptor's HTTP side
 * (its own listener and routing, the Java classes that ship, over a proxy state with one live
 * worker: am-proxy's ContractServer) and the simulator's proxy face. A route and its document
 * that drift apart fail here (test/support/proxy-contract.ts lists the rules).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { startJavaLauncherWithStop } from '../support/java-launcher';
import { contractFindings } from '../support/proxy-contract';
import { HADOOP, INTERCEPTOR_VERSION, releaseClasspath, requireRealYarn } from '../support/real-yarn';
import { http } from '../support/sidecar';
import { SIM_INTERCEPTOR_VERSION } from '../../src/sim/proxy-attempt';

describe('the AMRM proxy contract document and its servers agree', function () {
  this.timeout(60_000);

  it('the interceptor (Java): methods, answers, refusals, after rules, body bound, secret', async function () {
    requireRealYarn(this);
    const release = HADOOP['3.5'];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-contract-'));
    const cp = releaseClasspath(release);
    const server = await startJavaLauncherWithStop<{ address: string; secret: string; liveContainer: string }>({
      what: 'the interceptor contract server',
      args: ['-Xmx128m', '-XX:TieredStopAtLevel=1', '-Dlog4j.configuration=log4j.properties', '-cp', cp, 'io.github.flinkyarnblocklist.launcher.ContractServer'],
      dir,
      log: path.join(dir, 'contract-server.log'),
      timeoutMs: 30_000,
    });
    try {
      const s = server.ready;
      assert.deepEqual(await contractFindings({ base: s.address, secret: s.secret, liveContainer: s.liveContainer }), []);
      const attempt = await http(s.address, 'GET', '/amrm/v1/attempt', undefined, { authorization: `Bearer ${s.secret}` });
      assert.equal((attempt.body as { interceptorVersion?: string }).interceptorVersion, INTERCEPTOR_VERSION, "the jar's version");
    } finally {
      await server.stop();
    }
  });

  it("the simulator's proxy face: methods, answers, refusals, after rules, body bound", async () => {
    const sim: RunningSimulator = await startSimulator({ port: 0, nodes: 4, containers: 3, seed: 5, tickMs: 0 });
    try {
      const live = sim.cluster.taskManagers()[0].id;
      assert.deepEqual(await contractFindings({ base: sim.url, liveContainer: live }), []);
      assert.equal(((await http(sim.url, 'GET', '/amrm/v1/attempt')).body as { interceptorVersion?: string }).interceptorVersion, SIM_INTERCEPTOR_VERSION);
    } finally {
      await sim.close();
    }
  });
});
