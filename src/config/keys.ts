/**
 * Every configuration key the sidecar knows, with its type, default and meaning. Flink-style flat
 * keys; the names marked "fixed" are used by operators' scripts and must not change.
 * docs/configuration.md is generated from this table (`blocklist config --markdown`).
 */
import * as cron from 'node-cron';
import { parseDuration } from '../model/duration';

export interface KeyDef<T> {
  default: string;
  description: string;
  parse(raw: string): T;
  /** Never printed in logs or `config` output. */
  secret?: boolean;
}

const str = (def: string, description: string, extra: Partial<KeyDef<string>> = {}): KeyDef<string> => ({ default: def, description, parse: (r) => r, ...extra });

const bool = (def: boolean, description: string): KeyDef<boolean> => ({
  default: String(def),
  description,
  parse(r) {
    const v = r.trim().toLowerCase();
    if (v === 'true') return true;
    if (v === 'false') return false;
    throw new Error(`'${r}' is not true or false`);
  },
});

const int = (def: number, min: number, max: number, description: string): KeyDef<number> => ({
  default: String(def),
  description,
  parse(r) {
    if (!/^\s*-?\d+\s*$/.test(r)) throw new Error(`'${r}' is not a whole number`);
    const n = Number(r);
    if (n < min || n > max) throw new Error(`${n} is outside ${min}..${max}`);
    return n;
  },
});

const duration = (def: string, description: string, opts: { allowNegative?: boolean; min?: number } = {}): KeyDef<number> => ({
  default: def,
  description,
  parse(r) {
    const ms = parseDuration(r, opts);
    if (opts.min !== undefined && ms >= 0 && ms < opts.min) throw new Error(`'${r}' is below the minimum of ${opts.min} ms`);
    return ms;
  },
});

/** A size in bytes: a whole number with an optional unit (b, kb, mb, gb; KiB, MiB, GiB), multiples of 1024 as Flink's MemorySize. */
const size = (def: string, description: string, min: number): KeyDef<number> => ({
  default: def,
  description,
  parse(r) {
    const m = /^\s*(\d+)\s*(b|bytes|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$/i.exec(r);
    if (!m) throw new Error(`'${r}' is not a size (a whole number of bytes, or with kb, mb or gb)`);
    const unit = (m[2] ?? 'b').toLowerCase()[0];
    const n = Number(m[1]) * (unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1);
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`'${r}' is below the minimum of ${min} bytes`);
    return n;
  },
});

const fraction = (def: number, description: string): KeyDef<number> => ({
  default: String(def),
  description,
  parse(r) {
    const n = Number(r.trim());
    if (r.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new Error(`'${r}' is not a fraction between 0 and 1`);
    return n;
  },
});

function oneOf<T extends string>(values: readonly T[], def: T, description: string): KeyDef<T> {
  return {
    default: def,
    description,
    parse(r) {
      const v = r.trim() as T;
      if (!values.includes(v)) throw new Error(`'${r}' is not one of ${values.join(', ')}`);
      return v;
    },
  };
}

export const KEYS = {
  // --- fixed names ---
  'cluster.resource-blocklist.enabled': bool(true, 'Whether the sidecar enforces the blocklist. When false it pushes nothing to YARN and mutating REST calls answer 503 with a clear message.'),
  'rest.bind-address': str('127.0.0.1', 'Address the REST API listens on. A non-loopback address requires rest.auth.tokens-file.'),
  'rest.port': int(8090, 0, 65535, 'REST API port (0 = pick a free port and log it).'),
  'rest.address': str('', "The host clients and Prometheus reach the REST API at, published with the port the API listens on (ZooKeeper store: the znode <root>/sidecars/<attempt>; rest.address-file). Empty: rest.bind-address, or for a wildcard bind (0.0.0.0, ::) $NM_HOST (YARN's NodeManager host in a container), else the host name."),
  'rest.address-file': str('', "A file the sidecar writes its address to once it listens (JSON: url, address, scheme, application, attempt, version, started, host, pid) and removes when it stops. Empty = none. scripts/launch-in-am.sh puts it beside the interceptor's hand-off (blocklist-sidecar.json)."),
  'cluster.resource-blocklist.store.type': oneOf(['sqlite', 'zookeeper'] as const, 'sqlite', 'Where the blocklist lives: an embedded SQLite file, or a ZooKeeper ensemble shared by many jobs.'),
  'cluster.resource-blocklist.store.sqlite.path': str('data/blocklist.db', 'SQLite file of the embedded store (created if missing).'),
  // --- ZooKeeper store ---
  'cluster.resource-blocklist.store.zookeeper.quorum': str('', 'ZooKeeper connect string host:port[,host:port…][/chroot].'),
  'cluster.resource-blocklist.store.zookeeper.root': str('/flink-blocklist', 'Root znode of the blocklist under the chroot.'),
  'cluster.resource-blocklist.store.zookeeper.session-timeout': duration('30 s', 'ZooKeeper session timeout.', { min: 1000 }),
  'cluster.resource-blocklist.store.zookeeper.operation-timeout': duration('5 s', 'Timeout of every ZooKeeper call (a client without quorum otherwise waits forever).', { min: 100 }),
  'cluster.resource-blocklist.store.zookeeper.connect-timeout': duration('10 s', 'Deadline of one connection to ZooKeeper (TCP connect and session handshake) and of a liveness probe while connected; past it the client is closed and a fresh one made (the library would otherwise wait for a handshake forever).', { min: 100 }),
  'cluster.resource-blocklist.store.unreachable-limit': duration('5 min', 'GET /healthz answers 503 once the store (ZooKeeper) has been unreachable this long without a break, so a supervisor can restart the sidecar. 0 = never.', { min: 0 }),
  'cluster.resource-blocklist.store.zookeeper.clock-skew-limit': duration(
    '10 s',
    "How far this machine's clock may run ahead of the store's time (ZooKeeper's: the mtime of the clock znode under the root, written once a minute) before the sidecar stops deleting expired items from the shared store and counts items on the store's time instead of its own. Reported in /status (clockSkew) and blocklist_store_clock_skew_seconds.",
    { min: 1000 },
  ),
  'cluster.resource-blocklist.store.zookeeper.publish-address': bool(true, "With the ZooKeeper store, a sidecar whose application is known publishes its address as the ephemeral znode <root>/sidecars/<appattempt id> (gone when the sidecar is): `blocklist --app` and GET /discovery/prometheus find it there."),
  'cluster.resource-blocklist.store.zookeeper.sasl.enabled': bool(
    false,
    "Log in to ZooKeeper with SASL/GSSAPI (Kerberos) on every connection, as security.kerberos.login.principal from security.kerberos.login.keytab (an ensemble that requires it: enforce.auth.schemes=sasl), and create znodes under the sasl ACL scheme. Not together with store.zookeeper.auth (digest).",
  ),
  'cluster.resource-blocklist.store.zookeeper.sasl.service-name': str('zookeeper', "The ZooKeeper servers' Kerberos service name: each connection asks for a ticket for <service-name>/<the server's host as the quorum names it>@REALM (Flink's zookeeper.sasl.service-name)."),
  'cluster.resource-blocklist.store.zookeeper.sasl.acl': str(
    '',
    "Comma-separated Kerberos names, as the ensemble authorises them (with the realm unless it sets kerberos.removeRealmFromPrincipal), that get every permission on the znodes the store creates. Empty: the sidecar's own login (ZooKeeper's auth scheme). Sidecars that log in as different principals and share one store must all be listed.",
  ),
  'cluster.resource-blocklist.store.zookeeper.auth': str('', "Digest credentials 'user:password'; when set, znodes are created with a digest ACL for that user.", { secret: true }),
  // --- YARN (issues #3, #4; fixed names) ---
  'yarn.resourcemanager.webapp.address': str('', 'RM web address(es), host:port, comma separated for RM HA (a standby is skipped or its 307 followed).'),
  'yarn.resourcemanager.webapp.user': str('', "User for the RM's simple auth (?user.name=); empty = none."),
  'cluster.resource-blocklist.amrm-proxy.address': str('', 'Address host:port (or URL) of the AMRM REST proxy in or beside the AM.'),
  'cluster.resource-blocklist.amrm-proxy.secret-file': str('', "File holding the proxy's per-application secret, sent as 'Authorization: Bearer' (the AMRMProxy interceptor writes it into the AM's $LOCAL_DIRS; scripts/launch-in-am.sh finds it). Empty: no header (the simulator needs none)."),
  'cluster.resource-blocklist.amrm-proxy.owner': str('blocklist', "The owner under which this sidecar writes to the AM's shared blacklist. It reconciles only this owner's set and never removes a host only other owners (Flink's own blocklist) hold. Letters, digits, '.', '_', '-'; at most 64.", {
    parse(r: string) {
      const v = r.trim();
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(v)) throw new Error(`'${r}' is not an owner name (letters, digits, '.', '_', '-'; at most 64)`);
      return v;
    },
  }),
  'yarn.application.id': str('', 'The Flink application. Empty: from CONTAINER_ID, else from the proxy (GET /amrm/v1/attempt).'),
  'cluster.resource-blocklist.yarn.include-port-in-node-name': oneOf(['auto', 'true', 'false'] as const, 'auto', "Whether the RM's scheduler names nodes host:port (YARN's yarn.scheduler.include-port-in-node-name): then a block is pushed as the NodeIds of its host, or it would match nothing. auto = read it from the RM's /conf at start (a warning names this key when it cannot be read); that shows yarn-site.xml, not capacity-scheduler.xml: set true when the key is set only there."),
  'cluster.resource-blocklist.yarn.request-timeout': duration('10 s', "Deadline of every call to the RM, the AMRM proxy and Flink's JobManager: the whole call, from the request to the last byte of the answer (a peer that trickles its answer is abandoned at it, and another RM of an HA list tried).", { min: 1 }),
  'cluster.resource-blocklist.yarn.max-answer-size': size('32 mb', "Largest answer read from the RM's lists (the node list, an application's attempts, an attempt's containers); past it the call fails with an error naming this key and nothing more is read. A real Hadoop 3.5 RM writes ~1.8 KB per node: ~18 MB at 10,000 nodes. The RM's other answers are bounded at 4 MB.", 64 * 1024),
  'cluster.resource-blocklist.amrm-proxy.max-answer-size': size('16 mb', "Largest answer read from the AMRM proxy (its blacklist with owners: ~4 MB at 100,000 hosts; the application's containers); past it the call fails with an error naming this key.", 64 * 1024),
  // --- sync engine (fixed names first) ---
  'cluster.resource-blocklist.poll-interval': duration('1 s', 'How often the store is polled for changes made by other writers.', { min: 10 }),
  'cluster.resource-blocklist.max-blocked-fraction': fraction(0.33, 'Never blacklist more than this fraction of the RUNNING nodes for one app, rounded down, but at least one node while another RUNNING node stays free (0 = never); later items are deferred (oldest kept), and their answers say so.'),
  'cluster.resource-blocklist.evacuation.timeout': duration('0 s', 'Default graceful evacuation timeout (an item\'s evacuationTimeout wins). 0 = release at once; negative = wait forever.', { allowNegative: true }),
  'cluster.resource-blocklist.expiry.cron': {
    default: '*/10 * * * * *',
    description: 'node-cron schedule (with seconds) of the job that deletes expired items from the store.',
    parse(r: string) {
      if (!cron.validate(r)) throw new Error(`'${r}' is not a valid cron expression`);
      return r;
    },
  } as KeyDef<string>,
  'cluster.resource-blocklist.evacuation.status-log-interval': duration('20 s', 'Interval of the status log line per evacuating node (YARN logs its decommissioning watcher every 20 s).', { min: 100 }),
  'cluster.resource-blocklist.evacuation.release-batch-size': int(500, 1, 100000, 'Most containers released in one proxy call.'),
  'cluster.resource-blocklist.evacuation.max-parallel': int(0, 0, 100000, "Most busy task managers of the job released per step of an evacuation; the next step waits until the job runs again with every task (and its failover was counted). 0 = all that are due in one step: a job whose failover restarts everything (one pipelined region: any keyBy/rebalance) then fails over once instead of once per task manager. Idle task managers never count."),
  'cluster.resource-blocklist.evacuation.checkpoint.timeout': duration('30 s', "At an evacuation's deadline a streaming job with checkpointing first takes a checkpoint (triggered through Flink's REST API where it can be, else the next periodic one); the release waits for it at most this long, counted from the trigger, then goes without it and says so. 0 = release without a checkpoint.", { min: 0 }),
  'cluster.resource-blocklist.evacuation.step-timeout': duration('5 min', 'The longest a release step waits for the job to run again (every task running, the released task managers gone from Flink, a failover counted) before the next step may start anyway; a step never starts while a job is restarting.', { min: 1000 }),
  'cluster.resource-blocklist.flink.enabled': bool(true, "Read the job's Flink JobManager REST API for evacuations and MARK_BLOCKED items: idle task managers are released at once, busy ones at the deadline after a checkpoint, in steps. false: evacuations release at their deadline as YARN's graceful decommission does, and MARK_BLOCKED releases nothing."),
  'cluster.resource-blocklist.flink.rest-address': str('', "The JobManager's REST address (http(s)://host:port). Empty: from the RM's application report (Flink registers its REST port as the AM's RPC port; the tracking URL through the RM's web proxy is the fallback, read-only)."),
  'cluster.resource-blocklist.yarn.refresh-interval': duration('10 s', "How stale the RM's node list (for the safety cap) and the app's container list (for taskManagers) may get when nothing else triggers a pass; evacuating nodes are re-read every poll-interval.", { min: 100 }),
  'cluster.resource-blocklist.yarn.nodes.refresh-interval': duration('10 min', "How often the RM's node list (megabytes at 10,000 nodes) is re-read while node items are in force; a blocked host missing from the last list is looked up at once, and the safety cap's denominator comes from /ws/v1/cluster/metrics (about 1 KB) every yarn.refresh-interval.", { min: 1000 }),
  'cluster.resource-blocklist.yarn.cluster-state.shared': bool(true, "With the ZooKeeper store: one sidecar per store, elected on the ensemble, reads the RM's node counts and node list and shares them through ZooKeeper; the others read them there, and read the RM themselves when that reading is older than two intervals (the elected sidecar gone, ZooKeeper unreachable)."),
  'cluster.resource-blocklist.full-resync-interval': duration('5 min', "How often the proxy's blacklist and the RM's view are re-read in full, even when nothing seems changed.", { min: 1000 }),
  'cluster.resource-blocklist.sync.stall-limit': duration('1 min', "GET /readyz answers 503 (and /status says why) once a reconcile pass has been running this long, or every pass has failed this long: YARN's blacklist is not being brought up to date (a peer that answers too slowly, the proxy down). It answers 200 again after the next good pass. 0 = never.", { min: 0 }),
  'cluster.resource-blocklist.retry.initial-backoff': duration('200 ms', 'First retry delay after a failed push (doubles each time).', { min: 1 }),
  'cluster.resource-blocklist.retry.max-backoff': duration('30 s', 'Cap of the retry delay.', { min: 1 }),
  // --- logs ---
  'log.format': oneOf(['text', 'json'] as const, 'text', 'text: readable in a terminal; json: one JSON object per line.'),
  'log.level': oneOf(['error', 'warn', 'info', 'debug'] as const, 'info', 'Lowest level logged.'),
  'log.audit.file': str('', 'Also append audit lines (JSON) to this file; empty = only the main log.'),
  // --- metrics (docs/operations.md, Metrics) ---
  'metrics.items.max-series': int(1000, 0, 100_000, 'Most items in force with a blocklist_item_info series on /metrics (the newest; blocklist_item_series_omitted counts the others). 0 = none. The counts (numBlockedNodes, …) are exact whatever the bound.'),
  'metrics.evacuations.max-series': int(100, 0, 100_000, 'Most evacuations with per-node series on /metrics (phase, containers left and released, deadline: 4 series each; those still moving first; blocklist_evacuation_series_omitted counts the others). 0 = none.'),
  // --- REST limits and security ---
  'rest.server.max-content-length': int(1_048_576, 1024, 104_857_600, 'Largest accepted request body in bytes.'),
  'rest.auth.tokens-file': str('', 'YAML/JSON file of bearer tokens: token → {name, role: admin|viewer}. Empty = no auth (loopback only).'),
  'rest.ssl.key-file': str('', 'PEM private key of the REST API\'s certificate; with rest.ssl.cert-file the API serves HTTPS. Empty = plain HTTP.'),
  'rest.ssl.cert-file': str('', 'PEM certificate (chain) of the REST API; set together with rest.ssl.key-file.'),
  'rest.rate-limit.max-mutations': int(1000, 0, 10_000_000, 'Most mutating calls (PUT/POST/DELETE) one principal (without auth: one client address) may make per rest.rate-limit.window; beyond it 429. 0 = no limit.'),
  'cluster.resource-blocklist.memory.optimize-for-size': bool(true, "Run `blocklist sidecar` with V8's optimize-for-size mode: the heap grows by small steps and is collected sooner, so garbage costs less memory (100,000 items, bulk load + 10 listings: peak RSS ~210 MB instead of ~400 MB) for a little more GC CPU."),
  'rest.listing.cache-retention': duration('30 s', 'How long the serialised GET /blocklist (one copy per store version, shared by every listing; ~33 MB at 100,000 items) is kept after the last listing that used it; then it is released and the next full listing builds it again. 0 = release as soon as no listing is being sent.', { min: 0 }),
  'rest.listing.max-concurrent': int(32, 1, 10_000, 'Most full GET /blocklist responses being sent at once; beyond it 503 + Retry-After (paged requests, ?limit=&after=, do not count).'),
  'rest.console.history-interval': duration('1 min', "How often the console's chart samples blocked nodes, evacuations, deferred and unapplied blocks; the sidecar keeps the last 360 samples in memory (6 h at 1 min, 14 KB). Not sampled when the console is off.", { min: 100 }),
  'rest.console.enabled': bool(true, 'Serve the web console at /ui/ (GET / redirects there; docs/console.md). false: those paths answer 404; the REST API is unchanged.'),
  'rest.rate-limit.window': duration('10 s', 'Window of rest.rate-limit.max-mutations.', { min: 100 }),
  // --- automatic detection ---
  'cluster.resource-blocklist.detector.mode': oneOf(['off', 'shadow', 'enforce'] as const, 'off', 'off: no detector; shadow: detect, decide and show everything (GET /detector), block nothing; enforce: add automatic blocks.'),
  'cluster.resource-blocklist.detector.failures-per-host': int(3, 1, 1000, 'Incidents (one per host per job restart or container loss) within the window that block a host.'),
  'cluster.resource-blocklist.detector.window': duration('10 min', 'Incidents older than this no longer count.', { min: 1000 }),
  'cluster.resource-blocklist.detector.job-fault-hosts': int(3, 2, 100000, 'The same failure on this many distinct hosts within the window is the job\'s fault: no host is blamed for it.'),
  'cluster.resource-blocklist.detector.block-duration': duration('1 h', 'Length of a first automatic block; doubled for a host blocked again soon after its last block ended.', { min: 1000 }),
  'cluster.resource-blocklist.detector.max-block-duration': duration('24 h', 'Longest automatic block, however often a host is blocked again.', { min: 1000 }),
  'cluster.resource-blocklist.detector.max-blocked-fraction': fraction(0.1, 'Automatic blocks in effect never exceed this fraction of RUNNING nodes (besides the global cap); at the cap more are refused and an alert is logged. Manual blocks are never dropped.'),
  'cluster.resource-blocklist.detector.action': oneOf(['MARK_BLOCKED', 'MARK_BLOCKED_AND_EVACUATE_TASKS'] as const, 'MARK_BLOCKED', 'Action of automatic blocks.'),
  'cluster.resource-blocklist.detector.poll-interval': duration('10 s', 'How often the detector reads its sources. Flink keeps only its 16 newest failures: poll faster than a job can fail 16 times.', { min: 100 }),
  'cluster.resource-blocklist.detector.flink.rest-address': str('', "Flink JobManager REST address (e.g. http://127.0.0.1:8081); empty = no Flink source."),
  'cluster.resource-blocklist.detector.flink.max-answer-size': size('16 mb', "Largest answer read from Flink's JobManager (a job's exception history: up to 16 failures with their concurrent ones and stack traces); past it the call fails with an error naming this key.", 64 * 1024),
  'cluster.resource-blocklist.detector.evacuate-decommissioning': bool(false, 'Evacuate a node YARN is decommissioning ahead of YARN\'s own timeout (an EVACUATE item that does not count toward the automatic-block cap).'),
  'cluster.resource-blocklist.yarn.ssl.ca-file': str('', 'PEM CA bundle trusted for https:// RM and AMRM proxy addresses (only these CAs). Empty = the system roots.'),
  // --- Kerberos to the RM (Flink's own key names) ---
  'security.kerberos.login.keytab': str('', 'Keytab the sidecar logs in from (Kerberos/SPNEGO to the RM REST API; SASL to ZooKeeper with store.zookeeper.sasl.enabled). Set together with security.kerberos.login.principal; empty = no Kerberos (simple auth).'),
  'security.kerberos.login.principal': str('', "Kerberos principal in the keytab, e.g. 'blocklist/host.example.com@EXAMPLE.COM'. The RM is reached as HTTP/<rm-host>@REALM."),
  'security.kerberos.krb5-conf.path': str('', 'krb5.conf naming the realm and its KDCs (sets KRB5_CONFIG for the sidecar). Empty = the system default (/etc/krb5.conf).'),
} as const;

export type KeyName = keyof typeof KEYS;
export type ConfigValues = { [K in KeyName]: (typeof KEYS)[K] extends KeyDef<infer T> ? T : never };

export function isKey(k: string): k is KeyName {
  return Object.prototype.hasOwnProperty.call(KEYS, k);
}

/** BLOCKLIST_ + the key in upper case with '.' and '-' as '_': rest.port → BLOCKLIST_REST_PORT. */
export function envName(key: string): string {
  return `BLOCKLIST_${key.toUpperCase().replace(/[.-]/g, '_')}`;
}
