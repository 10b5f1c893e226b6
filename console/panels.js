// What the console shows: read-only panels, drawn from /status, /blocklist, /detector and /ui/links.
import { html, useEffect, useRef, useState } from './vendor/preact-htm.js';
import { NODE_STATE_ORDER, absolute, blacklistRows, byRack, nodeStates, relative, span } from './format.js';
import { chartGeometry, evacuationProgress, nodePageUrl, taskManagerUrl, towardBlock } from './figures.js';
import { Ext, Fold, When } from './bits.js';

/**
 * Rows the store cannot decode: never enforced, never expired, so only a removal (DELETE on the
 * item's path) makes them go; an admin gets a button per row, confirmed like any other removal.
 */
function Quarantined({ rows, admin, onRemove }) {
  const n = rows.length;
  return html`<div class="banner error" id="quarantined">
    <p>${n} stored item${n === 1 ? '' : 's'} cannot be read and ${n === 1 ? 'is' : 'are'} not enforced (quarantined). Remove ${n === 1 ? 'it' : 'them'} here, with <code>blocklist unblock ID</code> or DELETE, or repair the store by hand.</p>
    <ul>${rows.map((q) => html`<li key=${q.id} data-id=${q.id}><code>${q.id}</code> ${q.reason}${admin ? html` <button class="remove-quarantined danger" onClick=${() => onRemove(q)}>Remove</button>` : null}</li>`)}</ul>
  </div>`;
}

export function Header({ session, status, links, now, error, fetchedAt, onLogout, onRemoveQuarantined }) {
  const synced = status?.lastSuccessfulSync;
  const stale = fetchedAt && Date.now() - fetchedAt > 10_000;
  return html`
    <header class="top">
      <h1>Blocklist</h1>
      <span class="app" title="application / attempt">${status?.applicationId ? html`<${Ext} href=${links?.application} cls="app-link" title="the application in the ResourceManager's web UI">${status.applicationId}<//>` : 'no application yet'}${status?.appAttemptId ? html` <span class="muted attempt">${status.appAttemptId}</span>` : null}</span>
      <span class="out">${links?.flink ? html`<${Ext} href=${links.flink} cls="flink-link">Flink<//>` : null}${links?.rm ? html`<${Ext} href=${`${links.rm}/cluster/nodes`} cls="rm-link" title="the ResourceManager's node list">YARN nodes<//>` : null}</span>
      <span class="sync" id="last-sync">last sync ${synced ? html`<${When} at=${synced} now=${now} />` : html`<strong>never</strong>`}</span>
      <span class="who">${session.name} <span class=${`role ${session.role}`}>${session.role}</span>${onLogout ? html` <button class="link" id="logout" onClick=${onLogout}>sign out</button>` : null}</span>
      ${status && !status.enabled ? html`<p class="banner warn">Enforcement is off (cluster.resource-blocklist.enabled: false): nothing is pushed to YARN.</p>` : null}
      ${status?.storeDegraded ? html`<p class="banner error">The blocklist store is unreachable: the last good snapshot is enforced.</p>` : null}
      ${status?.lastError ? html`<p class="banner warn" id="last-error">Last error: <${Fold} text=${status.lastError} max=${110} /></p>` : null}
      ${status?.quarantined?.length ? html`<${Quarantined} rows=${status.quarantined} admin=${session.role === 'admin'} onRemove=${onRemoveQuarantined} />` : null}
      ${error ? html`<p class="banner error" role="alert">Cannot refresh: ${error}</p>` : stale ? html`<p class="banner warn">Data is older than 10 s.</p>` : null}
    </header>`;
}

function Tile({ name, figure, label, sub, alarm, onClick, children }) {
  return html`<li class=${`tile${alarm ? ' alarm' : ''}`} data-tile=${name}>
    <button class="tile-button" onClick=${onClick} disabled=${!onClick} title=${onClick ? 'show these in the blocklist' : ''}>
      <span class="figure" data-figure=${name}>${figure}</span> <span class="label">${label}</span>
    </button>
    <span class="sub">${sub}</span>${children}
  </li>`;
}

/** The header's tiles: what is blocked, held back, moving, automatic, wrong; a click filters the list. */
export function SummaryTiles({ tiles, onFilter }) {
  const { blocked, deferred, evacuating, automatic, unknown, pending } = tiles;
  const cap = deferred.cap;
  const moved = evacuating.released;
  const known = evacuating.left + evacuating.released;
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  return html`<section class="panel wide tiles-panel" id="summary" aria-label="summary">
    <ul class="tiles">
      <${Tile} name="blocked" figure=${blocked.nodes} label=${blocked.nodes === 1 ? 'node or rack blocked' : 'nodes and racks blocked'}
        sub=${`${blocked.onYarn} on YARN's blacklist${blocked.taskManagers ? `, ${plural(blocked.taskManagers, 'task manager', 'task managers')}` : ''}`} onClick=${() => onFilter('')} />
      <${Tile} name="deferred" figure=${deferred.items} label="deferred by the cap" alarm=${deferred.items > 0}
        sub=${cap ? `cap: ${cap.used} of at most ${cap.limit} (${cap.running} RUNNING nodes)` : 'cap not known yet'} onClick=${deferred.items ? () => onFilter('deferred') : undefined}>
        ${cap ? html`<meter class="cap-meter" min="0" max=${Math.max(cap.limit, 1)} value=${cap.used} high=${Math.max(cap.limit, 1)} aria-label=${`safety cap: ${cap.used} of ${cap.limit}`}></meter>` : null}
      <//>
      <${Tile} name="evacuating" figure=${evacuating.nodes} label="evacuating" alarm=${false}
        sub=${evacuating.nodes ? `${moved} of ${known} containers moved, ${evacuating.left} left` : 'nothing moving'} onClick=${evacuating.nodes ? () => onFilter('evacuating') : undefined}>
        ${evacuating.nodes ? html`<progress class="evac-total" max=${Math.max(known, 1)} value=${moved} aria-label=${`${moved} of ${known} containers moved`}></progress>` : null}
      <//>
      <${Tile} name="automatic" figure=${automatic.items} label="automatic" sub=${automatic.mode === 'off' ? 'detector off' : `detector ${automatic.mode}${automatic.cap ? `, ${automatic.cap.inUse} of at most ${automatic.cap.max}` : ''}`} />
      <${Tile} name="unknown" figure=${unknown.items} label=${unknown.items === 1 ? 'unknown host' : 'unknown hosts'} alarm=${unknown.items > 0}
        sub=${unknown.first ? `${unknown.first.id}${unknown.first.nearest.length ? `: ${unknown.first.nearest[0]}?` : ''}` : 'every host is one YARN knows'} onClick=${unknown.items ? () => onFilter('unknown-host') : undefined} />
      <${Tile} name="pending" figure=${pending.items} label="not yet on YARN" alarm=${pending.items > 0}
        sub=${pending.items ? (pending.lastError ? 'the last pass failed (see above)' : 'being pushed') : 'YARN has every block'} onClick=${pending.items ? () => onFilter('pending') : undefined} />
    </ul>
  </section>`;
}

const SERIES_STYLE = [
  ['blocked', 'blocked nodes', '#d64541', ''],
  ['evacuating', 'evacuating', '#e0531f', '4 3'],
  ['deferred', 'deferred', '#9b6bd1', '1 3'],
];

/** Follows the width of an element (the chart is drawn at its real size, so its text stays readable). */
function useWidth(initial) {
  const ref = useRef(null);
  const [width, setWidth] = useState(initial);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return undefined;
    const ro = new ResizeObserver(([e]) => setWidth(Math.max(200, Math.floor(e.contentRect.width))));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

/** Blocked and evacuating nodes over the sidecar's history ring (/ui/history), as an SVG step chart. */
export function HistoryChart({ history, now }) {
  const [ref, width] = useWidth(560);
  const height = 170;
  const points = history?.points ?? [];
  const g = chartGeometry(points, width, height);
  const last = points[points.length - 1];
  const since = points.length ? points[0].t : undefined;
  const label = last ? `Blocked nodes ${last.blocked}, evacuating ${last.evacuating}, deferred ${last.deferred}${since !== undefined ? ` over the last ${span(now - since)}` : ''}` : 'no samples yet';
  return html`<section class="panel" id="history">
    <h2>Over time <span class="count">${since !== undefined ? `since ${absolute(since)}` : ''}</span></h2>
    <div class="chart" ref=${ref}>
      <svg width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`} role="img" aria-label=${label} data-points=${points.length}>
        <title>${label}</title>
        ${g.yTicks.map((t) => html`<g key=${`y${t.v}`}><line x1=${g.pad.left} x2=${width - g.pad.right} y1=${t.y} y2=${t.y} stroke="#dde1e6" /><text x=${g.pad.left - 6} y=${t.y + 4} text-anchor="end" class="tick">${t.v}</text></g>`)}
        ${g.xTicks.map((t) => html`<text key=${`x${t.t}`} x=${t.x} y=${height - 6} text-anchor="middle" class="tick">${t.label}</text>`)}
        ${SERIES_STYLE.map(([k, , color, dash]) => (g.lines[k] ? html`<polyline key=${k} class=${`line-${k}`} points=${g.lines[k]} fill="none" stroke=${color} stroke-width="2" stroke-dasharray=${dash} />` : null))}
      </svg>
    </div>
    <ul class="chart-legend">${SERIES_STYLE.map(([k, name, color, dash]) => html`<li key=${k} data-series=${k}><svg width="22" height="8" aria-hidden="true"><line x1="0" x2="22" y1="4" y2="4" stroke=${color} stroke-width="2" stroke-dasharray=${dash} /></svg> ${name} <strong>${last ? last[k] : '—'}</strong></li>`)}</ul>
    ${points.length < 3 ? html`<p class="muted">The sidecar samples these every ${span(history?.intervalMs ?? 60_000)}: the chart fills as it runs (it starts empty after a restart; Prometheus keeps the long history).</p>` : null}
  </section>`;
}

export function YarnPanel({ status, now }) {
  const owners = status.blacklist.owners ?? status.owners;
  const ownerEntries = owners && typeof owners === 'object' ? Object.entries(owners) : [];
  const ours = status.blacklist.owner ?? 'blocklist';
  const rows = blacklistRows(status.blacklist.desired, status.blacklist.actual, owners, ours);
  const cap = status.safetyCap;
  const pending = status.pending;
  return html`
    <section class="panel" id="yarn">
      <h2>YARN</h2>
      <dl class="facts">
        <dt>application</dt><dd id="app-id">${status.applicationId ?? '—'}</dd>
        <dt>attempt</dt><dd>${status.appAttemptId ?? '—'}</dd>
        <dt>last successful sync</dt><dd>${status.lastSuccessfulSync ? html`<${When} at=${status.lastSuccessfulSync} now=${now} />` : 'never'}</dd>
        <dt>safety cap</dt>
        <dd id="safety-cap">${cap
          ? html`<strong>${cap.blockedRunningNodes} of ${cap.runningNodes}</strong> RUNNING nodes blacklisted (at most ${cap.limit}, max-blocked-fraction ${cap.maxBlockedFraction})${status.deferred.length ? html`; <span class="s-deferred-text">${status.deferred.length} deferred</span>` : null}`
          : 'not known yet (no pass has read the nodes)'}</dd>
        ${pending.additions.length || pending.removals.length || pending.releases.length
          ? html`<dt>pending</dt><dd>${[pending.additions.length ? `add ${pending.additions.join(', ')}` : '', pending.removals.length ? `remove ${pending.removals.join(', ')}` : '', pending.releases.length ? `release ${pending.releases.length} container(s)` : ''].filter(Boolean).join('; ')}</dd>`
          : null}
      </dl>
      <h3>Blacklist: desired vs actual</h3>
      ${rows.length === 0
        ? html`<p class="empty">Both empty.</p>`
        : html`<div class="scroll"><table class="blacklist" id="blacklist-diff">
            <thead><tr><th>host</th><th>desired</th><th>on YARN</th><th></th></tr></thead>
            <tbody>${rows.map((r) => {
              const note = r.diff === 'add' ? 'to add' : r.diff === 'remove' ? 'to remove' : '';
              return html`<tr key=${r.host} class=${r.diff ? 'diff' : ''} data-host=${r.host} data-diff=${r.diff}><td>${r.host}</td><td>${r.desired ? '✓' : ''}</td><td>${r.actual ? '✓' : ''}</td>
                <td><span class="diff-note">${note}</span>${r.others.length ? html` <span class="muted">held by ${r.others.join(', ')}</span>` : null}</td></tr>`;
            })}</tbody>
          </table></div>`}
      ${ownerEntries.length
        ? html`<h3>Owners of the AM's blacklist</h3>
          <ul class="owners" id="owners">${ownerEntries.map(([owner, hosts]) => html`<li key=${owner}><strong>${owner}</strong>${owner === ours ? ' (this sidecar)' : ''}: ${Array.isArray(hosts) && hosts.length ? hosts.join(', ') : 'none'}</li>`)}</ul>`
        : null}
    </section>`;
}

const PHASE_WORDS = {
  WAIT_CONTAINER: 'waiting for its containers to end',
  CHECKPOINTING: 'taking a checkpoint before the release',
  RELEASING: 'releasing its containers',
  TIMEOUT: 'deadline reached: containers released',
  READY: 'done: nothing of the job left there',
};

function Deadline({ e, p, now }) {
  if (p.deadline === undefined) return html`<span class="deadline never">no deadline: waits for its containers</span>`;
  if (e.phase === 'READY') return html`<span class="deadline">deadline was ${absolute(p.deadline)}</span>`;
  const text = p.deadline > now ? `deadline in ${span(p.deadline - now)}` : `deadline reached ${span(now - p.deadline)} ago`;
  return html`<span class=${`deadline countdown${p.overdue ? ' overdue' : ''}`}>${text} <span class="abs">${absolute(p.deadline)}</span></span>`;
}

function Containers({ ids, links, label }) {
  if (!ids.length) return null;
  return html`<details class="fold containers"><summary>${ids.length} ${label}</summary>
    <ul>${ids.map((c) => html`<li key=${c}><code>${c}</code> <${Ext} href=${taskManagerUrl(links, c)} cls="tm-link" title="this TaskManager in Flink's web UI">Flink<//></li>`)}</ul>
  </details>`;
}

/** Every evacuation as a card: phase and why, containers moved (a progress bar), the deadline counting down. */
export function EvacuationsPanel({ status, links, now }) {
  const list = [...status.evacuations].sort((a, b) => (a.phase === 'READY') - (b.phase === 'READY') || (a.deadline ?? Infinity) - (b.deadline ?? Infinity));
  const active = list.filter((e) => e.phase !== 'READY').length;
  return html`
    <section class="panel" id="evacuations">
      <h2>Evacuations <span class="count">${active} active</span></h2>
      ${list.length === 0
        ? html`<p class="empty">No node is being evacuated.</p>`
        : html`<ul class="evacs">${list.map((e) => {
            const p = evacuationProgress(e, now);
            const why = e.why ?? e.detail;
            return html`<li key=${e.itemId} class="evac" data-item=${e.itemId} data-phase=${e.phase}>
              <div class="evac-head">
                <${Ext} href=${nodePageUrl(links, e.node)} cls="node-link" title="the node's NodeManager page">${e.itemId}<//>
                <span class=${`badge p-${e.phase}`}>${e.phase}</span>
                <span class="muted phase-words">${why ?? PHASE_WORDS[e.phase] ?? ''}</span>
              </div>
              <div class="bar-row">
                <progress class="moved" max=${Math.max(p.total, 1)} value=${p.moved} aria-label=${`${e.itemId}: ${p.moved} of ${p.total} containers moved`}></progress>
                <span class="bar-text" data-left=${p.left}>${e.phase === 'READY' ? `none left (${p.released} released)` : `${p.moved} of ${p.total} moved, ${p.left} left`}</span>
              </div>
              ${p.timeFraction !== undefined
                ? html`<div class="bar-row"><progress class=${`grace${p.overdue ? ' overdue' : ''}`} max="100" value=${Math.round(p.timeFraction * 100)} aria-label=${`${e.itemId}: grace period used`}></progress> <${Deadline} e=${e} p=${p} now=${now} /></div>`
                : html`<div class="bar-row"><${Deadline} e=${e} p=${p} now=${now} /></div>`}
              <${Containers} ids=${e.containers} links=${links} label=${e.containers.length === 1 ? 'container left' : 'containers left'} />
              <${Containers} ids=${e.released} links=${links} label="released" />
            </li>`;
          })}</ul>`}
    </section>`;
}

const STATE_LABEL = { evacuating: 'evacuating', blocked: 'blocked', pending: 'pending', deferred: 'deferred', unhealthy: 'not RUNNING in YARN', ok: 'ok' };

export function NodeGrid({ status, items }) {
  const nodes = status.nodes?.list ?? [];
  if (!nodes.length) {
    return html`<section class="panel" id="nodes"><h2>Nodes</h2><p class="empty">The cluster's nodes are not known yet.</p></section>`;
  }
  const states = nodeStates(status, items);
  const counts = Object.fromEntries(NODE_STATE_ORDER.map((s) => [s, 0]));
  for (const s of states.values()) counts[s]++;
  return html`
    <section class="panel" id="nodes">
      <h2>Nodes <span class="count">${nodes.length}</span></h2>
      <ul class="legend">${NODE_STATE_ORDER.map((s) => html`<li key=${s}><span class=${`dot n-${s}`}></span>${STATE_LABEL[s]} <strong data-count=${s}>${counts[s]}</strong></li>`)}</ul>
      ${byRack(nodes).map((r) => html`<div class="rack" key=${r.rack}>
        <div class="rack-name">${r.rack}</div>
        <div class="grid">${r.nodes.map((n) => {
          const s = states.get(n.host) ?? 'ok';
          const label = `${n.host}: ${STATE_LABEL[s]} (YARN ${n.state})`;
          return html`<span key=${n.host} class=${`node n-${s}`} data-host=${n.host} data-state=${s} title=${label} role="img" aria-label=${label}></span>`;
        })}</div>
      </div>`)}
    </section>`;
}

/** Decisions that only say what enforce mode would do. */
const SHADOW_DECISIONS = new Set(['would-block', 'shadow-blocked']);

/**
 * The detector (GET /detector): its mode, sources and automatic-block cap, then one row per host
 * with incidents: how far toward a block (and what its incidents count for), the decision and why, the latest evidence. Shadow
 * decisions (what enforce mode would do) are marked as such. Hidden when the detector is off.
 */
export function DetectorPanel({ detector, links, now }) {
  const report = detector.report ?? undefined;
  const hosts = Array.isArray(report?.hosts) ? report.hosts : Array.isArray(detector.hosts) ? detector.hosts : [];
  const shadowMode = (report?.mode ?? detector.mode) === 'shadow';
  const sources = Array.isArray(detector.sources) ? detector.sources : [];
  const cap = report?.cap;
  const jobFaults = Array.isArray(report?.jobFaults) ? report.jobFaults : [];
  // Which sidecar of the job runs the detector (one per job; the others stand by).
  const runner = detector.runner && typeof detector.runner === 'object' ? detector.runner : undefined;
  return html`
    <section class="panel wide" id="detector">
      <h2>Detector <span class=${`badge m-${detector.mode}`} data-mode=${detector.mode}>${detector.mode}</span></h2>
      ${shadowMode ? html`<p class="muted">Shadow mode: decisions are shown, nothing is blocked.</p>` : null}
      <dl class="facts">
        <dt>last pass</dt><dd>${detector.lastPassAt ? html`<${When} at=${detector.lastPassAt} now=${now} />` : 'not yet'}</dd>
        ${runner?.role === 'runner' || runner?.role === 'standby'
          ? html`<dt>runs on</dt><dd data-runner=${runner.role}>${runner.role === 'runner' ? 'this sidecar' : html`another sidecar of the job: ${runner.holder?.member ?? '?'} <span class="muted">(this one stands by)</span>`}${Number.isFinite(runner.holder?.until) ? html` <span class="abs">lease until ${absolute(runner.holder.until)}</span>` : null}</dd>`
          : null}
        ${detector.lastError ? html`<dt>last error</dt><dd class="error-text"><${Fold} text=${detector.lastError} max=${90} /></dd>` : null}
        ${cap ? html`<dt>automatic blocks</dt><dd>${cap.inUse} of at most ${cap.max}${cap.runningNodes !== null && cap.runningNodes !== undefined ? ` (${cap.runningNodes} RUNNING nodes)` : ''}</dd>` : null}
        ${sources.length
          ? html`<dt>sources</dt><dd>${sources.map((src) => html`<span class="source" key=${src.name}>${src.name}: ${src.failures} failure${src.failures === 1 ? '' : 's'}${src.unattributed ? `, ${src.unattributed} unattributed` : ''}${src.missed ? `, ${src.missed} missed` : ''}${src.lastError ? html` <${Fold} cls="error-text" text=${`(${src.lastError})`} max=${70} />` : ''}</span>`)}</dd>`
          : null}
        ${jobFaults.length ? html`<dt>job faults</dt><dd>${jobFaults.map((j) => html`<span class="source" key=${j.signature}>${j.signature} on ${j.hosts.length} hosts (no host blamed)</span>`)}</dd>` : null}
      </dl>
      ${hosts.length === 0
        ? html`<p class="empty">No incidents.</p>`
        : html`<table class="detector cards">
            <thead><tr><th class="c-host">host</th><th class="c-score">toward a block</th><th class="c-incidents">incidents</th><th class="c-decision">decision</th><th>why</th><th>latest evidence</th></tr></thead>
            <tbody>${hosts.map((h) => {
              const decision = typeof h.decision === 'string' ? h.decision : String(h.decision?.outcome ?? '');
              const shadow = SHADOW_DECISIONS.has(decision) || (shadowMode && decision === 'block');
              const incidents = Array.isArray(h.incidents) ? h.incidents : [];
              const last = incidents[incidents.length - 1];
              const standing = towardBlock(h);
              return html`<tr key=${h.host} data-host=${h.host} data-decision=${decision}>
                <td class="id" data-label="host"><${Ext} href=${nodePageUrl(links, h.host)} cls="node-link">${h.host}<//></td>
                <td data-label="toward a block">${standing.toward}</td>
                <td data-label="incidents">${standing.incidents}</td>
                <td data-label="decision"><span class=${`badge d-${decision}`}>${decision}</span>${shadow ? html` <span class="badge shadow">shadow</span>` : null}</td>
                <td class="cause" data-label="why"><${Fold} text=${h.why ?? ''} max=${60} />${h.block?.end ? html` <span class="abs">block until ${absolute(h.block.end)}</span>` : null}</td>
                <td class="cause evidence" data-label="evidence">${last ? html`<${Fold} text=${incidents.flatMap((i) => i.summaries ?? []).reverse().filter((x, i, a) => a.indexOf(x) === i).join('\n')} max=${60} /> <span class="abs">${Number.isFinite(last.at) ? relative(last.at, now) : ''}, ${incidents.length} incident${incidents.length === 1 ? '' : 's'}</span>` : ''}</td>
              </tr>`;
            })}</tbody>
          </table>`}
    </section>`;
}
