/**
 * A real YARN whose RM runs with yarn.scheduler.include-port-in-node-name=true (issue #30): the
 * CapacityScheduler then names each node `host:port` (SchedulerNode#getNodeName) and skips a node
 * for an attempt only when that name (or its rack) is on the attempt's blacklist
 * (SchedulerAppUtils#isPlaceBlacklisted). Its own cluster, started and ended by this suite (the
 * shared one runs YARN's default naming). What the scheduler matches is read inside the RM through
 * the launcher's control endpoint, and where the AM's replacement containers land shows it.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LogFields, Logger } from '../../src/core/logger';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { AppState, HADOOP, RealYarn, appState, control, mainSidecarKeys, placement, requireRealYarn, startRealYarn, waitForApp } from '../support/real-yarn';
import { TestSidecar, http, startTestSidecar, tempDir } from '../support/sidecar';

const INCLUDE_PORT = 'yarn.scheduler.include-port-in-node-name';
const NAMING_KEY = 'cluster.resource-blocklist.yarn.include-port-in-node-name';

/** A logger that keeps every line, to read what the sidecar said at start. */
function recordingLogger(lines: string[]): Logger {
  const keep = (message: string, _fields?: LogFields): void => void lines.push(message);
  const logger: Logger = { error: keep, warn: keep, info: keep, debug: keep, log: (_level, m) => keep(m), child: () => logger };
  return logger;
}

describe(`real YARN with ${INCLUDE_PORT}=true: a block reaches the scheduler as what it matches`, function () {
  this.timeout(90_000);
  let y: RealYarn;
  let stop: (() => Promise<void>) | undefined;
  let secretCopy: string;
  let checksFrom: number | undefined;
  /** Each host's NodeId, as the RM's node list names it. */
  let idOf: Map<string, string>;

  before(async function () {
    this.timeout(200_000);
    requireRealYarn(this, HADOOP['3.5']);
    const cluster = await startRealYarn(HADOOP['3.5'], { [INCLUDE_PORT]: 'true' });
    stop = cluster.stop;
    y = cluster.ready;
    const main = await appState(y, 'main');
    secretCopy = path.join(tempDir('blocklist-real-node-names-'), 'amrm-proxy.secret');
    fs.copyFileSync(main.proxy!.secretFile, secretCopy);
    idOf = new Map((await new ResourceManagerClient({ addresses: y.rmWebapp }).nodes()).map((n) => [n.host, n.id]));
    console.log(`      (${INCLUDE_PORT}=true: RM, 3 NodeManagers and 4 AMs up in ${y.startupMs} ms)`);
    checksFrom = performance.now();
  });

  after(async () => {
    if (checksFrom !== undefined) console.log(`      (its checks took ${(performance.now() - checksFrom).toFixed(0)} ms)`);
    await stop?.();
  });

  const sidecarFor = async (main: AppState, define: Record<string, string>, lines: string[] = []): Promise<TestSidecar> =>
    startTestSidecar({ dir: tempDir('blocklist-real-node-names-'), define: { ...mainSidecarKeys(y, main.proxy!.address, secretCopy), ...define }, logger: recordingLogger(lines) });

  const block = async (s: TestSidecar, host: string): Promise<void> => {
    const r = await http(s.url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'include-port-in-node-name test' });
    assert.equal(r.status, 201, r.text);
  };
  const unblock = async (s: TestSidecar, host: string): Promise<void> => assert.equal((await http(s.url, 'DELETE', `/blocklist/nodes/${host}`)).status, 200);
  const sorted = (a: readonly string[]): string[] => [...a].sort();
  const sameList = (a: readonly string[], b: readonly string[]): boolean => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

  /** Kills each of these workers (exit 137); the AM asks for a replacement of each. */
  const killWorkers = async (ids: readonly string[], on: AppState): Promise<void> => {
    for (const id of ids) {
      const host = on.workers.find((w) => w.containerId === id)!.host;
      const k = await control<{ killed: boolean }>(y, 'POST', `/apps/main/kill-worker?host=${host}&container=${id}`);
      assert.ok(k.killed, `${id} on ${host} killed`);
    }
  };
  const replaced = (killed: readonly string[]) => (s: AppState): boolean => s.liveWorkers === 3 && s.workers.every((w) => !killed.includes(w.containerId));

  it("the sidecar reads the key from the RM's /conf, pushes a node block as the node's NodeId: the scheduler skips exactly the blocked nodes, replacements land elsewhere, an unblock lifts them", async () => {
    const main = await waitForApp(y, 'main', 'three workers', (s) => s.liveWorkers === 3);
    const lines: string[] = [];
    const sidecar = await sidecarFor(main, {}, lines);
    try {
      assert.ok(lines.some((l) => l.includes("host:port (what the scheduler matches)") && l.includes(`the RM's ${INCLUDE_PORT} is true`)), lines.join('\n'));
      // The two hosts with the most workers: each of their workers gets a replacement, which a
      // scheduler that ignored the blacklist would put there again one time in three.
      const count = (h: string): number => main.workers.filter((w) => w.host === h).length;
      const blocked = [...y.nodes].sort((a, b) => count(b) - count(a)).slice(0, 2);
      const free = y.nodes.find((h) => !blocked.includes(h))!;
      for (const h of blocked) await block(sidecar, h);
      const want = [y.amOwnHost, ...blocked.map((h) => idOf.get(h)!)];
      await waitForApp(y, 'main', `the NodeIds ${want.join(', ')} on the scheduler's blacklist`, (s) => sameList(s.schedulerBlacklist, want));
      for (const n of await placement(y, 'main')) {
        assert.equal(n.nodeName, n.nodeId, 'the scheduler names the node host:port');
        assert.equal(n.skipped, blocked.some((h) => idOf.get(h) === n.nodeId), `${n.nodeId} skipped only when blocked`);
      }
      for (const h of blocked) {
        const item = (await http(sidecar.url, 'GET', `/blocklist/nodes/${h}`)).body as { sync?: { state: string } };
        assert.equal(item.sync?.state, 'applied', `${h}: read back as the host, so applied`);
      }
      const victims = main.workers.filter((w) => blocked.includes(w.host)).map((w) => w.containerId);
      assert.ok(victims.length > 0, 'workers on the blocked nodes');
      await killWorkers(victims, main);
      const after = await waitForApp(y, 'main', `${victims.length} replacement(s)`, replaced(victims), 60_000);
      assert.deepEqual(after.workers.filter((w) => !main.workers.some((o) => o.containerId === w.containerId)).map((w) => w.host), victims.map(() => free), `every replacement on ${free}`);
      for (const h of blocked) await unblock(sidecar, h);
      await waitForApp(y, 'main', "the NodeIds off the scheduler's blacklist", (s) => sameList(s.schedulerBlacklist, [y.amOwnHost]));
      assert.ok((await placement(y, 'main')).every((n) => !n.skipped), 'no node skipped');
    } finally {
      await sidecar.close();
    }
  });

  it(`with ${NAMING_KEY}=false (the detection overridden) the host names reach the scheduler and match nothing: a replacement still lands on a blocked node`, async () => {
    const main = await waitForApp(y, 'main', 'three workers', (s) => s.liveWorkers === 3);
    // Every node blocked: wherever the replacement lands, it lands on a blocked node.
    const sidecar = await sidecarFor(main, { [NAMING_KEY]: 'false', 'cluster.resource-blocklist.max-blocked-fraction': '1' });
    try {
      for (const h of y.nodes) await block(sidecar, h);
      await waitForApp(y, 'main', "the bare host names on the scheduler's blacklist", (s) => sameList(s.schedulerBlacklist, [y.amOwnHost, ...y.nodes]));
      assert.ok((await placement(y, 'main')).every((n) => !n.skipped && n.nodeName === n.nodeId), 'no node is skipped: their names are host:port');
      const victim = main.workers[0].containerId;
      await killWorkers([victim], main);
      const after = await waitForApp(y, 'main', 'the replacement', replaced([victim]), 60_000);
      const placed = after.workers.find((w) => !main.workers.some((o) => o.containerId === w.containerId));
      assert.ok(placed && y.nodes.includes(placed.host), `placed on a blocked node: ${JSON.stringify(after.workers)}`);
      for (const h of y.nodes) await unblock(sidecar, h);
      await waitForApp(y, 'main', "the host names off the scheduler's blacklist", (s) => sameList(s.schedulerBlacklist, [y.amOwnHost]));
    } finally {
      await sidecar.close();
    }
  });
});
