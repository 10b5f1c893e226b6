/**
 * Builds the detector (src/detect) from the configuration: its sources, its settings, and the path
 * its automatic blocks take into the store — the same as a REST block (the store's add with merge
 * rules, an audit record, a sync kick), with principal `detector`.
 */
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { LoadedConfig } from '../config/config';
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { AuditSink } from '../model/audit';
import { BlocklistStore } from '../store/store';
import { Detector, DetectorSettings } from '../detect/detector';
import { createDetectorMetrics, registerDetectorCapGauges } from '../detect/metrics';
import { DetectorSource } from '../detect/source';
import { FlinkRestSource } from '../detect/sources/flink-rest';
import { YarnCompletedContainersSource } from '../detect/sources/yarn-containers';
import { NodeHealthSource } from '../detect/sources/node-health';
import { BlocklistService } from '../api/blocklist-service';
import { ConfigValues } from '../config/keys';
import { createYarnHttpsAgent } from '../security/tls';
import { SyncHandle } from './sync-factory';

export function detectorSettingsFromConfig(v: ConfigValues): DetectorSettings {
  return {
    mode: v['cluster.resource-blocklist.detector.mode'],
    failuresPerHost: v['cluster.resource-blocklist.detector.failures-per-host'],
    windowMs: v['cluster.resource-blocklist.detector.window'],
    jobFaultHosts: v['cluster.resource-blocklist.detector.job-fault-hosts'],
    blockDurationMs: v['cluster.resource-blocklist.detector.block-duration'],
    maxBlockDurationMs: Math.max(v['cluster.resource-blocklist.detector.max-block-duration'], v['cluster.resource-blocklist.detector.block-duration']),
    maxBlockedFraction: v['cluster.resource-blocklist.detector.max-blocked-fraction'],
    action: v['cluster.resource-blocklist.detector.action'],
    pollIntervalMs: v['cluster.resource-blocklist.detector.poll-interval'],
    evacuateDecommissioning: v['cluster.resource-blocklist.detector.evacuate-decommissioning'],
  };
}

export interface DetectorFactoryDeps {
  config: LoadedConfig;
  store: BlocklistStore;
  sync: SyncHandle;
  clock: Clock;
  logger: Logger;
  audit: AuditSink;
  /** Extra sources (tests, plugins), polled after the built-in ones. */
  extraSources?: DetectorSource[];
}

/** The detector, or undefined when `detector.mode` is off. */
export function createDetector(deps: DetectorFactoryDeps): Detector | undefined {
  const v = deps.config.values;
  const settings = detectorSettingsFromConfig(v);
  if (settings.mode === 'off') return undefined;
  const yarn = deps.sync.yarn;
  if (!yarn) {
    deps.logger.warn('cluster.resource-blocklist.detector.mode is set but YARN is not configured (or the blocklist is disabled): the detector does not run');
    return undefined;
  }
  const sources: DetectorSource[] = [new YarnCompletedContainersSource(yarn.proxy), new NodeHealthSource(yarn.rm)];
  const flinkAddress = v['cluster.resource-blocklist.detector.flink.rest-address'].trim();
  if (flinkAddress) {
    const ca = v['cluster.resource-blocklist.yarn.ssl.ca-file'];
    sources.push(
      new FlinkRestSource({
        address: flinkAddress,
        timeoutMs: v['cluster.resource-blocklist.yarn.request-timeout'],
        maxAnswerBytes: v['cluster.resource-blocklist.detector.flink.max-answer-size'],
        clock: deps.clock,
        onFailure: (failure) => deps.sync.metrics.peerCallFailures.inc({ peer: 'flink', failure }),
        ...(ca ? { httpsAgent: createYarnHttpsAgent(ca) } : {}),
      }),
    );
  } else {
    deps.logger.info('cluster.resource-blocklist.detector.flink.rest-address is empty: the detector reads YARN only (no Flink exception history)');
  }
  sources.push(...(deps.extraSources ?? []));
  const { store, audit, sync } = deps;
  // The path a REST block takes: validation already done (the spec), merge rules, audit, a sync kick.
  const service = new BlocklistService({ store, sync, clock: deps.clock, audit, enabled: true });
  const detector = new Detector({
    settings,
    clock: deps.clock,
    logger: deps.logger,
    metrics: createDetectorMetrics(sync.metrics.registry),
    store,
    proxy: yarn.proxy,
    nodes: () => yarn.rm.nodes(),
    clusterMetrics: () => yarn.rm.clusterMetrics(),
    sources,
    applicationId: () => sync.view().applicationId,
    member: `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    async addItem(spec, principal) {
      const a = await service.put(spec, { name: principal, from: 'detector' }, false);
      if (a.status === 201) return { outcome: 'created' };
      if (a.status === 202) return { outcome: 'merged' };
      const errors = (a.body as { errors?: unknown }).errors;
      return { outcome: 'conflict', reason: Array.isArray(errors) ? errors.join('; ') : `answered ${a.status}` };
    },
  });
  registerDetectorCapGauges(sync.metrics.registry, () => detector.view().report?.cap);
  return detector;
}
