/**
 * Tells where this sidecar listens, once it does: `rest.address-file` (any store), and with the
 * ZooKeeper store the ephemeral znode <root>/sidecars/<attempt> (sidecar-registry.ts). It also
 * answers GET /discovery/prometheus: every published sidecar of the ZooKeeper store, or this one
 * alone with any other store (nothing is shared there to find the others in).
 */
import { AddressInfo } from 'node:net';
import { ConfigValues } from '../config/keys';
import { Logger } from '../core/logger';
import type { ZkSession } from '../store/zookeeper/session';
import type { Publication, SidecarRecord, SidecarRegistry } from '../store/zookeeper/sidecar-registry';
import type { ApplicationStates, DiscoveryPort } from '../api/routes/discovery';
import { ResourceManagerReader, YarnCallError } from '../yarn/types';
import { advertisedRecord, attemptOfContainer, removeAddressFile, writeAddressFile } from './address';

export interface PublishedAddressOptions {
  values: ConfigValues;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  version: string;
  /** The sidecar's ZooKeeper session (ZooKeeper store only). */
  zookeeper?: ZkSession;
}

export class PublishedAddress implements DiscoveryPort {
  readonly source: string;
  private self: SidecarRecord | undefined;
  private registry: SidecarRegistry | undefined;
  private publication: Publication | undefined;
  private file: string | undefined;

  constructor(private readonly opts: PublishedAddressOptions) {
    this.source = opts.zookeeper ? `zookeeper ${opts.values['cluster.resource-blocklist.store.zookeeper.quorum']} (${opts.values['cluster.resource-blocklist.store.zookeeper.root']}/sidecars)` : 'this sidecar (no shared store)';
  }

  /** This sidecar's record, once it listens and knows its application. */
  get record(): SidecarRecord | undefined {
    return this.self;
  }

  /** The ephemeral znode, while one is kept (tests). */
  get znode(): Publication | undefined {
    return this.publication;
  }

  async sidecars(): Promise<readonly SidecarRecord[]> {
    if (this.registry) return this.registry.list();
    return this.self ? [this.self] : [];
  }

  /** The attempts' persistent registrations (ZooKeeper store), a crashed sidecar's included; undefined without a registry. */
  async registered(): Promise<readonly SidecarRecord[] | undefined> {
    return this.registry?.registered();
  }

  async forget(record: SidecarRecord): Promise<void> {
    await this.registry?.forget(record);
  }

  /** Called once the API listens; `application`/`attempt` as the sidecar knows them by then. */
  async start(bound: AddressInfo, tls: boolean, started: number, known: { applicationId?: string; appAttemptId?: string }): Promise<void> {
    const v = this.opts.values;
    const application = v['yarn.application.id'].trim() || known.applicationId;
    if (this.opts.zookeeper) this.registry = await this.openRegistry(this.opts.zookeeper);
    if (!application) {
      this.opts.logger.info('sidecar address: the application is not known (yarn.application.id, CONTAINER_ID, the proxy): nothing published');
      return;
    }
    const attempt = attemptOfContainer(this.opts.env, application) ?? known.appAttemptId;
    this.self = advertisedRecord({ bound, tls, restAddress: v['rest.address'], env: this.opts.env, version: this.opts.version, application, ...(attempt ? { attempt } : {}), started });
    const file = v['rest.address-file'].trim();
    if (file) {
      try {
        writeAddressFile(file, this.self);
        this.file = file;
        this.opts.logger.info(`sidecar address written to ${file}: ${this.self.url}`);
      } catch (e) {
        // The file is a convenience (the address is in the log too): not a reason to stop.
        this.opts.logger.warn(`sidecar address: cannot write rest.address-file ${file}: ${(e as Error).message}`);
      }
    }
    if (this.registry && v['cluster.resource-blocklist.store.zookeeper.publish-address']) this.publication = this.registry.publish(this.self);
  }

  async stop(): Promise<void> {
    await this.publication?.stop();
    this.publication = undefined;
    if (this.file) removeAddressFile(this.file);
    this.file = undefined;
  }

  private async openRegistry(session: ZkSession): Promise<SidecarRegistry> {
    const v = this.opts.values;
    // Loaded only with the ZooKeeper store, as the store's own modules are.
    const [{ SidecarRegistry }, { ZkLayout, parseConnectString }] = await Promise.all([import('../store/zookeeper/sidecar-registry.js'), import('../store/zookeeper/paths.js')]);
    const basePath = new ZkLayout(parseConnectString(v['cluster.resource-blocklist.store.zookeeper.quorum']).chroot, v['cluster.resource-blocklist.store.zookeeper.root']).base;
    return new SidecarRegistry({ session, basePath, operationTimeoutMs: v['cluster.resource-blocklist.store.zookeeper.operation-timeout'], logger: this.opts.logger });
  }
}

/**
 * An application's state and current attempt as the RM reports them. The RM's app report names no
 * attempt (AppInfo has no such field): the current one is its newest in the attempts list.
 */
export function applicationStates(rm: ResourceManagerReader): ApplicationStates {
  const attemptNo = (id: string): number => Number(/_(\d+)$/.exec(id)?.[1] ?? 0);
  return {
    application: async (id) => {
      try {
        const app = await rm.application(id);
        if (app.state !== 'RUNNING' || app.currentAppAttemptId) return app;
        const newest = (await rm.attempts(id)).map((a) => a.appAttemptId).sort((a, b) => attemptNo(a) - attemptNo(b)).at(-1);
        return newest ? { ...app, currentAppAttemptId: newest } : app;
      } catch (e) {
        if (e instanceof YarnCallError && e.status === 404) return undefined;
        throw e;
      }
    },
  };
}
