/**
 * The event loop while the sidecar reads a big node list (issue 15: parse the RM's big answers
 * without holding the event loop): the same RM client reads the same list, with the worker thread
 * fetching and parsing it (the sidecar's way), and with everything on the event loop
 * (`offThread: false`: axios receives the body, JSON.parse and validation run inline — what the
 * client did before the worker). Reads alternate so both see the same machine; each window runs
 * from the call to 5 ms after its answer, so the whole read counts (the request, the body, the
 * parse, turning rows back into nodes). The delay is a 1 ms timer's lateness, sampled only inside
 * the windows (lib/loop-delay.ts says why not monitorEventLoopDelay).
 */
import { ResourceManagerClient } from '../src/yarn/rm-client';
import { stopParsingWorker } from '../src/yarn/off-thread';
import { WindowedLoopDelay } from './lib/loop-delay';
import { Row } from './lib/report';
import { startSimChild } from './lib/sim-child';
import { sleep } from './lib/stats';

export interface LoopDelayResult {
  maxMs: number;
  p99Ms: number;
  inlineMaxMs: number;
  inlineP99Ms: number;
  bytes: number;
  samples: number;
  inlineSamples: number;
}

export async function measureLoopDelay(nodes: number, reads: number): Promise<LoopDelayResult> {
  const sim = await startSimChild({ nodes, containers: 10, tickMs: 0 });
  try {
    const worker = new ResourceManagerClient({ addresses: sim.url });
    const inline = new ResourceManagerClient({ addresses: sim.url, offThread: false });
    // Start-up paid once per process (the worker thread; the first connection of each client).
    await worker.nodes();
    await inline.nodes();
    const w = new WindowedLoopDelay();
    const i = new WindowedLoopDelay();
    const bytes = Buffer.byteLength(await (await fetch(`${sim.url}/ws/v1/cluster/nodes`)).text());
    const read = async (client: ResourceManagerClient, d: WindowedLoopDelay): Promise<void> => {
      d.open();
      const got = await client.nodes();
      await sleep(5);
      d.close();
      if (got.length !== nodes) throw new Error(`read ${got.length} nodes, expected ${nodes}`);
      await sleep(20);
    };
    for (let k = 0; k < reads; k++) {
      await read(inline, i);
      await read(worker, w);
    }
    return { maxMs: w.maxMs, p99Ms: w.p99Ms, inlineMaxMs: i.maxMs, inlineP99Ms: i.p99Ms, bytes, samples: w.samples, inlineSamples: i.samples };
  } finally {
    await stopParsingWorker();
    await sim.close();
  }
}

/**
 * The two rows of the RM footprint section. 15 reads of each kind: the worker's answer is turned
 * back into nodes on the loop once per read, and with 5 reads those few samples sat at the p99's
 * edge, and one hiccup in one window could move the figure (0.22-0.23× in two runs, 0.58× in one).
 */
export async function loopDelayRows(nodes: number, reads = 15): Promise<Row[]> {
  const loop = await measureLoopDelay(nodes, reads);
  const what = `${nodes.toLocaleString('en')} nodes (${(loop.bytes / 1e6).toFixed(1)} MB; fetched and parsed in a worker)`;
  const baseline = 'the same reads by the same client on the event loop (axios + JSON.parse + validation), alternating';
  return [
    {
      section: 'rm-footprint',
      figure: `event-loop delay p99 during ${reads} reads of ${what}`,
      value: loop.p99Ms,
      unit: 'ms',
      limit: loop.inlineP99Ms,
      limitUnit: 'ms',
      limitWhat: baseline,
      ratio: loop.p99Ms / loop.inlineP99Ms,
      goal: '≤ 0.5×',
      met: loop.p99Ms <= 0.5 * loop.inlineP99Ms,
      note: `a 1 ms timer's lateness inside each read's window (${loop.samples} and ${loop.inlineSamples} samples)`,
    },
    {
      section: 'rm-footprint',
      figure: `event-loop delay max during ${reads} reads of ${what}`,
      value: loop.maxMs,
      unit: 'ms',
      limit: loop.inlineMaxMs,
      limitUnit: 'ms',
      limitWhat: baseline,
      ratio: loop.maxMs / loop.inlineMaxMs,
      goal: 'context (a loaded machine deschedules the whole process: the max then measures the machine)',
      met: undefined,
    },
  ];
}
