/**
 * Opens the store the configuration names (`cluster.resource-blocklist.store.type`). The sidecar
 * and the CLI call this; nothing else chooses an implementation.
 */
import { ConfigValues } from '../config/keys';
import { Logger } from '../core/logger';
import type { Clock } from '../core/clock';
import { BlocklistStore } from './store';
import type { ZkSession, ZkSessionOptions } from './zookeeper/session';

/** The store's ZooKeeper settings from the configuration (the store's own and its session's). */
function zookeeperSettings(values: ConfigValues) {
  return {
    quorum: values['cluster.resource-blocklist.store.zookeeper.quorum'],
    root: values['cluster.resource-blocklist.store.zookeeper.root'],
    sessionTimeoutMs: values['cluster.resource-blocklist.store.zookeeper.session-timeout'],
    operationTimeoutMs: values['cluster.resource-blocklist.store.zookeeper.operation-timeout'],
    connectTimeoutMs: values['cluster.resource-blocklist.store.zookeeper.connect-timeout'],
    auth: values['cluster.resource-blocklist.store.zookeeper.auth'] || undefined,
    clockSkewLimitMs: values['cluster.resource-blocklist.store.zookeeper.clock-skew-limit'],
  };
}

/**
 * With the ZooKeeper store: the one session a sidecar holds, which the store, its watch and the
 * cluster-state election all use (one TCP connection per sidecar, not one per user). Undefined for
 * the other stores. The caller owns it and closes it after everything that uses it. `sasl`: a
 * SASL login on every connection (store.zookeeper.sasl.enabled; the mechanism from the security layer).
 */
export async function openZookeeperSession(values: ConfigValues, logger: Logger, sasl?: ZkSessionOptions['sasl']): Promise<ZkSession | undefined> {
  if (values['cluster.resource-blocklist.store.type'] !== 'zookeeper') return undefined;
  // Loaded only in ZooKeeper mode: the embedded default does not carry the ZooKeeper client.
  const [{ ZkSession }, { zookeeperSessionOptions }] = await Promise.all([import('./zookeeper/session.js'), import('./zookeeper/zookeeper-store.js')]);
  const opts = zookeeperSessionOptions(zookeeperSettings(values), logger.child({ component: 'zookeeper' }));
  return new ZkSession(sasl ? { ...opts, sasl } : opts);
}

/**
 * `session`: the sidecar's shared ZooKeeper session (ZooKeeper store only); without it the store
 * opens its own. `local`: the sidecar's clock, which the ZooKeeper store compares with its own
 * time (zookeeper/clock.ts); the system clock when absent.
 */
export async function openStore(values: ConfigValues, logger: Logger, session?: ZkSession, local?: Pick<Clock, 'now' | 'monotonic'>): Promise<BlocklistStore> {
  const type = values['cluster.resource-blocklist.store.type'];
  let store: BlocklistStore;
  if (type === 'zookeeper') {
    const { ZookeeperStore } = await import('./zookeeper/zookeeper-store.js');
    const clocks = local ? { localTime: () => local.now(), ...(local.monotonic ? { monotonic: local.monotonic.bind(local) } : {}) } : {};
    store = await ZookeeperStore.open({ ...zookeeperSettings(values), ...(session ? { session } : {}), ...clocks, logger });
  } else {
    // A long-running sidecar commits on a write thread: the event loop serves requests during the fsync.
    // Loaded only in SQLite mode, as the ZooKeeper client is only in ZooKeeper mode (the AM profile's idle RSS).
    const { SqliteStore } = await import('./sqlite/sqlite-store.js');
    store = new SqliteStore(values['cluster.resource-blocklist.store.sqlite.path'], { logger, writeThread: true });
  }
  logger.info('blocklist store opened', { store: store.description });
  return store;
}
