/**
 * One reading of an outside source (the RM's node counts, its node list), published by the elected
 * sidecar in a znode so every other sidecar of the cluster can use it instead of asking the source
 * itself. The znode holds `{"v":1,"by":…,"readAt":…,"value":…}` as JSON, gzip'd when large (a
 * 10,000-node list is ~1 MB of JSON and ~60 KB gzip'd; ZooKeeper refuses a znode over
 * jute.maxbuffer, 1 MB by default, so a reading still larger than MAX_ZNODE_BYTES compressed is
 * not published and the others read the source themselves).
 *
 * Readers keep the last decoded reading and re-read the znode only after its data watch fired, so
 * a follower asking every few seconds costs ZooKeeper one `exists` per change, not a download.
 */
import { gzip as gzipCb, gunzip as gunzipCb } from 'node:zlib';
import { promisify } from 'node:util';
import { Logger, silentLogger } from '../../core/logger';
import { ZK, ZkSession, hasCode } from './session';

const gzip = promisify(gzipCb);
const gunzip = promisify(gunzipCb);

/** Compress above this many bytes of JSON. */
const GZIP_ABOVE = 16 * 1024;
/** Stay well under ZooKeeper's default jute.maxbuffer (1 MB) with the request's own framing. */
export const MAX_ZNODE_BYTES = 900 * 1024;

export interface SharedReading<T> {
  value: T;
  /** Epoch ms when the publisher read the source. */
  readAt: number;
  /** Who published it (the leader's member label). */
  by: string;
}

export interface ZkSharedReadingOptions<T> {
  session: ZkSession;
  /** The znode, e.g. <chroot><root>/cluster-state/metrics; its parent must exist. */
  path: string;
  /** Checks and converts the JSON `value` back; throws on a shape it does not accept. */
  decode: (value: unknown) => T;
  /** The JSON form of a value (default: the value itself). */
  encode?: (value: T) => unknown;
  operationTimeoutMs: number;
  logger?: Logger;
}

export class ZkSharedReading<T> {
  private cached: SharedReading<T> | undefined;
  /** True until a watch is armed on the znode after the last read (or when it fired). */
  private dirty = true;
  /** Counts watch fires: a fire between arming and reading leaves the reading dirty. */
  private fires = 0;
  private readonly log: Logger;
  private tooLargeLogged = false;
  private readonly onSession = (): void => {
    // A new session has no watches: the next latest() reads and re-arms.
    this.dirty = true;
  };

  constructor(private readonly opts: ZkSharedReadingOptions<T>) {
    this.log = opts.logger ?? silentLogger;
    opts.session.on('session', this.onSession);
  }

  get path(): string {
    return this.opts.path;
  }

  /** Publishes a reading (create or overwrite). Returns false when it is too large for a znode. */
  async publish(reading: SharedReading<T>): Promise<boolean> {
    const json = Buffer.from(JSON.stringify({ v: 1, by: reading.by, readAt: reading.readAt, value: this.opts.encode ? this.opts.encode(reading.value) : reading.value }));
    const data = json.length > GZIP_ABOVE ? await gzip(json) : json;
    if (data.length > MAX_ZNODE_BYTES) {
      if (!this.tooLargeLogged) {
        this.tooLargeLogged = true;
        this.log.warn(`shared reading ${this.opts.path}: ${data.length} bytes even compressed, over the ${MAX_ZNODE_BYTES}-byte znode budget; every sidecar reads it from the source itself`);
      }
      return false;
    }
    const t = this.opts.operationTimeoutMs;
    try {
      await this.opts.session.multi([{ op: 'set', path: this.opts.path, data, version: -1 }], t);
    } catch (e) {
      if (!hasCode(e, ZK.NO_NODE)) throw e;
      try {
        await this.opts.session.create(this.opts.path, data, t);
      } catch (e2) {
        if (!hasCode(e2, ZK.NODE_EXISTS)) throw e2;
        await this.opts.session.multi([{ op: 'set', path: this.opts.path, data, version: -1 }], t);
      }
    }
    return true;
  }

  /**
   * The latest published reading, or undefined when there is none (or it cannot be decoded, which
   * is logged). Rejects when ZooKeeper cannot be read; callers then read the source themselves.
   */
  async latest(): Promise<SharedReading<T> | undefined> {
    if (!this.dirty) return this.cached;
    const t = this.opts.operationTimeoutMs;
    const before = this.fires;
    // Arm the watch before reading: a change after the read fires it, so none is missed.
    const stat = await this.opts.session.exists(this.opts.path, t, () => {
      this.fires++;
      this.dirty = true;
    });
    if (!stat) {
      this.cached = undefined;
      this.dirty = this.fires !== before;
      return undefined;
    }
    const got = await this.opts.session.getData(this.opts.path, t);
    this.dirty = this.fires !== before;
    if (!got) {
      this.cached = undefined;
      return undefined;
    }
    try {
      this.cached = await this.decode(got.data);
    } catch (e) {
      this.log.warn(`shared reading ${this.opts.path} cannot be decoded (${(e as Error).message}); reading the source instead`);
      this.cached = undefined;
    }
    return this.cached;
  }

  private async decode(data: Buffer): Promise<SharedReading<T>> {
    const text = (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b ? await gunzip(data) : data).toString('utf8');
    const o = JSON.parse(text) as { v?: unknown; by?: unknown; readAt?: unknown; value?: unknown };
    if (typeof o !== 'object' || o === null || o.v !== 1 || typeof o.readAt !== 'number' || typeof o.by !== 'string') {
      throw new Error('not a version-1 shared reading');
    }
    return { value: this.opts.decode(o.value), readAt: o.readAt, by: o.by };
  }

  close(): void {
    this.opts.session.off('session', this.onSession);
  }
}
