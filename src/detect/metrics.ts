/** The detector's Prometheus metrics, on the sidecar's registry. */
import { Counter, Gauge, Registry } from 'prom-client';

export interface DetectorMetrics {
  /** New incidents, by the source that first reported them. */
  incidents: Counter<'source'>;
  /** Automatic blocks made (enforce) or that would have been made (shadow). */
  blocks: Counter<'mode'>;
  /** Blocks not made: job-fault, cap, operator-unblock. */
  suppressed: Counter<'reason'>;
  /** Observations a watched system dropped before the detector read them. */
  missed: Counter<'source'>;
  /** Source polls that failed. */
  sourceErrors: Counter<'source'>;
  /** 1 while this sidecar runs its job's detector, 0 while another sidecar of the job does (leadership.ts). */
  runner?: Gauge;
}

export function createDetectorMetrics(registry?: Registry): DetectorMetrics {
  const registers = registry ? [registry] : [];
  return {
    incidents: new Counter({ name: 'blocklist_detector_incidents_total', help: 'Incidents (one per host per job restart or container loss) the detector counted, by source', labelNames: ['source'], registers }),
    blocks: new Counter({ name: 'blocklist_detector_blocks_total', help: 'Automatic blocks, by detector mode (enforce = made, shadow = would have been made)', labelNames: ['mode'], registers }),
    suppressed: new Counter({ name: 'blocklist_detector_suppressed_total', help: 'Hosts that reached the threshold but were not blocked, by reason (job-fault, cap, operator-unblock)', labelNames: ['reason'], registers }),
    missed: new Counter({ name: 'blocklist_detector_missed_total', help: 'Observations dropped by a watched system before the detector read them (Flink exception history overflow, proxy ring overflow)', labelNames: ['source'], registers }),
    sourceErrors: new Counter({ name: 'blocklist_detector_source_errors_total', help: 'Detector source polls that failed', labelNames: ['source'], registers }),
    runner: new Gauge({ name: 'blocklist_detector_runner', help: "1 while this sidecar runs its job's detector, 0 while another sidecar of the job holds the detector's lease and this one stands by", registers }),
  };
}

/**
 * The detector's automatic blocks against their own cap (detector.max-blocked-fraction), read at
 * scrape time from its last report: at the cap, a host that reaches the threshold is not blocked.
 */
export function registerDetectorCapGauges(registry: Registry, cap: () => { max: number; inUse: number } | undefined): void {
  const gauge = (name: string, help: string, pick: (c: { max: number; inUse: number }) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const c = cap();
        if (c) this.set(pick(c));
      },
    });
  gauge('blocklist_detector_automatic_blocks', "The detector's automatic blocks in force for this job, as of its last pass.", (c) => c.inUse);
  gauge('blocklist_detector_automatic_blocks_limit', 'Most automatic blocks the detector may hold (detector.max-blocked-fraction of RUNNING nodes), as of its last pass.', (c) => c.max);
}
