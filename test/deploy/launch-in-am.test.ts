/**
 * scripts/launch-in-am.sh as YARN would run it in the AM container: CONTAINER_ID set, yarn-site.xml
 * under HADOOP_CONF_DIR naming the RM — here the simulator — and the shipped conf/blocklist-am.yaml.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliMain, repoRoot } from '../support/paths';
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
    fs.writeFileSync(
      path.join(dir, 'yarn-site.xml'),
      `<?xml version="1.0"?><configuration><property><name>yarn.resourcemanager.webapp.address</name><value>${sim.url.replace('http://', '')}</value></property></configuration>`,
    );
    const amContainer = sim.cluster.currentAttempt.amContainerId;
    const child = spawn(
      'bash',
      [
        path.join(repoRoot, 'scripts', 'launch-in-am.sh'),
        '-Drest.port=0',
        `-Dcluster.resource-blocklist.store.sqlite.path=${path.join(dir, 'b.db')}`,
        `-Dcluster.resource-blocklist.amrm-proxy.address=${sim.url}`,
        `-Dlog.audit.file=${path.join(dir, 'audit.jsonl')}`,
      ],
      { env: { ...process.env, CONTAINER_ID: amContainer, HADOOP_CONF_DIR: dir, BLOCKLIST_BIN: cliMain, BLOCKLIST_CONFIG_FILE: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const t = setTimeout(() => reject(new Error(`no start: ${out}`)), 10_000);
        const on = (d: Buffer) => {
          out += d.toString();
          const m = /sidecar listening on (http:\/\/[\d.:]+)/.exec(out);
          if (m) {
            clearTimeout(t);
            resolve(m[1]);
          }
        };
        child.stdout.on('data', on);
        child.stderr.on('data', on);
        child.on('exit', (c) => reject(new Error(`exited ${c}: ${out}`)));
      });
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
