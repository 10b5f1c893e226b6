/**
 * 4. Evacuation: 100 nodes × 10 task-manager containers blocked with
 * MARK_BLOCKED_AND_EVACUATE_TASKS and evacuationTimeout 0, in one batch POST /blocklist (the batch form of FLIP-224).
 *  - Time from the POST until every replacement runs in the simulator (the app is back at its
 *    target and no container is left on a blocked node). Limit: one simulated AM heartbeat (the
 *    scheduler places replacements only on an allocate) + one loopback round trip + one durable
 *    commit. No hard goal: context for the release figure.
 *  - Release calls the proxy received. Goal: one batched call per reconcile pass, i.e. at most
 *    ⌈containers / release-batch-size⌉ calls, never one per container.
 */
import { EVACUATE } from '../src/model/item';
import { startBenchCluster } from './lib/harness';
import { Limits } from './lib/limits';
import { SectionResult, emptyResult } from './lib/report';
import { now, until } from './lib/stats';

export interface EvacuationSizes {
  /** Nodes blocked at once. */
  nodes: number;
  /** Task managers on each blocked node. */
  perNode: number;
  /** Simulated AM heartbeat (allocation round), ms. */
  tickMs: number;
  releaseBatchSize: number;
}

const SECTION = 'evacuation';

export async function benchEvacuation(limits: Limits, s: EvacuationSizes): Promise<SectionResult> {
  const out = emptyResult();
  // 4 × the blocked nodes, each with perNode task managers and room for as many again, so the
  // replacements fit on the rest and the safety cap (0.33 of RUNNING nodes) allows every block.
  const total = s.nodes * 4;
  const c = await startBenchCluster({
    sim: { nodes: total, containers: total * s.perNode, slotsPerNode: s.perNode * 2, tickMs: s.tickMs },
    define: {
      'cluster.resource-blocklist.evacuation.release-batch-size': String(s.releaseBatchSize),
      'cluster.resource-blocklist.poll-interval': '1 s',
    },
  });
  try {
    await until(() => c.sidecar.sync.synced(), 10_000, 'the first sync');
    const cluster = c.sim.cluster;
    const amHost = cluster.currentAttempt.amHost;
    const tmsOn = (host: string): number => [...(cluster.node(host)?.containers ?? [])].filter((id) => !cluster.container(id)?.isAm).length;
    const victims = cluster.nodes.filter((n) => n.host !== amHost && tmsOn(n.host) === s.perNode).slice(0, s.nodes).map((n) => n.host);
    if (victims.length < s.nodes) throw new Error(`evacuation bench: only ${victims.length} nodes hold ${s.perNode} task managers`);
    const toMove = victims.length * s.perNode;
    cluster.resetCounters();
    const body = victims.map((h) => ({ id: h, action: EVACUATE, cause: 'bench evacuation', evacuationTimeout: 0 }));
    const t0 = now();
    const res = await fetch(`${c.sidecar.url}/blocklist`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`POST /blocklist: ${res.status} ${text.slice(0, 300)}`);
    await until(() => cluster.taskManagerCount === cluster.target && cluster.pending === 0 && victims.every((h) => tmsOn(h) === 0), 60_000, 'every replacement to run');
    const elapsed = now() - t0;
    const calls = cluster.counters.releaseCalls;
    const released = cluster.counters.releasedContainerIds.length;
    const minCalls = Math.ceil(toMove / s.releaseBatchSize);
    const limit = s.tickMs + limits.write.p50;
    out.rows.push({
      section: SECTION,
      figure: `${s.nodes} nodes × ${s.perNode} containers at timeout 0: block → all replacements running`,
      value: elapsed,
      unit: 'ms',
      limit,
      limitUnit: 'ms',
      limitWhat: `one ${s.tickMs} ms AM heartbeat + RTT + commit p50`,
      ratio: elapsed / limit,
      goal: '–',
      met: undefined,
    });
    out.rows.push({
      section: SECTION,
      figure: `release calls for ${toMove} containers (${released} released, batch size ${s.releaseBatchSize})`,
      value: calls,
      unit: 'calls',
      limit: minCalls,
      limitUnit: 'calls',
      limitWhat: '⌈containers / batch size⌉',
      ratio: calls / minCalls,
      goal: '1 call per pass (≤ 1×), not 1 per container',
      met: calls <= minCalls && released === toMove,
    });
    out.notes.push(`Evacuation: simulator with ${total} nodes, ${total * s.perNode} task managers, ${s.perNode * 2} slots per node, allocation every ${s.tickMs} ms; ${c.tap.pushes.length} blacklist push(es) received.`);
  } finally {
    await c.close();
  }
  return out;
}
