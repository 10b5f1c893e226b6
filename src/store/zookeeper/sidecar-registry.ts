/**
 * Where each job's sidecar can be reached, on the ZooKeeper store's ensemble: one EPHEMERAL znode
 * per application attempt, `<chroot><root>/sidecars/<appattempt id>`, whose data is the sidecar's
 * address record (JSON, `SidecarRecord`). Operators' `blocklist --app`, Prometheus' HTTP service
 * discovery (served by any sidecar) and `zkCli ls` read it.
 *
 * Why one flat folder of ephemerals, not a folder per application: nothing persistent is left per
 * job (a cluster runs thousands a day; an empty per-application znode would stay forever, since the
 * Node client cannot create ZooKeeper's self-deleting container znodes), and one listing finds all.
 *
 * Why the znode is kept, not just created: an ephemeral dies with its session. When the session
 * ends (expiry, or a stuck client replaced) the sidecar's session object opens a new one and says
 * 'session'; the publication then creates the znode again there. A znode still held by an older
 * session (ours, not yet expired on the server; or a sidecar of the same attempt that was
 * restarted) is replaced by the newer process, and an older process finding a newer one's record
 * stands back and waits for it to go: two live sidecars of one attempt never take turns.
 *
 * Beside it, a PERSISTENT registration `<root>/sidecar-attempts/<appattempt id>` (the same record)
 * says the attempt has a sidecar that has not stopped cleanly. A crash leaves it while the ephemeral
 * goes, so the discovery can keep the crashed sidecar's target while its attempt runs (and
 * BlocklistSidecarDown fire); a clean stop removes it, and the discovery forgets one whose attempt
 * no longer runs (api/routes/discovery.ts). What stays per job is one small znode per crashed
 * attempt that no discovery has looked at since.
 */
import { randomBytes } from 'node:crypto';
import { Logger, silentLogger } from '../../core/logger';
import { ZK, ZkSession, hasCode } from './session';
import { SerialSteps, ensurePath } from './steps';

/** What a sidecar publishes about itself (the znode's data; also `rest.address-file`'s content). */
export interface SidecarRecord {
  /** scheme://host:port of its REST API. */
  url: string;
  /** host:port, as Prometheus' targets are written. */
  address: string;
  scheme: 'http' | 'https';
  /** The product version it runs. */
  version: string;
  application: string;
  /** appattempt_…; absent when not known (a sidecar outside an AM container, before the proxy said). */
  attempt?: string;
  /** ISO time the sidecar started listening. */
  started: string;
  /** The machine it runs on (a NodeManager in an AM container). */
  host: string;
  pid: number;
}

/** A record from a znode's data, or undefined when it is not one (written by hand, another version). */
export function parseSidecarRecord(data: string): SidecarRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  const strings = ['url', 'address', 'version', 'application', 'started', 'host'] as const;
  if (strings.some((k) => typeof r[k] !== 'string' || r[k] === '')) return undefined;
  if (r.scheme !== 'http' && r.scheme !== 'https') return undefined;
  if (r.attempt !== undefined && typeof r.attempt !== 'string') return undefined;
  if (typeof r.pid !== 'number') return undefined;
  return r as unknown as SidecarRecord;
}

/** The published sidecar of `application` to talk to: the highest attempt (the live one), then the newest. */
export function sidecarOf(records: readonly SidecarRecord[], application: string): SidecarRecord | undefined {
  const attemptNo = (r: SidecarRecord): number => Number(/_(\d+)$/.exec(r.attempt ?? '')?.[1] ?? 0);
  return records
    .filter((r) => r.application === application)
    .sort((a, b) => attemptNo(b) - attemptNo(a) || b.started.localeCompare(a.started))[0];
}

/** The znode name of a record: its attempt id, else its application id. */
export function znodeName(r: Pick<SidecarRecord, 'application' | 'attempt'>): string {
  return r.attempt ?? r.application;
}

export interface SidecarRegistryOptions {
  session: ZkSession;
  /** The store's base znode (chroot + root), e.g. /flink-blocklist. */
  basePath: string;
  operationTimeoutMs: number;
  logger?: Logger;
  /** Pause before trying again after a failed step (ZooKeeper unreachable). Default 1 s. */
  retryMs?: number;
}

export class SidecarRegistry {
  readonly path: string;
  /** The persistent registrations (see the file's comment). */
  readonly registrations: string;

  constructor(private readonly opts: SidecarRegistryOptions) {
    this.path = `${opts.basePath}/sidecars`;
    this.registrations = `${opts.basePath}/sidecar-attempts`;
  }

  /** Every published sidecar; a znode whose data is not a record is left out. */
  async list(): Promise<SidecarRecord[]> {
    return this.read(this.path);
  }

  /** Every registered sidecar, published now or not (a crashed one's registration stays). */
  async registered(): Promise<SidecarRecord[]> {
    return this.read(this.registrations);
  }

  /** Removes the registration of `record`'s attempt if it is still that record's. */
  async forget(record: SidecarRecord): Promise<void> {
    const path = `${this.registrations}/${znodeName(record)}`;
    const t = this.opts.operationTimeoutMs;
    const cur = await this.opts.session.getData(path, t);
    const r = cur ? parseSidecarRecord(cur.data.toString('utf8')) : undefined;
    if (!cur || (r && (r.address !== record.address || r.started !== record.started))) return;
    await this.opts.session.multi([{ op: 'remove', path, version: cur.stat.version }], t).catch((e: unknown) => {
      if (!hasCode(e, ZK.NO_NODE) && !hasCode(e, ZK.BAD_VERSION)) throw e;
    });
  }

  /** Keeps `record` published until stop(); see the file's comment. */
  publish(record: SidecarRecord): Publication {
    const p = new Publication(this.opts, `${this.path}/${znodeName(record)}`, record, `${this.registrations}/${znodeName(record)}`);
    p.start();
    return p;
  }

  private async read(folder: string): Promise<SidecarRecord[]> {
    const t = this.opts.operationTimeoutMs;
    let names: string[];
    try {
      names = await this.opts.session.getChildren(folder, t);
    } catch (e) {
      if (hasCode(e, ZK.NO_NODE)) return [];
      throw e;
    }
    const read = await Promise.all(names.map((n) => this.opts.session.getData(`${folder}/${n}`, t)));
    return read.flatMap((got) => {
      const r = got ? parseSidecarRecord(got.data.toString('utf8')) : undefined;
      return r ? [r] : [];
    });
  }
}

/** The publishing process's token in a record (parseSidecarRecord has checked it is JSON). */
const instanceOf = (text: string): unknown => (JSON.parse(text) as { instance?: unknown }).instance;

type Existing = { kind: 'ours' } | { kind: 'replace'; version: number } | { kind: 'yield'; to: SidecarRecord | undefined };

/** One sidecar's znode, created again on every new session and whenever it goes while we run. */
export class Publication {
  /** Tells our records from another process's of the same attempt. */
  private readonly instance = randomBytes(6).toString('hex');
  private readonly data: Buffer;
  private readonly log: Logger;
  private running = false;
  private readonly steps: SerialSteps;
  /** Whether the znode is ours in the current session (tests, /status). */
  published = false;
  private readonly onSession = (): void => {
    this.published = false;
    this.step();
  };
  /** Reconnected within the session: the znode should still be there; look. */
  private readonly onConnected = (): void => this.step();

  constructor(
    private readonly opts: SidecarRegistryOptions,
    readonly path: string,
    private readonly record: SidecarRecord,
    /** The attempt's persistent registration, written once the znode is ours; removed by a clean stop. */
    readonly registration?: string,
  ) {
    this.data = Buffer.from(JSON.stringify({ ...record, instance: this.instance }));
    this.log = opts.logger ?? silentLogger;
    this.steps = new SerialSteps({
      work: () => this.runOnce(),
      active: () => this.running,
      retryMs: opts.retryMs ?? 1000,
      onRetry: (e, retryMs) => this.log.warn(`sidecar address: publishing ${this.path} failed: ${e.message}; trying again in ${retryMs} ms`),
    });
  }

  private step(): void {
    this.steps.request();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.opts.session.on('session', this.onSession);
    this.opts.session.on('connected', this.onConnected);
    this.step();
  }

  /** Deletes our znode (best effort: it dies with the session anyway) and stops keeping it. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.opts.session.off('session', this.onSession);
    this.opts.session.off('connected', this.onConnected);
    this.steps.cancel();
    await this.unregister();
    if (!this.published) return;
    this.published = false;
    try {
      const cur = await this.opts.session.getData(this.path, this.opts.operationTimeoutMs);
      if (cur && cur.stat.ephemeralOwner === this.opts.session.credentials().idHex.padStart(16, '0')) {
        await this.opts.session.multi([{ op: 'remove', path: this.path, version: cur.stat.version }], this.opts.operationTimeoutMs);
      }
    } catch {
      // gone already, or ZooKeeper unreachable: the session's end removes it
    }
  }

  private async runOnce(): Promise<void> {
    const { session, operationTimeoutMs: t } = this.opts;
    await ensurePath(session, this.path.slice(0, this.path.lastIndexOf('/')), t);
    for (let tries = 0; tries < 5 && this.running; tries++) {
      try {
        await session.createEphemeral(this.path, this.data, t);
        this.log.info(`sidecar address published in ZooKeeper: ${this.path} → ${this.record.url}`);
      } catch (e) {
        if (!hasCode(e, ZK.NODE_EXISTS)) throw e;
        const seen = await this.existing();
        if (seen.kind === 'replace') {
          await session.multi([{ op: 'remove', path: this.path, version: seen.version }], t).catch((err: unknown) => {
            if (!hasCode(err, ZK.NO_NODE) && !hasCode(err, ZK.BAD_VERSION)) throw err;
          });
          continue;
        }
        if (seen.kind === 'yield') {
          this.published = false;
          this.log.warn(`sidecar address: ${this.path} is held by a newer sidecar of this attempt (${seen.to?.url ?? 'unreadable record'}, pid ${seen.to?.pid ?? '?'}); not publishing while it is there`);
          await this.watch();
          return;
        }
      }
      this.published = true;
      await this.register();
      await this.watch();
      return;
    }
    if (this.running) throw new Error(`${this.path} was created again by someone else five times in a row`);
  }

  /** Writes the persistent registration (ours now: the ephemeral is). */
  private async register(): Promise<void> {
    const path = this.registration;
    if (!path) return;
    const { session, operationTimeoutMs: t } = this.opts;
    await ensurePath(session, path.slice(0, path.lastIndexOf('/')), t);
    try {
      await session.create(path, this.data, t);
    } catch (e) {
      if (!hasCode(e, ZK.NODE_EXISTS)) throw e;
      await session.setData(path, this.data, -1, t);
    }
  }

  /** A clean stop: removes the registration if it is still ours (best effort). */
  private async unregister(): Promise<void> {
    const path = this.registration;
    if (!path) return;
    const { session, operationTimeoutMs: t } = this.opts;
    try {
      const cur = await session.getData(path, t);
      if (cur && instanceOf(cur.data.toString('utf8')) === this.instance) await session.multi([{ op: 'remove', path, version: cur.stat.version }], t);
    } catch {
      // gone already, or ZooKeeper unreachable: the discovery forgets it once its attempt ends
    }
  }

  /** Whose the znode that is in the way is, and what to do about it. */
  private async existing(): Promise<Existing> {
    const { session, operationTimeoutMs: t } = this.opts;
    const cur = await session.getData(this.path, t);
    if (!cur) return { kind: 'replace', version: -1 };
    if (cur.stat.ephemeralOwner === session.credentials().idHex.padStart(16, '0')) return { kind: 'ours' };
    const text = cur.data.toString('utf8');
    const theirs = parseSidecarRecord(text);
    // Our own from an older session, an unreadable record, or an older process: ours replaces it.
    if (!theirs || instanceOf(text) === this.instance || theirs.started <= this.record.started) return { kind: 'replace', version: cur.stat.version };
    return { kind: 'yield', to: theirs };
  }

  /** A one-shot watch on the znode: when it goes (or changes), look again. */
  private async watch(): Promise<void> {
    const still = await this.opts.session.exists(this.path, this.opts.operationTimeoutMs, () => {
      this.published = false;
      this.step();
    });
    // Gone between our create and the watch: look again once this run ends.
    if (!still) this.step();
  }
}
