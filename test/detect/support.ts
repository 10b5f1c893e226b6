/**
 * What the detector's end-to-end tests start: a sidecar on an SQLite file beside a simulator, its
 * detector enforcing, its passes driven by the test (`detector.pass()`; the timer only makes the
 * first).
 */
import { silentLogger } from '../../src/core/logger';
import { AuditSink } from '../../src/model/audit';
import { sidecarConfigForSimulator } from '../../src/quickstart/local-cluster';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { RunningSimulator } from '../../src/sim/server';
import { pollUntil } from '../support/wait';

/** Resolves once the sidecar has synced and its detector's first pass is done. */
export async function enforcingSidecar(sim: RunningSimulator, dbFile: string, audit?: AuditSink): Promise<Sidecar> {
  const config = sidecarConfigForSimulator(sim.url, dbFile, {
    'rest.port': '0',
    'cluster.resource-blocklist.poll-interval': '100 ms',
    'cluster.resource-blocklist.detector.mode': 'enforce',
    'cluster.resource-blocklist.detector.flink.rest-address': sim.url,
    'cluster.resource-blocklist.detector.poll-interval': '1 h',
  });
  const s = await startSidecar({ config, logger: silentLogger, ...(audit ? { audit } : {}) });
  await pollUntil('first sync', () => s.sync.synced(), 10_000, 20);
  await s.detector!.pass(); // the pass start() began (a second call shares it)
  return s;
}
