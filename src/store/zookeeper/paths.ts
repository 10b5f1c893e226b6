/**
 * Where the ZooKeeper store keeps things (docs/zookeeper.md draws the tree):
 *
 *   <chroot><root>            e.g. /flink-blocklist
 *   <chroot><root>/items      no data; every write also does setData on it in the same multi,
 *                             so its mzxid is the change marker (and its watch the change feed)
 *   <chroot><root>/items/<encoded id>   data: codec.ts JSON of one item
 *   <chroot><root>/records/<key>        data: a named record (BlocklistStore.writeRecord), UTF-8
 *   <chroot><root>/clock                every sidecar's clock probe: its mtime is the store's time
 *                                       (zookeeper/clock.ts); data: the last writer's local time
 *
 * Item ids may contain '/' (task managers are `node/container_…`), which ZooKeeper would read as a
 * path separator, so a child is named encodeURIComponent(id); '.' and '..' (illegal znode names)
 * are escaped further.
 */

export interface ZkAddress {
  /** host:port[,host:port…] as the client connects. */
  hosts: string;
  /** The chroot from the connect string ('' for none), e.g. '/prod'. */
  chroot: string;
}

/** Splits `host:port,host:port/chroot` like ZooKeeper's ConnectStringParser. */
export function parseConnectString(quorum: string): ZkAddress {
  const q = quorum.trim();
  if (!q) throw new Error('cluster.resource-blocklist.store.zookeeper.quorum is empty; set it to host:port[,host:port…][/chroot]');
  const slash = q.indexOf('/');
  const hosts = slash < 0 ? q : q.slice(0, slash);
  const chroot = slash < 0 ? '' : normalizePath(q.slice(slash), 'chroot in cluster.resource-blocklist.store.zookeeper.quorum');
  for (const h of hosts.split(',')) {
    if (!/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(h.trim())) {
      throw new Error(`cluster.resource-blocklist.store.zookeeper.quorum: '${h}' is not host:port`);
    }
  }
  return { hosts, chroot: chroot === '/' ? '' : chroot };
}

/** '/a/b' form: leading slash, no trailing slash, no empty, '.' or '..' segments. */
export function normalizePath(p: string, what: string): string {
  const t = p.trim();
  if (!t.startsWith('/')) throw new Error(`${what}: '${p}' must start with '/'`);
  if (t === '/') return '/';
  const parts = t.replace(/\/+$/, '').split('/').slice(1);
  if (parts.some((s) => s === '' || s === '.' || s === '..')) throw new Error(`${what}: '${p}' has an empty, '.' or '..' segment`);
  return '/' + parts.join('/');
}

export class ZkLayout {
  /** The store's base znode (chroot + root); never ends in '/'. */
  readonly base: string;
  /** Parent of the items; its data version is the change marker. */
  readonly items: string;

  constructor(chroot: string, root: string) {
    const r = normalizePath(root, 'cluster.resource-blocklist.store.zookeeper.root');
    this.base = (chroot + (r === '/' ? '' : r)) || '';
    this.items = `${this.base}/items`;
  }

  /** The base's ancestors and itself, then items: what must exist before the store works. */
  skeleton(): string[] {
    const out: string[] = [];
    let acc = '';
    for (const seg of this.base.split('/').slice(1)) {
      acc += '/' + seg;
      out.push(acc);
    }
    out.push(this.items);
    return out;
  }

  /** Parent of the named records (created on the first write). */
  get records(): string {
    return `${this.base}/records`;
  }

  /** The znode whose setData answers with the store's time (zookeeper/clock.ts). */
  get clock(): string {
    return `${this.base}/clock`;
  }

  recordPath(key: string): string {
    return `${this.records}/${encodeId(key)}`;
  }

  itemPath(id: string): string {
    return `${this.items}/${encodeId(id)}`;
  }
}

export function encodeId(id: string): string {
  const e = encodeURIComponent(id);
  // encodeURIComponent leaves '.' alone; ZooKeeper refuses the names '.' and '..'.
  return e === '.' || e === '..' ? e.replace(/\./g, '%2E') : e;
}

/** The id of a child name, or undefined for a name this store did not write. */
export function decodeId(name: string): string | undefined {
  try {
    const id = decodeURIComponent(name);
    return encodeId(id) === name ? id : undefined;
  } catch {
    return undefined;
  }
}

/** `cluster.resource-blocklist.store.zookeeper.auth` ('user:password'; '' = none) as digest credentials. */
export function parseAuth(auth: string | undefined): { user: string; password: string } | undefined {
  if (!auth) return undefined;
  const i = auth.indexOf(':');
  if (i <= 0 || i === auth.length - 1) throw new Error("cluster.resource-blocklist.store.zookeeper.auth must be 'user:password'");
  return { user: auth.slice(0, i), password: auth.slice(i + 1) };
}
