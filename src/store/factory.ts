/**
 * Opens the store the configuration names. (The ZooKeeper branch is filled in by the ZooKeeper
 * store work; until then choosing it fails with a clear message.)
 */
import { ConfigValues } from '../config/keys';
import { Logger } from '../log/logger';
import { SqliteStore } from './sqlite-store';
import { BlocklistStore, StoreUnavailableError } from './store';

export async function openStore(values: ConfigValues, logger: Logger): Promise<BlocklistStore> {
  switch (values['cluster.resource-blocklist.store.type']) {
    case 'sqlite': {
      const store = new SqliteStore(values['cluster.resource-blocklist.store.sqlite.path']);
      logger.info(`store: ${store.description}`);
      return store;
    }
    case 'zookeeper':
      throw new StoreUnavailableError('the zookeeper store is not available in this build');
  }
}
