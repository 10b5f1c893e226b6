/**
 * Series of the process rather than of one sidecar: prom-client's default process and Node.js
 * metrics (CPU, RSS, heap, event-loop lag, GC, handles) and `blocklist_build_info`. They live on a
 * registry of their own, made once per process on first use and appended to every sidecar's
 * /metrics: a test process hosting many sidecars then runs one event-loop monitor and one GC
 * observer, not one per sidecar.
 */
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { packageVersion } from '../core/package-info';

export const BUILD_INFO = 'blocklist_build_info';

/**
 * The event-loop lag histogram samples at this period (prom-client's default is 10 ms: 100
 * wake-ups a second in an idle AM container; 100 ms costs a tenth of that and still sees a stall).
 */
const EVENT_LOOP_PRECISION_MS = 100;

const UNCONVENTIONAL_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

let shared: Registry | undefined;

/** The process's registry (made on the first call). */
export function processRegistry(): Registry {
  if (shared) return shared;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_PRECISION_MS });
  // Gauges named like counters (promtool: non-counter metrics should not have "_total"); each is
  // the sum of the same name without the suffix, by type, which stays.
  for (const name of UNCONVENTIONAL_DEFAULTS) registry.removeSingleMetric(name);
  const info = new Gauge({
    name: BUILD_INFO,
    help: 'Always 1: the version of the sidecar (package.json) and of the Node.js runtime it runs on, as labels.',
    labelNames: ['version', 'nodejs'] as const,
    registers: [registry],
  });
  info.set({ version: packageVersion(), nodejs: process.versions.node }, 1);
  shared = registry;
  return registry;
}
