/**
 * scripts/launch-in-am.sh as YARN would run it in the AM container: CONTAINER_ID set, yarn-site.xml
 * under HADOOP_CONF_DIR naming the RM — here the simulator — and the shipped conf/blocklist-am.yaml.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliMain } from '../support/paths';
import { launchInAm, writeYarnSite } from '../support/child-sidecar';
import { http, tempDir } from '../support/sidecar';
import { RunningSimulator, startSimulator } from '../../src/sim/server';

describe('deploy: scripts/launch-in-am.sh', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ port: 0, nodes: 6, containers: 6, tickMs: 0 });
  });
  after(() => sim.close());

  it('finds the application from CONTAINER_ID and the RM from yarn-site.xml, then enforces a block', async function () {
    this.timeout(20_000);
    const dir = tempDir();
    writeYarnSite(dir, sim.url);
    const amContainer = sim.cluster.currentAttempt.amContainerId;
    const flags = [
      '-Drest.port=0',
      '-Dcluster.resource-blocklist.store.type=sqlite',
      `-Dcluster.resource-blocklist.store.sqlite.path=${path.join(dir, 'b.db')}`,
      `-Dcluster.resource-blocklist.amrm-proxy.address=${sim.url}`,
      `-Dlog.audit.file=${path.join(dir, 'audit.jsonl')}`,
    ];
    const { child, url } = await launchInAm(flags, { ...process.env, CONTAINER_ID: amContainer, HADOOP_CONF_DIR: dir, BLOCKLIST_BIN: cliMain, BLOCKLIST_CONFIG_FILE: '' });
    try {
      const host = sim.cluster.nodes[2].host;
      assert.equal((await http(url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'deploy test' })).status, 201);
      const until = Date.now() + 5000;
      while (!sim.cluster.clientBlacklistView().includes(host) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(sim.cluster.clientBlacklistView(), [host]);
      const status = (await http(url, 'GET', '/status')).body as { applicationId: string };
      assert.equal(status.applicationId, sim.cluster.applicationId);
      const audit = fs.readFileSync(path.join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { op: string; id: string });
      assert.deepEqual(audit.map((a) => [a.op, a.id]), [['block', host]]);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
