/**
 * `--app <applicationId>`: the address of that job's sidecar, which listens on a port nobody knows
 * beforehand (`rest.port: 0` in the AM profile), read from where the sidecars publish it: the
 * ephemeral znodes <root>/sidecars/<attempt> of the ZooKeeper store (store/zookeeper/sidecar-registry.ts).
 *
 * Which ZooKeeper: the store the CLI is told of when it is one (--store zookeeper:…,
 * BLOCKLIST_STORE, store: in the CLI config file), else the sidecar's own configuration as the
 * sidecar reads it (BLOCKLIST_CONFIG_FILE or conf/blocklist.yaml, BLOCKLIST_* variables).
 */
import { parseApplicationId } from '../model/ids';
import { silentLogger } from '../core/logger';
import { ConfigError } from '../config/config';
import { resolveConfig } from './config-options';
import { CliError, usage } from './errors';
import { EXIT } from './exit-codes';
import { ConnectionFlags, Target, namedStore, resolveToken } from './settings';

interface Where {
  /** host:port[,…] */
  hosts: string;
  /** chroot + root */
  base: string;
  auth?: string;
  /** For messages. */
  source: string;
}

/** The sidecar of `flags.app` as a server target (with the token the flags name). */
export async function sidecarTarget(flags: ConnectionFlags & { app: string }, env: NodeJS.ProcessEnv = process.env): Promise<Extract<Target, { kind: 'server' }>> {
  const app = flags.app.trim();
  const parsed = parseApplicationId(app);
  if (!parsed.ok) throw usage(`--app: ${parsed.error}`);
  if (flags.server !== undefined) throw usage('give either --server or --app, not both');
  const where = await zookeeperOf(flags, env);
  const [{ ZkSession }, { zookeeperSessionOptions }, { SidecarRegistry, sidecarOf, znodeName }] = await Promise.all([
    import('../store/zookeeper/session.js'),
    import('../store/zookeeper/zookeeper-store.js'),
    import('../store/zookeeper/sidecar-registry.js'),
  ]);
  // Short bounds: an operator at a terminal wants an answer, not a 30 s session wait.
  const session = new ZkSession(zookeeperSessionOptions({ quorum: where.hosts, sessionTimeoutMs: 10_000, operationTimeoutMs: 5_000, connectTimeoutMs: 5_000, ...(where.auth ? { auth: where.auth } : {}) }, silentLogger));
  const registry = new SidecarRegistry({ session, basePath: where.base, operationTimeoutMs: 5_000 });
  let records;
  try {
    records = await registry.list();
  } catch (e) {
    throw new CliError(`cannot read the sidecars' addresses in zookeeper ${where.hosts}${registry.path} (${where.source}): ${(e as Error).message}`, EXIT.UNREACHABLE);
  } finally {
    await session.close();
  }
  const found = sidecarOf(records, app);
  if (!found) {
    const apps = new Set(records.map((r) => r.application)).size;
    throw new CliError(`no sidecar of ${app} is published in zookeeper ${where.hosts}${registry.path} (${where.source}; ${records.length} sidecar(s) of ${apps} application(s) there); is the job running, with the ZooKeeper store?`, EXIT.NOT_FOUND);
  }
  const token = resolveToken(flags, env);
  return { kind: 'server', url: found.url, ...(token ? { token } : {}), source: `--app ${app} (${where.hosts}${registry.path}/${znodeName(found)})` };
}

async function zookeeperOf(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Promise<Where> {
  const store = namedStore(flags, env);
  if (store?.kind === 'zookeeper') return { hosts: store.quorum, base: store.root === '/' ? '' : store.root, ...(store.auth ? { auth: store.auth } : {}), source: store.source };
  let values;
  try {
    values = resolveConfig({}, env).values;
  } catch (e) {
    if (e instanceof ConfigError) throw usage(`--app: the sidecar's configuration does not load: ${e.message}`);
    throw e;
  }
  const quorum = values['cluster.resource-blocklist.store.zookeeper.quorum'].trim();
  if (!quorum) {
    throw usage(
      "--app needs the ZooKeeper the sidecars publish in: --store zookeeper:host:port[,host:port]/root, or the sidecar's cluster.resource-blocklist.store.zookeeper.quorum (BLOCKLIST_CONFIG_FILE, conf/blocklist.yaml or BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_QUORUM)",
    );
  }
  const { ZkLayout, parseConnectString } = await import('../store/zookeeper/paths.js');
  let addr;
  try {
    addr = parseConnectString(quorum);
  } catch (e) {
    throw usage(`--app: ${(e as Error).message}`);
  }
  const auth = values['cluster.resource-blocklist.store.zookeeper.auth'];
  return { hosts: addr.hosts, base: new ZkLayout(addr.chroot, values['cluster.resource-blocklist.store.zookeeper.root']).base, ...(auth ? { auth } : {}), source: "the sidecar's configuration" };
}
