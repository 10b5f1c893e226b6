// Pure figures of the console: the summary tiles, an evacuation's progress, the chart's geometry,
// ISO times typed by hand, folded texts, links. No DOM here (unit-tested in Node).

/** A node, rack or task manager item that YARN's blacklist (or Flink) should be acting on. */
const ACTIVE_STATES = new Set(['applied', 'pending', 'deferred', 'evacuating', 'evacuated', 'unknown-host']);

/** What the header's tiles say: counts from /blocklist's sync states, /status and /detector. */
export function summaryTiles(status, items, detector) {
  const count = (pred) => items.filter(pred).length;
  const active = (i) => ACTIVE_STATES.has(i.sync?.state ?? '');
  const nodeLike = (i) => i.kind === 'node' || i.kind === 'rack';
  const evacuations = (status?.evacuations ?? []).filter((e) => e.phase !== 'READY');
  let left = 0;
  let released = 0;
  for (const e of evacuations) {
    left += e.containers.length;
    released += e.released.length;
  }
  const cap = status?.safetyCap;
  const unknown = items.filter((i) => i.sync?.state === 'unknown-host');
  const report = detector?.report ?? undefined;
  return {
    blocked: {
      nodes: count((i) => nodeLike(i) && active(i) && i.sync?.state !== 'deferred' && i.sync?.state !== 'unknown-host'),
      onYarn: count((i) => nodeLike(i) && ['applied', 'evacuating', 'evacuated'].includes(i.sync?.state)),
      taskManagers: count((i) => i.kind === 'taskmanager' && i.sync?.state !== 'not-applicable'),
    },
    deferred: { items: count((i) => i.sync?.state === 'deferred'), cap: cap ? { used: cap.blockedRunningNodes, limit: cap.limit, running: cap.runningNodes } : undefined },
    evacuating: { nodes: evacuations.length, left, released },
    automatic: { items: count((i) => typeof i.source === 'string' && i.source.startsWith('detector:')), mode: detector?.mode ?? 'off', cap: report?.cap },
    unknown: { items: unknown.length, first: unknown[0] ? { id: unknown[0].id, nearest: unknown[0].sync?.nearest ?? [] } : undefined },
    pending: { items: count((i) => nodeLike(i) && i.sync?.state === 'pending'), lastError: status?.lastError },
  };
}

/**
 * One evacuation's progress: containers moved off the node (released by the sidecar) of those it
 * knew about, and the grace period used so far. `timeFraction` is undefined when it waits forever.
 */
export function evacuationProgress(e, now) {
  const left = e.containers.length;
  const released = e.released.length;
  const done = e.phase === 'READY';
  const total = Math.max(left + released, done ? 1 : 0);
  const moved = done ? total : released;
  const deadline = Number.isFinite(e.deadline) ? e.deadline : undefined;
  let timeFraction;
  if (deadline !== undefined && Number.isFinite(e.since)) {
    const whole = Math.max(1, deadline - e.since);
    timeFraction = done ? 1 : Math.min(1, Math.max(0, (now - e.since) / whole));
  }
  return { left, released, moved, total, deadline, timeFraction, overdue: deadline !== undefined && !done && now >= deadline && left > 0 };
}

/** Round up to 1, 2 or 5 times a power of ten: the chart's top (at least 1). */
export function niceCeiling(v) {
  if (!(v > 1)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

const SERIES = ['blocked', 'evacuating', 'deferred'];

/**
 * The chart's geometry in pixels: one step line per series (a count holds until the next sample),
 * the y ticks, and the x ticks at whole minutes, hours or so (UTC, as every time on the page).
 */
export function chartGeometry(points, width, height, pad = { left: 34, right: 8, top: 8, bottom: 22 }) {
  const w = Math.max(1, width - pad.left - pad.right);
  const h = Math.max(1, height - pad.top - pad.bottom);
  if (!points.length) return { lines: {}, yTicks: [], xTicks: [], pad, top: 1 };
  const t0 = points[0].t;
  const t1 = Math.max(points[points.length - 1].t, t0 + 60_000);
  const top = niceCeiling(Math.max(...points.flatMap((p) => SERIES.map((s) => p[s] ?? 0))));
  const x = (t) => pad.left + ((t - t0) / (t1 - t0)) * w;
  const y = (v) => pad.top + h - (v / top) * h;
  const lines = {};
  for (const s of SERIES) {
    const parts = [];
    points.forEach((p, i) => {
      const v = p[s] ?? 0;
      if (i > 0) parts.push(`${x(p.t).toFixed(1)},${y(points[i - 1][s] ?? 0).toFixed(1)}`);
      parts.push(`${x(p.t).toFixed(1)},${y(v).toFixed(1)}`);
    });
    lines[s] = parts.join(' ');
  }
  const yTicks = [0, top / 2, top].filter((v, i, a) => Number.isInteger(v) && a.indexOf(v) === i).map((v) => ({ v, y: y(v) }));
  const STEPS = [60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000];
  const step = STEPS.find((s) => (t1 - t0) / s <= 6) ?? STEPS[STEPS.length - 1];
  const xTicks = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) xTicks.push({ t, x: x(t), label: new Date(t).toISOString().slice(11, 16) });
  return { lines, yTicks, xTicks, pad, top };
}

/**
 * A time as typed: ISO 8601 `2026-12-01T18:00Z`, `2026-12-01 18:00:30`, `…+02:00`. Without a zone
 * it is UTC, as every time the page shows. Returns {ms} or {error}.
 */
export function parseIsoTime(text) {
  const t = String(text).trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/i.exec(t);
  if (!m) return { error: `'${text}' is not an ISO time: write e.g. 2026-12-01 18:00Z (UTC unless a zone such as +02:00 is given)` };
  const [, y, mo, d, hh = '00', mi = '00', ss = '00', ms = '0', zone] = m;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(hh), Number(mi), Number(ss), Number(ms.padEnd(3, '0')));
  const back = new Date(utc);
  if (back.getUTCMonth() !== Number(mo) - 1 || back.getUTCDate() !== Number(d) || Number(hh) > 23 || Number(mi) > 59 || Number(ss) > 59) {
    return { error: `'${text}' is not a date and time that exists` };
  }
  let offset = 0;
  if (zone && !/^(Z|UTC)$/i.test(zone)) {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
    offset = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3])) * 60_000;
  }
  return { ms: utc - offset };
}

/** A long text folded to one line: `short` is its first line cut at `max` characters. */
export function fold(text, max = 72) {
  const s = String(text ?? '');
  const first = s.split('\n')[0];
  if (first.length <= max && first === s) return { short: s, folded: false };
  return { short: `${first.length > max ? first.slice(0, max - 1).trimEnd() : first}…`, folded: true };
}

/** A NodeManager's own page (the one the RM's node list links to), or undefined when not known. */
export function nodePageUrl(links, host) {
  const p = links?.nodePage;
  return p && host ? `${p.scheme}://${host}:${p.port}/node` : undefined;
}

/** Flink's page of one TaskManager (on YARN its id is the container id). */
export function taskManagerUrl(links, containerId) {
  return links?.flink && containerId ? `${links.flink}#/task-manager/${encodeURIComponent(containerId)}/metrics` : undefined;
}

const INCIDENT_WORDS = { counted: 'counting', consumed: 'spent by a block', forgiven: 'forgiven by an unblock', 'job-fault': "the job's fault" };

/**
 * A detector host's standing, said as `blocklist detector` says it: a block spends the incidents
 * that made it, so a host just blocked counts "0 of 3" toward the next block while its 3 incidents
 * are still listed ("3: 3 spent by a block"), not a bare "0 / 3" beside "blocked".
 */
export function towardBlock(h) {
  const incidents = Array.isArray(h?.incidents) ? h.incidents : [];
  const score = Number.isFinite(h?.score) ? h.score : incidents.filter((i) => i.status === 'counted').length;
  const by = new Map();
  for (const i of incidents) by.set(i.status, (by.get(i.status) ?? 0) + 1);
  const parts = Object.keys(INCIDENT_WORDS).filter((s) => by.has(s)).map((s) => `${by.get(s)} ${INCIDENT_WORDS[s]}`);
  return { toward: Number.isFinite(h?.threshold) && h.threshold > 0 ? `${score} of ${h.threshold}` : String(score), incidents: parts.length ? `${incidents.length}: ${parts.join(', ')}` : String(incidents.length) };
}
