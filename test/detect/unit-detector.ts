/**
 * A Detector for unit tests: the real detector over a store and a fake clock, with defaults for
 * every edge a test does not look at (no containers, no sources, the real config's settings in
 * enforce mode). Tests name only what they vary.
 */
import { loadConfig } from '../../src/config/config';
import { Clock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { AddItem, Detector, DetectorDeps } from '../../src/detect/detector';
import { newItem } from '../../src/model/merge';
import { BlocklistStore } from '../../src/store/store';
import { detectorSettingsFromConfig } from '../../src/sidecar/detector-factory';
import { ClusterNode } from '../../src/yarn/types';

export const UNIT_APP = 'application_1652313600000_0001';

/** `n` RUNNING nodes n0…n{n-1} on one rack. */
export function runningNodes(n: number): ClusterNode[] {
  return Array.from({ length: n }, (_, i) => ({ id: `n${i}:8041`, host: `n${i}`, rack: '/r', state: 'RUNNING', healthReport: '', numContainers: 0 }));
}

/** Adds each block to the store as the REST path would (merge rules included); `onAdd` counts. */
export function storeAdder(store: Pick<BlocklistStore, 'add'>, clock: Clock, onAdd?: () => void): AddItem {
  return async (spec, principal) => {
    onAdd?.();
    const o = await store.add({ item: newItem(spec, clock.now(), { by: principal, from: 'detector' }), allowMerge: spec.allowMerge });
    return o.outcome === 'conflict' ? { outcome: 'conflict', reason: o.conflict.message } : { outcome: o.outcome };
  };
}

export interface UnitDetectorOptions extends Partial<Omit<DetectorDeps, 'clock' | 'store' | 'applicationId'>> {
  clock: Clock;
  store: DetectorDeps['store'];
  /** Config keys on top of enforce mode (e.g. shadow mode, evacuate-decommissioning). */
  config?: Record<string, string>;
  /** The cluster's nodes (default: 20 RUNNING). */
  nodeList?: ClusterNode[];
  applicationId?: string;
}

export function unitDetector(o: UnitDetectorOptions): Detector {
  const { clock, store, config, nodeList, applicationId, ...rest } = o;
  const nodes = nodeList ?? runningNodes(20);
  return new Detector({
    settings: detectorSettingsFromConfig(loadConfig({ dynamic: { 'cluster.resource-blocklist.detector.mode': 'enforce', ...config } }).values),
    clock,
    logger: silentLogger,
    store,
    addItem: async () => ({ outcome: 'created' }),
    proxy: { containers: async () => [] },
    nodes: async () => nodes,
    sources: [],
    applicationId: () => applicationId ?? UNIT_APP,
    ...rest,
  });
}
