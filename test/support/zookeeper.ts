/**
 * Throwaway ZooKeeper servers for the store suites, from the Debian `zookeeper` package
 * (scripts/ensure-zookeeper.sh installs it): a standalone server or a 3-server ensemble on free
 * 127.0.0.1 ports with temp data dirs, launched as
 *   java -cp /usr/share/java/zookeeper.jar:… org.apache.zookeeper.server.quorum.QuorumPeerMain zoo.cfg
 * (zookeeper.jar's manifest Class-Path names its Debian dependencies). Ready = `srvr` reports a
 * `Mode:`. Servers are stopped by pid; single servers can be killed and restarted (fault tests).
 *
 * Timing: tickTime 100 ms, initLimit 10, syncLimit 5, so an election after a leader dies takes
 * well under two seconds; maxSessionTimeout is raised so a client's 10 s session survives it.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as zk from 'node-zookeeper-client';
import { LoadedConfig, loadConfig } from '../../src/config/config';
import type { RunningSimulator } from '../../src/sim/server';
import { tempDir } from './paths';

export const ZK_JAR = process.env.BLOCKLIST_ZK_JAR ?? '/usr/share/java/zookeeper.jar';
const SLF4J_SIMPLE = '/usr/share/java/slf4j-simple.jar';
const isCI = process.env.CI === 'true';

/** Why ZooKeeper cannot run here, or undefined when it can. */
export function zookeeperUnavailableReason(): string | undefined {
  if (!fs.existsSync(ZK_JAR)) return `${ZK_JAR} is missing (run scripts/ensure-zookeeper.sh, or apt-get install -y zookeeper)`;
  const j = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (j.error || j.status !== 0) return 'no java on PATH (the Debian zookeeper package depends on default-jre)';
  return undefined;
}

/**
 * For a suite's before(): skip with the reason outside CI; in CI (where a skip counts as a
 * failure anyway) fail loudly instead.
 */
export function requireZookeeper(ctx: Mocha.Context): void {
  const why = zookeeperUnavailableReason();
  if (!why) return;
  if (isCI) throw new Error(`ZooKeeper suites cannot run in CI: ${why}`);
  console.log(`      (skipped: ${why})`);
  ctx.skip();
}

/**
 * One job's sidecar on a shared ZooKeeper store (its blocklist under `root`), wired to the
 * simulator of its application (RM, AMRM proxy, application id), on any port; `define` adds keys.
 */
export function zkJobConfig(quorum: string, root: string, sim: RunningSimulator, define: Record<string, string> = {}): LoadedConfig {
  return loadConfig({
    env: {},
    dynamic: {
      'rest.port': '0',
      'cluster.resource-blocklist.store.type': 'zookeeper',
      'cluster.resource-blocklist.store.zookeeper.quorum': quorum,
      'cluster.resource-blocklist.store.zookeeper.root': root,
      'yarn.resourcemanager.webapp.address': sim.url.replace(/^http:\/\//, ''),
      'cluster.resource-blocklist.amrm-proxy.address': sim.url,
      'yarn.application.id': sim.cluster.applicationId,
      ...define,
    },
  });
}

/** A free loopback port (bind to 0 and release; the tiny race is acceptable for tests). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Sends a four-letter word and returns the whole answer ('' when the server does not answer). */
export function fourLetter(port: number, word: string, timeoutMs = 1000): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const sock = net.connect({ host: '127.0.0.1', port });
    const done = (): void => {
      clearTimeout(t);
      sock.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const t = setTimeout(done, timeoutMs);
    sock.on('connect', () => sock.write(word));
    sock.on('data', (c) => chunks.push(c));
    sock.on('end', done);
    sock.on('error', done);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Member {
  id: number;
  clientPort: number;
  quorumPort: number;
  electionPort: number;
  dir: string;
  proc?: ChildProcess;
}

const live = new Set<ChildProcess>();
// Never leave a JVM behind, even when mocha exits with --exit in the middle of a suite.
process.on('exit', () => {
  for (const p of live) {
    try {
      p.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

/** What a suite adds to every server: zoo.cfg lines and JVM options (a SASL-only ensemble: test/kerberos/zookeeper-sasl.test.ts). */
export interface ZkExtras {
  config?: string[];
  jvm?: string[];
}

export class ZkCluster {
  private constructor(
    readonly root: string,
    private readonly members: Member[],
    private readonly extras: ZkExtras = {},
  ) {}

  /** Starts `size` servers (1 = standalone, 3 = ensemble) and waits until each reports a Mode. */
  static async start(size: 1 | 3 = 1, readyTimeoutMs = 20_000, extras: ZkExtras = {}): Promise<ZkCluster> {
    const why = zookeeperUnavailableReason();
    if (why) throw new Error(`cannot start ZooKeeper: ${why}`);
    const root = tempDir('blocklist-zk-');
    const members: Member[] = [];
    for (let id = 1; id <= size; id++) {
      members.push({ id, clientPort: await freePort(), quorumPort: await freePort(), electionPort: await freePort(), dir: path.join(root, `server${id}`) });
    }
    const c = new ZkCluster(root, members, extras);
    for (const m of members) c.writeConfig(m, size);
    for (const m of members) c.launch(m);
    try {
      await c.waitReady(members.map((m) => m.id), readyTimeoutMs);
    } catch (e) {
      await c.stop(true);
      throw e;
    }
    return c;
  }

  private writeConfig(m: Member, size: number): void {
    fs.mkdirSync(path.join(m.dir, 'data'), { recursive: true });
    const lines = [
      'tickTime=100',
      'initLimit=10',
      'syncLimit=5',
      'minSessionTimeout=400',
      'maxSessionTimeout=60000',
      `dataDir=${path.join(m.dir, 'data')}`,
      `clientPort=${m.clientPort}`,
      'clientPortAddress=127.0.0.1',
      'admin.enableServer=false',
      // cons: the tests and the bench count client connections (one per sidecar).
      '4lw.commands.whitelist=srvr,ruok,stat,mntr,cons',
      // Snapshots and txn-log purging do not matter for a throwaway server; fsync does (durability
      // is part of what the tests check), so forceSync stays at its default (yes).
      ...(this.extras.config ?? []),
    ];
    if (size > 1) {
      for (const o of this.members) lines.push(`server.${o.id}=127.0.0.1:${o.quorumPort}:${o.electionPort}`);
      fs.writeFileSync(path.join(m.dir, 'data', 'myid'), `${m.id}\n`);
    }
    fs.writeFileSync(path.join(m.dir, 'zoo.cfg'), lines.join('\n') + '\n');
  }

  private launch(m: Member): void {
    const cp = [ZK_JAR, fs.existsSync(SLF4J_SIMPLE) ? SLF4J_SIMPLE : ''].filter(Boolean).join(':');
    const log = fs.openSync(path.join(m.dir, 'server.log'), 'a');
    const proc = spawn(
      'java',
      [
        '-Xmx128m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1', // faster start; these servers live for seconds
        '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
        '-Dzookeeper.jmx.log4j.disable=true',
        ...(this.extras.jvm ?? []),
        '-cp',
        cp,
        'org.apache.zookeeper.server.quorum.QuorumPeerMain',
        path.join(m.dir, 'zoo.cfg'),
      ],
      { stdio: ['ignore', log, log], cwd: m.dir },
    );
    fs.closeSync(log);
    live.add(proc);
    proc.on('exit', () => live.delete(proc));
    m.proc = proc;
  }

  private member(id: number): Member {
    const m = this.members.find((x) => x.id === id);
    if (!m) throw new Error(`no ZooKeeper server ${id}`);
    return m;
  }

  /** host:port,… of the given servers (default: all), optionally with a chroot. */
  connectString(chroot = '', ids?: number[]): string {
    const ms = ids ? ids.map((i) => this.member(i)) : this.members;
    return ms.map((m) => `127.0.0.1:${m.clientPort}`).join(',') + chroot;
  }

  ids(): number[] {
    return this.members.map((m) => m.id);
  }

  pid(id: number): number | undefined {
    return this.member(id).proc?.pid;
  }

  /** `leader`, `follower`, `standalone`, or undefined when the server does not serve. */
  async mode(id: number): Promise<string | undefined> {
    const out = await fourLetter(this.member(id).clientPort, 'srvr', 500);
    return /Mode:\s*(\S+)/.exec(out)?.[1];
  }

  /**
   * The client connections server `id` (default: the first) holds now, from its `cons` answer: one
   * line per connection, `/127.0.0.1:54321[1](queued=0,…,sid=0x…,…)`. The `cons` request's own
   * connection is left out (it has no session: no `sid=`).
   */
  async connections(id = this.members[0].id): Promise<{ count: number; lines: string[] }> {
    const out = await fourLetter(this.member(id).clientPort, 'cons', 1000);
    const lines = out.split('\n').map((l) => l.trim()).filter((l) => /^\/[^\s]+:\d+\[/.test(l) && /sid=0x/.test(l));
    return { count: lines.length, lines };
  }

  async waitReady(ids: number[], timeoutMs = 20_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (const id of ids) {
      for (;;) {
        const m = this.member(id);
        if (m.proc && m.proc.exitCode !== null) throw new Error(`ZooKeeper server ${id} exited (${m.proc.exitCode}); log: ${this.logTail(id)}`);
        if (await this.mode(id)) break;
        if (Date.now() > until) throw new Error(`ZooKeeper server ${id} did not report a Mode within ${timeoutMs} ms; log: ${this.logTail(id)}`);
        await sleep(100);
      }
    }
  }

  /** The id of the current leader (polls until one exists, bounded). */
  async leader(timeoutMs = 10_000): Promise<number> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      for (const m of this.members) {
        if (!m.proc) continue;
        const mode = await this.mode(m.id);
        if (mode === 'leader' || mode === 'standalone') return m.id;
      }
      if (Date.now() > until) throw new Error(`no ZooKeeper leader within ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  logTail(id: number, bytes = 2000): string {
    try {
      const t = fs.readFileSync(path.join(this.member(id).dir, 'server.log'), 'utf8');
      return t.slice(-bytes);
    } catch {
      return '(no log)';
    }
  }

  /** SIGKILL one server (a crash, not a clean shutdown) and wait until the process is gone. */
  async kill(id: number): Promise<void> {
    const m = this.member(id);
    const p = m.proc;
    m.proc = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    });
  }

  /** Starts a killed server again on the same ports and data dir (not waiting for it). */
  restart(id: number): void {
    const m = this.member(id);
    if (m.proc) throw new Error(`ZooKeeper server ${id} is running`);
    this.launch(m);
  }

  async stop(keepFiles = false): Promise<void> {
    await Promise.all(this.members.map((m) => this.kill(m.id)));
    if (!keepFiles) fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * Expires a live session from outside, the classic way: a second client attaches with the same
 * session id and password and closes it; the server ends the session (its ephemeral znodes and
 * watches go) and the owner's client learns EXPIRED. The owner's client may win the connection
 * back before the close is sent, so it is tried a few times (bounded). `renewed` resolves when the
 * owner has opened its new session. Returns whether that happened. Four attempts all lost that
 * race now and then under a loaded full run (three suites, this session and the last): eight.
 */
export async function expireSession(
  connectString: string,
  credentials: () => { id: Buffer; password: Buffer },
  renewed: Promise<unknown>,
  attempts = 8,
  /** Readies the second client before it connects (a SASL login on an ensemble that requires one). */
  prepare?: (thief: zk.Client) => void,
): Promise<boolean> {
  let done = false;
  void renewed.then(() => (done = true));
  for (let attempt = 0; attempt < attempts && !done; attempt++) {
    const { id, password } = credentials();
    const thief = zk.createClient(connectString, { sessionTimeout: 1000, sessionId: id, sessionPassword: password } as Partial<zk.Option>);
    prepare?.(thief);
    const attached = await Promise.race([
      new Promise<boolean>((resolve) => {
        thief.once('connected', () => resolve(true));
        thief.connect();
      }),
      sleep(3000).then(() => false),
    ]);
    thief.close();
    if (attached) await Promise.race([renewed, sleep(3000)]);
  }
  return done;
}
