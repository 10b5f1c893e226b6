/**
 * Where admin commands send their requests, and with what token. Precedence, highest first:
 * flags (--server, --token, --token-file, --store) > environment (BLOCKLIST_SERVER, BLOCKLIST_TOKEN,
 * BLOCKLIST_TOKEN_FILE, BLOCKLIST_STORE) > the CLI config file > http://127.0.0.1:8090.
 * The CLI config file is $BLOCKLIST_CLI_CONFIG or ~/.config/blocklist/cli.yaml (XDG_CONFIG_HOME
 * respected), a YAML map with the keys server, token, token-file, store. It is separate from the
 * sidecar's conf/blocklist.yaml on purpose: an operator's laptop has no sidecar config.
 *
 * Stores: `sqlite:PATH`, or `zookeeper:host:port[,host:port…][/root]` (the root defaults to the
 * sidecar's /flink-blocklist). ZooKeeper digest credentials come only from the environment
 * (BLOCKLIST_ZOOKEEPER_AUTH, or the sidecar's own BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_AUTH),
 * never from the command line, where every user of the machine can read them in `ps`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import YAML from 'yaml';
import { usage } from './errors';

export const DEFAULT_SERVER = 'http://127.0.0.1:8090';

export interface ConnectionFlags {
  server?: string;
  token?: string;
  tokenFile?: string;
  store?: string;
  cliConfig?: string;
  /** Find this application's sidecar where the sidecars publish their addresses (find-sidecar.ts). */
  app?: string;
}

export type Target =
  | { kind: 'server'; url: string; token?: string; source: string }
  | { kind: 'sqlite'; file: string; source: string }
  | { kind: 'zookeeper'; quorum: string; root: string; auth?: string; source: string };

/** The sidecar's default root znode (cluster.resource-blocklist.store.zookeeper.root). */
export const DEFAULT_ZOOKEEPER_ROOT = '/flink-blocklist';
export const ZOOKEEPER_AUTH_ENV = ['BLOCKLIST_ZOOKEEPER_AUTH', 'BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_AUTH'] as const;

const STORE_FORMS = 'use sqlite:PATH (e.g. sqlite:data/blocklist.db) or zookeeper:host:port[,host:port]/root (e.g. zookeeper:zk1:2181,zk2:2181/flink-blocklist)';

/** `zookeeper:hosts[/root]` → quorum and root; credentials are refused here (they belong in the environment). */
export function parseZookeeperStore(spec: string, where: string, env: NodeJS.ProcessEnv): Extract<Target, { kind: 'zookeeper' }> {
  const rest = spec.slice('zookeeper:'.length).trim();
  if (rest.includes('@')) {
    throw usage(`'zookeeper:…' (${where}) must not carry credentials: a command line is readable by every user of the machine; set ${ZOOKEEPER_AUTH_ENV[0]}=user:password instead`);
  }
  const slash = rest.indexOf('/');
  const hosts = slash < 0 ? rest : rest.slice(0, slash);
  const rawRoot = slash < 0 ? DEFAULT_ZOOKEEPER_ROOT : rest.slice(slash);
  const bad = hosts.split(',').filter((h) => !/^[A-Za-z0-9.\-_]+:\d{1,5}$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/.test(h.trim()));
  if (!hosts || bad.length) throw usage(`'${spec}' (${where}): ${hosts ? `'${bad[0]}' is not host:port` : 'no host:port'}; ${STORE_FORMS}`);
  const parts = rawRoot.replace(/\/+$/, '').split('/').slice(1);
  if (rawRoot !== '/' && parts.some((x) => x === '' || x === '.' || x === '..' || x.includes(' '))) throw usage(`'${spec}' (${where}): the root '${rawRoot}' is not a znode path like /flink-blocklist`);
  const root = rawRoot === '/' ? '/' : '/' + parts.join('/');
  let auth: string | undefined;
  for (const name of ZOOKEEPER_AUTH_ENV) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    const i = v.indexOf(':');
    if (i <= 0 || i === v.length - 1) throw usage(`${name} must be 'user:password'`);
    auth = v;
    break;
  }
  return { kind: 'zookeeper', quorum: hosts.split(',').map((h) => h.trim()).join(','), root, ...(auth ? { auth } : {}), source: where };
}

const FILE_KEYS = ['server', 'token', 'token-file', 'store'] as const;
type FileKey = (typeof FILE_KEYS)[number];

export function addConnectionOptions(cmd: Command): Command {
  return cmd
    .option('-s, --server <url>', `sidecar REST address (env BLOCKLIST_SERVER; default ${DEFAULT_SERVER})`)
    .option('--token <token>', 'bearer token (env BLOCKLIST_TOKEN); prefer --token-file, a flag shows in ps')
    .option('--token-file <file>', 'file holding the bearer token (env BLOCKLIST_TOKEN_FILE)')
    .option('--store <store>', 'work on a store directly, without a sidecar: sqlite:PATH or zookeeper:host:port[,host:port]/root (env BLOCKLIST_STORE; ZooKeeper credentials from env BLOCKLIST_ZOOKEEPER_AUTH)')
    .option('--cli-config <file>', 'CLI config file (env BLOCKLIST_CLI_CONFIG; default ~/.config/blocklist/cli.yaml)')
    .option('--app <applicationId>', "talk to that job's sidecar, found in ZooKeeper (<root>/sidecars): the ZooKeeper of --store zookeeper:…, else the sidecar's own configuration (BLOCKLIST_CONFIG_FILE or conf/blocklist.yaml, BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_*)");
}

export function defaultCliConfigPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'blocklist', 'cli.yaml');
}

function readCliConfig(file: string, explicit: boolean): Partial<Record<FileKey, string>> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (!explicit && (e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw usage(`cannot read the CLI config file ${file}: ${(e as Error).message}; fix the path or drop --cli-config`);
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw usage(`CLI config file ${file} is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw usage(`CLI config file ${file} must be a YAML map (keys: ${FILE_KEYS.join(', ')})`);
  const out: Partial<Record<FileKey, string>> = {};
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    if (!(FILE_KEYS as readonly string[]).includes(k)) throw usage(`unknown key '${k}' in CLI config file ${file} (known: ${FILE_KEYS.join(', ')})`);
    if (typeof v !== 'string' && typeof v !== 'number') throw usage(`key '${k}' in CLI config file ${file} must be a string`);
    out[k as FileKey] = String(v);
  }
  return out;
}

function readTokenFile(file: string, where: string): string {
  let t: string;
  try {
    t = fs.readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw usage(`cannot read the token file ${file} (${where}): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!t) throw usage(`the token file ${file} (${where}) is empty`);
  return t;
}

function normaliseServer(raw: string, where: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw usage(`'${raw}' (${where}) is not a server address; use e.g. http://127.0.0.1:8090`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usage(`'${raw}' (${where}) must be an http:// or https:// address`);
  return u.toString().replace(/\/+$/, '');
}

type Pick = (flag: string | undefined, envName: string, key: FileKey) => [string, string] | undefined;

/** Each setting from the closest source that has it: flag, then environment, then the CLI config file. */
function picker(flags: ConnectionFlags, env: NodeJS.ProcessEnv): Pick {
  const explicitFile = flags.cliConfig ?? env.BLOCKLIST_CLI_CONFIG;
  const cfgPath = explicitFile ?? defaultCliConfigPath(env);
  const file = readCliConfig(cfgPath, explicitFile !== undefined);
  return (flag, envName, key) => {
    if (flag !== undefined) return [flag, `--${key}`];
    const e = env[envName];
    if (e !== undefined && e !== '') return [e, envName];
    const f = file[key];
    if (f !== undefined && f !== '') return [f, `${key} in ${cfgPath}`];
    return undefined;
  };
}

/** The store the flags, environment or CLI config file name (--store, BLOCKLIST_STORE, store:), if any. */
export function namedStore(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Exclude<Target, { kind: 'server' }> | undefined {
  const store = picker(flags, env)(flags.store, 'BLOCKLIST_STORE', 'store');
  if (!store) return undefined;
  if (store[0].startsWith('zookeeper:')) return parseZookeeperStore(store[0], store[1], env);
  const m = /^sqlite:(.+)$/.exec(store[0]);
  if (!m) throw usage(`'${store[0]}' (${store[1]}) is not a store; ${STORE_FORMS}`);
  return { kind: 'sqlite', file: m[1], source: store[1] };
}

/** Resolves the target of an admin command. Pure apart from reading the two optional files. */
export function resolveTarget(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Target {
  const pick = picker(flags, env);
  const server = pick(flags.server, 'BLOCKLIST_SERVER', 'server');
  // An explicit --server beats a store named only by env/file, and vice versa; two flags clash.
  if (flags.store !== undefined && flags.server !== undefined) throw usage('give either --server or --store, not both');
  const store = server && server[1] === '--server' ? undefined : namedStore(flags, env);
  if (store) return store;
  const [rawUrl, source] = server ?? [DEFAULT_SERVER, 'default'];
  return { kind: 'server', url: normaliseServer(rawUrl, source), token: resolveToken(flags, env), source };
}

/** The bearer token (--token, --token-file, their environment variables, the CLI config file). */
export function resolveToken(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const pick = picker(flags, env);
  let token: string | undefined;
  const tok = pick(flags.token, 'BLOCKLIST_TOKEN', 'token');
  const tokFile = pick(flags.tokenFile, 'BLOCKLIST_TOKEN_FILE', 'token-file');
  if (tok && tokFile && tok[1].startsWith('--') && tokFile[1].startsWith('--')) throw usage('give either --token or --token-file, not both');
  // The closer source wins (flag > environment > file); at the same level the literal token does.
  const rank = (src: string) => (src.startsWith('--') ? 0 : src.startsWith('BLOCKLIST_') ? 1 : 2);
  if (tok && (!tokFile || rank(tok[1]) <= rank(tokFile[1]))) token = tok[0];
  else if (tokFile) token = readTokenFile(tokFile[0], tokFile[1]);
  return token;
}
