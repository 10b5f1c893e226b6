/**
 * Opens the store the configuration names (`cluster.resource-blocklist.store.type`). The sidecar
 * and the CLI call this; nothing else chooses an implementation.
 */
import { ConfigValues } from '../config/keys';
import { Logger } from '../core/logger';
import { BlocklistStore } from './store';
import { SqliteStore } from './sqlite-store';

export async function openStore(values: ConfigValues, logger: Logger): Promise<BlocklistStore> {
  const type = values['cluster.resource-blocklist.store.type'];
  let store: BlocklistStore;
  if (type === 'zookeeper') {
    // Loaded only in ZooKeeper mode: the embedded default does not carry the ZooKeeper client.
    const { ZookeeperStore } = await import('./zookeeper-store.js');
    store = await ZookeeperStore.open({
      quorum: values['cluster.resource-blocklist.store.zookeeper.quorum'],
      root: values['cluster.resource-blocklist.store.zookeeper.root'],
      sessionTimeoutMs: values['cluster.resource-blocklist.store.zookeeper.session-timeout'],
      operationTimeoutMs: values['cluster.resource-blocklist.store.zookeeper.operation-timeout'],
      connectTimeoutMs: values['cluster.resource-blocklist.store.zookeeper.connect-timeout'],
      auth: values['cluster.resource-blocklist.store.zookeeper.auth'] || undefined,
      logger,
    });
  } else {
    store = new SqliteStore(values['cluster.resource-blocklist.store.sqlite.path'], { logger });
  }
  logger.info('blocklist store opened', { store: store.description });
  return store;
}
