/**
 * The seam where the sidecar gets its sync engine. Until YARN is configured (or while the engine
 * is not built yet) the sidecar runs API-only with NoSync.
 */
import { NoSync, SyncFacade } from '../sync/facade';
import { LoadedConfig } from '../config/config';
import { BlocklistStore } from '../store/store';
import { Clock } from '../model/clock';
import { Logger } from '../log/logger';

export interface SyncDeps {
  config: LoadedConfig;
  store: BlocklistStore;
  clock: Clock;
  logger: Logger;
}

export interface SyncHandle extends SyncFacade {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function createSync(deps: SyncDeps): Promise<SyncHandle> {
  const noop = new NoSync(deps.config.values['cluster.resource-blocklist.enabled']);
  return Object.assign(noop, { start: async () => {}, stop: async () => {} });
}
