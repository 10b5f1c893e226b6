/**
 * yarn.scheduler.include-port-in-node-name=true: the scheduler matches blacklist entries against
 * `host:port` (the NodeManager's NodeId), so a host entry blocks nothing. The naming is read from
 * the RM's /conf at start, and the proxy is then spoken to in NodeIds while the engine thinks in
 * hosts. Fakes for the proxy's owner sets and the RM's nodes; the RM's /conf over real HTTP.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { AmrmProxy, BlacklistChange, BlacklistView, ClusterNode, ResourceManagerReader } from '../../src/yarn/types';
import { INCLUDE_PORT_KEY, PortNamedProxy, detectNodeNaming } from '../../src/yarn/node-names';
import { parseConfAnswer } from '../../src/yarn/rm-conf';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { loadConfig } from '../../src/config/config';
import { createSync } from '../../src/sidecar/sync-factory';
import { SimCluster } from '../../src/sim/cluster';
import { inProcessYarn } from '../../src/sim/in-process';
import { sidecarStatus } from '../../src/api/status-presenter';
import { FlakyStore, nodeItem } from '../sync/fakes';

const node = (id: string, state: ClusterNode['state'] = 'RUNNING'): ClusterNode => ({ id, host: id.split(':')[0], rack: '/r1', state, healthReport: '', numContainers: 0 });

/** One owner's set on the AM's blacklist, as the proxy keeps it (additions, then removals). */
class OwnerSets implements Pick<AmrmProxy, 'blacklist' | 'updateBlacklist'> {
  readonly sets = new Map<string, Set<string>>();
  readonly changes: BlacklistChange[] = [];
  async blacklist(): Promise<BlacklistView> {
    const owners = Object.fromEntries([...this.sets].map(([o, s]) => [o, [...s].sort()]));
    return { blacklist: [...new Set([...this.sets.values()].flatMap((s) => [...s]))].sort(), owners };
  }
  async updateBlacklist(change: BlacklistChange, owner = 'blocklist'): Promise<void> {
    this.changes.push(change);
    const s = this.sets.get(owner) ?? new Set<string>();
    for (const h of change.additions) s.add(h);
    for (const h of change.removals) s.delete(h);
    this.sets.set(owner, s);
  }
}

function fakes(nodes: ClusterNode[]) {
  const sets = new OwnerSets();
  const proxy = { ...sets, blacklist: () => sets.blacklist(), updateBlacklist: (c: BlacklistChange, o?: string) => sets.updateBlacklist(c, o) } as unknown as AmrmProxy;
  const rm = { nodes: async () => nodes } as unknown as ResourceManagerReader;
  return { sets, proxy, rm };
}

describe('yarn/node-names: a scheduler that names nodes host:port', () => {
  it('pushes a host as every NodeId it has (racks as they are), reads them back as the host', async () => {
    const nodes = [node('h1:8041'), node('h1:8042'), node('h2:8041')];
    const { sets, proxy, rm } = fakes(nodes);
    const p = new PortNamedProxy(proxy, rm, new FakeClock(0), silentLogger);
    await p.updateBlacklist({ additions: ['h1', '/r9', 'ghost'], removals: [] });
    assert.deepEqual([...(sets.sets.get('blocklist') ?? [])].sort(), ['/r9', 'ghost', 'h1:8041', 'h1:8042']);
    assert.deepEqual((await p.blacklist()).owners.blocklist, ['/r9', 'ghost', 'h1']);
    await p.updateBlacklist({ additions: [], removals: ['h1'] });
    assert.deepEqual([...(sets.sets.get('blocklist') ?? [])].sort(), ['/r9', 'ghost']);
  });

  it('a NodeManager that joins the host later makes the host read as not (fully) blacklisted, so the next pass pushes it again', async () => {
    const nodes = [node('h1:8041')];
    const { proxy, rm } = fakes(nodes);
    const clock = new FakeClock(0);
    const p = new PortNamedProxy(proxy, rm, clock, silentLogger);
    await p.updateBlacklist({ additions: ['h1'], removals: [] });
    assert.deepEqual((await p.blacklist()).owners.blocklist, ['h1']);
    nodes.push(node('h1:8042'));
    clock.advance(61_000);
    assert.deepEqual((await p.blacklist()).owners.blocklist, []);
    await p.updateBlacklist({ additions: ['h1'], removals: [] });
    assert.deepEqual((await p.blacklist()).owners.blocklist, ['h1']);
  });

  it("reads the setting from the RM's /conf (JSON and XML answers; 404 = unset); a configured value wins; an unreadable /conf warns, naming the key", async () => {
    assert.equal(parseConfAnswer(JSON.stringify({ property: { key: INCLUDE_PORT_KEY, value: 'true', isFinal: false, resource: 'yarn-site.xml' } }), INCLUDE_PORT_KEY), 'true');
    assert.equal(parseConfAnswer(`<?xml version="1.0"?><configuration><property><name>${INCLUDE_PORT_KEY}</name><value>false</value><final>false</final><source>yarn-default.xml</source></property></configuration>`, INCLUDE_PORT_KEY), 'false');
    assert.equal(parseConfAnswer(JSON.stringify({ properties: [{ key: 'a', value: 'x' }, { key: INCLUDE_PORT_KEY, value: 'true' }] }), INCLUDE_PORT_KEY), 'true');

    let answer: { status: number; body: string } = { status: 200, body: '' };
    const server = http.createServer((req, res) => {
      assert.equal(req.url, `/conf?name=${INCLUDE_PORT_KEY}`);
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const client = new ResourceManagerClient({ addresses: `127.0.0.1:${(server.address() as AddressInfo).port}`, timeoutMs: 2000 });
      answer = { status: 200, body: JSON.stringify({ property: { key: INCLUDE_PORT_KEY, value: 'true' } }) };
      assert.deepEqual((await detectNodeNaming(client, 'auto')).naming, 'host-port');
      answer = { status: 404, body: `Property ${INCLUDE_PORT_KEY} not found` };
      assert.deepEqual((await detectNodeNaming(client, 'auto')).naming, 'host');
      assert.deepEqual((await detectNodeNaming(client, 'true')).naming, 'host-port');
      answer = { status: 403, body: 'User anonymous is unauthorized to access this page.' };
      const shared = { confValue: (k: string) => client.confValue(k), nodes: async () => [node('h1:1'), node('h1:2')] } as unknown as ResourceManagerReader;
      const d = await detectNodeNaming(shared, 'auto');
      assert.equal(d.naming, 'host');
      assert.match(d.warning ?? '', /403.*1 host\(s\) run several NodeManagers \(h1\).*set cluster\.resource-blocklist\.yarn\.include-port-in-node-name/);
    } finally {
      server.close();
    }
  });

  it('the sidecar on such an RM: a block reaches the proxy as the NodeIds of its host (before: as the host, which YARN matches with nothing); a restart removes nothing', async () => {
    const cluster = new SimCluster({ nodes: 3, containers: 0 });
    const yarn = inProcessYarn(cluster);
    const rm: ResourceManagerReader = Object.assign(Object.create(yarn.rm) as ResourceManagerReader, { confValue: async (k: string) => (k === INCLUDE_PORT_KEY ? 'true' : undefined) });
    const store = new FlakyStore();
    const host = cluster.nodes[0].host;
    await store.put(nodeItem(host, { start: Date.now() - 1000 }));
    const config = loadConfig({ env: {}, dynamic: { 'cluster.resource-blocklist.max-blocked-fraction': '1' } });
    const start = async () => {
      const h = await createSync({ config, store, clock: new FakeClock(Date.now()), logger: silentLogger, env: {}, yarn: { rm, proxy: yarn.proxy } });
      await h.start();
      for (let i = 0; i < 100 && !h.synced(); i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      return h;
    };
    try {
      const first = await start();
      assert.deepEqual(cluster.clientBlacklistView(), [cluster.nodes[0].nodeId]);
      assert.match(cluster.nodes[0].nodeId, /:\d+$/);
      const shown = sidecarStatus(first.view(), Date.now()).blacklist;
      assert.deepEqual([shown.entries, shown.entriesWhy], ['host:port', `the RM's ${INCLUDE_PORT_KEY} is true`], '/status says how entries name nodes, and why');
      await first.stop();
      cluster.allocate(); // the AM's next heartbeat: the scheduler takes the entries
      assert.deepEqual(cluster.schedulerBlacklistView(), [cluster.nodes[0].nodeId]);
      // The scheduler's own view of the attempt names NodeIds too: a restarted sidecar must not
      // take them for stale hosts and remove what it pushed.
      const removals = cluster.counters.blacklistRemovals;
      const second = await start();
      assert.deepEqual(cluster.clientBlacklistView(), [cluster.nodes[0].nodeId]);
      assert.equal(cluster.counters.blacklistRemovals, removals, 'no removal pushed at the restart');
      await second.stop();
    } finally {
      await store.close();
    }
  });
});
