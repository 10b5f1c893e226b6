// Pure helpers of the console: time and duration text, sync states. No DOM here (unit-tested in Node).

/** Long.MAX_VALUE as the API writes it: a permanent item. */
export const PERMANENT = '9223372036854775807';

/** "4m 10s", "2h 5m", "3d 4h": the two largest units, for countdowns and ages. */
export function span(ms) {
  let s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const parts = [];
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  if (s || parts.length === 0) parts.push(`${s}s`);
  return parts.slice(0, 2).join(' ');
}

/** "in 4m 10s" / "3h 2m ago", relative to `now` (the sidecar's clock). */
export function relative(at, now) {
  return at >= now ? `in ${span(at - now)}` : `${span(now - at)} ago`;
}

/** An absolute time in UTC, to the second: "2026-11-30 15:04:05Z". */
export function absolute(at) {
  if (!Number.isFinite(at)) return '';
  return new Date(at).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}

/** A wire timestamp (string of digits) as a number; the permanent value as Infinity. */
export function stamp(text) {
  if (text === PERMANENT) return Infinity;
  const n = Number(text);
  return Number.isFinite(n) ? n : NaN;
}

/** "ends" column text: "never" for a permanent item, else relative and absolute. */
export function endsText(endTimestamp, now) {
  const end = stamp(endTimestamp);
  if (end === Infinity) return { rel: 'never', abs: '' };
  return { rel: relative(end, now), abs: absolute(end) };
}

const UNITS = { ms: 1, s: 1000, sec: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration as people type it, Flink style: "90 s", "30 min", "2h", "1 d", "500 ms". A bare number
 * is minutes (the usual unit for a block). Returns milliseconds, or an error text.
 */
export function parseDuration(text) {
  const t = String(text).trim().toLowerCase();
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min|h|d)?$/.exec(t);
  if (!m) return { error: `'${text}' is not a duration: write e.g. 30 min, 2 h, 90 s, 1 d` };
  const ms = Math.round(Number(m[1]) * UNITS[m[2] ?? 'min']);
  if (!(ms > 0)) return { error: 'the duration must be more than 0' };
  return { ms };
}

/** The sync state as one word for the badge, and the words after it. */
export function syncText(sync, now) {
  if (!sync) return { state: 'unknown', detail: '' };
  const e = sync.evacuation;
  if (e && (sync.state === 'evacuating' || sync.state === 'evacuated')) {
    const left = e.containers.length;
    const deadline = e.deadline === undefined ? 'no deadline (waits for the containers)' : e.phase === 'READY' ? `deadline was ${absolute(e.deadline)}` : `deadline ${relative(e.deadline, now)}`;
    return { state: sync.state, detail: `${e.phase}, ${left} container${left === 1 ? '' : 's'} left, ${deadline}` };
  }
  return { state: sync.state, detail: sync.detail ?? '' };
}

/** Items matching a free-text filter (id, cause, scope, who) and the kind/state selectors. */
export function filterItems(items, f) {
  const q = (f.text ?? '').trim().toLowerCase();
  return items.filter(
    (it) =>
      (!f.kind || it.kind === f.kind) &&
      (!f.state || (it.sync?.state ?? 'unknown') === f.state) &&
      (!q || [it.id, it.cause, it.scope, it.createdBy, it.updatedBy].some((v) => String(v ?? '').toLowerCase().includes(q))),
  );
}

const SORT_KEYS = {
  id: (it) => it.id,
  kind: (it) => it.kind,
  action: (it) => it.action,
  cause: (it) => it.cause.toLowerCase(),
  since: (it) => stamp(it.startTimestamp),
  ends: (it) => stamp(it.endTimestamp),
  scope: (it) => it.scope,
  who: (it) => it.updatedBy,
  sync: (it) => it.sync?.state ?? '',
};
export const SORTABLE = Object.keys(SORT_KEYS);

export function sortItems(items, by, dir) {
  const key = SORT_KEYS[by] ?? SORT_KEYS.id;
  const sign = dir === 'desc' ? -1 : 1;
  return [...items].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    const c = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    return c * sign;
  });
}

/**
 * The state of each node for the picture of the cluster, most urgent first: evacuating, blocked
 * (on YARN's blacklist), pending (wanted, not yet there), deferred (held back by the safety cap),
 * unhealthy in YARN (any state but RUNNING), ok.
 */
export function nodeStates(status, items) {
  const out = new Map();
  const actual = new Set(status.blacklist?.actual ?? []);
  const desired = new Set(status.blacklist?.desired ?? []);
  const deferredIds = new Set(status.deferred ?? []);
  const deferredNodes = new Set(items.filter((i) => i.kind === 'node' && deferredIds.has(i.id)).map((i) => i.id));
  const evacuating = new Set((status.evacuations ?? []).filter((e) => e.phase !== 'READY').map((e) => e.node));
  // A node block the engine has not applied yet (e.g. the proxy is down) is pending too.
  const pendingNodes = new Set(items.filter((i) => i.kind === 'node' && i.sync?.state === 'pending').map((i) => i.id));
  // A rack block is on YARN's blacklist as the rack's path (YARN matches a node by host or rack),
  // so its nodes are blocked through their rack.
  const pendingRacks = new Set(items.filter((i) => i.kind === 'rack' && i.sync?.state === 'pending').map((i) => i.id));
  for (const n of status.nodes?.list ?? []) {
    let state = 'ok';
    if (evacuating.has(n.host)) state = 'evacuating';
    else if (actual.has(n.host) || (n.rack && actual.has(n.rack))) state = 'blocked';
    else if (desired.has(n.host) || pendingNodes.has(n.host) || (n.rack && (desired.has(n.rack) || pendingRacks.has(n.rack)))) state = 'pending';
    else if (deferredNodes.has(n.host)) state = 'deferred';
    else if (n.state !== 'RUNNING') state = 'unhealthy';
    out.set(n.host, state);
  }
  return out;
}

export const NODE_STATE_ORDER = ['evacuating', 'blocked', 'pending', 'deferred', 'unhealthy', 'ok'];

/** Nodes grouped by rack (sorted), each rack's hosts sorted; a node without a rack goes under "(no rack)". */
export function byRack(nodes) {
  const racks = new Map();
  for (const n of nodes) {
    const r = n.rack ?? '(no rack)';
    if (!racks.has(r)) racks.set(r, []);
    racks.get(r).push(n);
  }
  return [...racks.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([rack, list]) => ({ rack, nodes: list.sort((a, b) => (a.host < b.host ? -1 : 1)) }));
}

/**
 * Desired vs actual as one sorted list: host, in desired, in actual, the other owners holding it,
 * and the difference still to push ('add' | 'remove' | ''). A host only another owner holds (e.g.
 * Flink's own blocklist) is not ours to remove: no difference.
 */
export function blacklistRows(desired, actual, owners, ours = 'blocklist') {
  const d = new Set(desired);
  const a = new Set(actual);
  const holders = new Map();
  for (const [owner, hosts] of Object.entries(owners ?? {})) {
    if (owner === ours || !Array.isArray(hosts)) continue;
    for (const h of hosts) holders.set(h, [...(holders.get(h) ?? []), owner]);
  }
  const oursKnown = owners && Array.isArray(owners[ours]) ? new Set(owners[ours]) : undefined;
  return [...new Set([...desired, ...actual])].sort().map((host) => {
    const others = holders.get(host) ?? [];
    let diff = '';
    if (d.has(host) && !a.has(host)) diff = 'add';
    else if (!d.has(host) && a.has(host) && (others.length === 0 || oursKnown?.has(host))) diff = 'remove';
    return { host, desired: d.has(host), actual: a.has(host), others, diff };
  });
}
