// What the console shows: read-only panels, drawn from /status, /blocklist and /detector.
import { html, useState } from './vendor/preact-htm.js';
import { NODE_STATE_ORDER, absolute, blacklistRows, byRack, endsText, filterItems, nodeStates, relative, sortItems, span, stamp, syncText } from './format.js';

/** Rows drawn at first (and added per "show more"). */
const ROWS = 200;

const ACTION_SHORT = { MARK_BLOCKED: 'block', MARK_BLOCKED_AND_EVACUATE_TASKS: 'block + evacuate' };
const KIND_LABEL = { node: 'node', taskmanager: 'task manager', rack: 'rack' };

function When({ at, now }) {
  if (!Number.isFinite(at)) return html`<span class="muted">—</span>`;
  return html`<span class="when"><span class="rel">${relative(at, now)}</span> <span class="abs">${absolute(at)}</span></span>`;
}

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

export function Header({ session, status, now, error, fetchedAt, onLogout, onRemoveQuarantined }) {
  const synced = status?.lastSuccessfulSync;
  const stale = fetchedAt && Date.now() - fetchedAt > 10_000;
  return html`
    <header class="top">
      <h1>Blocklist</h1>
      <span class="app" title="application / attempt">${status?.applicationId ?? 'no application yet'}${status?.appAttemptId ? html` <span class="muted">${status.appAttemptId}</span>` : null}</span>
      <span class="sync" id="last-sync">last sync ${synced ? html`<${When} at=${synced} now=${now} />` : html`<strong>never</strong>`}</span>
      <span class="who">${session.name} <span class=${`role ${session.role}`}>${session.role}</span>${onLogout ? html` <button class="link" id="logout" onClick=${onLogout}>sign out</button>` : null}</span>
      ${status && !status.enabled ? html`<p class="banner warn">Enforcement is off (cluster.resource-blocklist.enabled: false): nothing is pushed to YARN.</p>` : null}
      ${status?.storeDegraded ? html`<p class="banner error">The blocklist store is unreachable: the last good snapshot is enforced.</p>` : null}
      ${status?.lastError ? html`<p class="banner warn" id="last-error">Last error: ${status.lastError}</p>` : null}
      ${status?.quarantined?.length ? html`<${Quarantined} rows=${status.quarantined} admin=${session.role === 'admin'} onRemove=${onRemoveQuarantined} />` : null}
      ${error ? html`<p class="banner error" role="alert">Cannot refresh: ${error}</p>` : stale ? html`<p class="banner warn">Data is older than 10 s.</p>` : null}
    </header>`;
}

function SyncCell({ item, now }) {
  const t = syncText(item.sync, now);
  return html`<td class="sync-cell" data-label="sync"><span class=${`badge s-${t.state}`} data-state=${t.state}>${t.state}</span>${t.detail ? html` <span class="detail">${t.detail}</span>` : null}</td>`;
}

export function BlocklistPanel({ items, now, admin, loaded, onUnblock, onExtend }) {
  const [filter, setFilter] = useState({ text: '', kind: '', state: '' });
  const [sort, setSort] = useState({ by: 'since', dir: 'desc' });
  const [limit, setLimit] = useState(ROWS);
  const matching = sortItems(filterItems(items, filter), sort.by, sort.dir);
  // A page of rows at a time: thousands of rows redrawn on every poll would make the page crawl.
  const shown = matching.slice(0, limit);
  const states = [...new Set(items.map((i) => i.sync?.state ?? 'unknown'))].sort();
  const head = (key, label) => {
    const active = sort.by === key;
    const next = () => setSort({ by: key, dir: active && sort.dir === 'asc' ? 'desc' : 'asc' });
    return html`<th aria-sort=${active ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}><button class="sort" data-sort=${key} onClick=${next}>${label}${active ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}</button></th>`;
  };
  return html`
    <section class="panel wide" id="blocklist">
      <h2>Blocklist <span class="count">${items.length} item${items.length === 1 ? '' : 's'}</span></h2>
      <div class="filters">
        <input id="filter-text" type="search" placeholder="filter: id, cause, scope, who" value=${filter.text} onInput=${(e) => setFilter({ ...filter, text: e.target.value })} />
        <select id="filter-kind" value=${filter.kind} onChange=${(e) => setFilter({ ...filter, kind: e.target.value })}>
          <option value="">all kinds</option><option value="node">node</option><option value="taskmanager">task manager</option><option value="rack">rack</option>
        </select>
        <select id="filter-state" value=${filter.state} onChange=${(e) => setFilter({ ...filter, state: e.target.value })}>
          <option value="">all states</option>${states.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </div>
      <div class="scroll">
        <table class="items">
          <thead><tr>${head('id', 'id')}${head('kind', 'kind')}${head('action', 'action')}${head('cause', 'cause')}${head('since', 'since')}${head('ends', 'ends')}${head('scope', 'scope')}${head('who', 'who')}${head('sync', 'sync')}${admin ? html`<th><span class="sr">actions</span></th>` : null}</tr></thead>
          <tbody>
            ${shown.map((it) => {
              const ends = endsText(it.endTimestamp, now);
              const who = it.createdBy === it.updatedBy ? it.createdBy : `${it.createdBy}, then ${it.updatedBy}`;
              return html`<tr key=${it.id} data-id=${it.id} data-state=${it.sync?.state ?? 'unknown'}>
                <td class="id">${it.kind === 'taskmanager' ? html`${it.id.split('/')[0]}/<wbr />${it.id.split('/').slice(1).join('/')}` : it.id}</td>
                <td data-label="kind">${KIND_LABEL[it.kind] ?? it.kind}</td>
                <td data-label="action"><span class=${`action a-${it.action === 'MARK_BLOCKED' ? 'block' : 'evacuate'}`} title=${it.action}>${ACTION_SHORT[it.action] ?? it.action}</span></td>
                <td class="cause" data-label="cause">${it.cause}</td>
                <td data-label="since"><${When} at=${stamp(it.startTimestamp)} now=${now} /></td>
                <td class="ends" data-label="ends">${ends.abs ? html`<span class="when"><span class="rel">${ends.rel}</span> <span class="abs">${ends.abs}</span></span>` : html`<span class="never">never</span>`}</td>
                <td class="scope" data-label="scope">${it.scope}</td>
                <td data-label="who" title=${`created from ${it.createdFrom}, last changed from ${it.updatedFrom}`}>${who}</td>
                <${SyncCell} item=${it} now=${now} />
                ${admin ? html`<td class="row-actions">
                  <button class="extend" onClick=${() => onExtend(it)}>Extend</button>
                  <button class="unblock danger" onClick=${() => onUnblock(it)}>Unblock</button>
                </td>` : null}
              </tr>`;
            })}
          </tbody>
        </table>
      </div>
      ${!loaded ? html`<p class="muted">Loading…</p>` : items.length === 0 ? html`<p class="empty">Nothing is blocked.</p>` : matching.length === 0 ? html`<p class="empty">No item matches the filter.</p>` : null}
      ${matching.length > shown.length
        ? html`<p class="more" id="more-rows">Showing ${shown.length} of ${matching.length}${matching.length < items.length ? ' matching' : ''}. <button class="link" onClick=${() => setLimit(limit + ROWS)}>show ${Math.min(ROWS, matching.length - shown.length)} more</button> or narrow the filter.</p>`
        : null}
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

export function EvacuationsPanel({ status, now }) {
  const list = status.evacuations;
  return html`
    <section class="panel" id="evacuations">
      <h2>Evacuations <span class="count">${list.filter((e) => e.phase !== 'READY').length} active</span></h2>
      ${list.length === 0
        ? html`<p class="empty">No node is being evacuated.</p>`
        : html`<div class="scroll"><table class="evac">
            <thead><tr><th>node</th><th>phase</th><th title="the application's containers still on the node">left</th><th title="containers this sidecar asked YARN to release">released</th><th>deadline</th></tr></thead>
            <tbody>${list.map((e) => html`<tr key=${e.itemId} data-item=${e.itemId} data-phase=${e.phase}>
              <td>${e.itemId}</td>
              <td><span class=${`badge p-${e.phase}`}>${e.phase}</span></td>
              <td title=${e.containers.join('\n')}>${e.containers.length}</td>
              <td title=${e.released.join('\n')}>${e.released.length}</td>
              <td>${e.deadline === undefined ? html`<span class="never">none (waits)</span>` : e.phase === 'READY' ? absolute(e.deadline) : html`<span class="rel countdown">${e.deadline > now ? `${span(e.deadline - now)} left` : 'reached'}</span> <span class="abs">${absolute(e.deadline)}</span>`}</td>
            </tr>`)}</tbody>
          </table></div>`}
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
 * with incidents: score against the threshold, the decision and why, the latest evidence. Shadow
 * decisions (what enforce mode would do) are marked as such. Hidden when the detector is off.
 */
export function DetectorPanel({ detector, now }) {
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
        ${detector.lastError ? html`<dt>last error</dt><dd class="error-text">${detector.lastError}</dd>` : null}
        ${cap ? html`<dt>automatic blocks</dt><dd>${cap.inUse} of at most ${cap.max}${cap.runningNodes !== null && cap.runningNodes !== undefined ? ` (${cap.runningNodes} RUNNING nodes)` : ''}</dd>` : null}
        ${sources.length
          ? html`<dt>sources</dt><dd>${sources.map((src) => html`<span class="source" key=${src.name}>${src.name}: ${src.failures} failure${src.failures === 1 ? '' : 's'}${src.unattributed ? `, ${src.unattributed} unattributed` : ''}${src.missed ? `, ${src.missed} missed` : ''}${src.lastError ? html` <span class="error-text">(${src.lastError})</span>` : ''}</span>`)}</dd>`
          : null}
        ${jobFaults.length ? html`<dt>job faults</dt><dd>${jobFaults.map((j) => html`<span class="source" key=${j.signature}>${j.signature} on ${j.hosts.length} hosts (no host blamed)</span>`)}</dd>` : null}
      </dl>
      ${hosts.length === 0
        ? html`<p class="empty">No incidents.</p>`
        : html`<div class="scroll"><table class="detector">
            <thead><tr><th>host</th><th>score</th><th>decision</th><th>why</th><th>latest evidence</th></tr></thead>
            <tbody>${hosts.map((h) => {
              const decision = typeof h.decision === 'string' ? h.decision : String(h.decision?.outcome ?? '');
              const shadow = SHADOW_DECISIONS.has(decision) || (shadowMode && decision === 'block');
              const incidents = Array.isArray(h.incidents) ? h.incidents : [];
              const last = incidents[incidents.length - 1];
              return html`<tr key=${h.host} data-host=${h.host} data-decision=${decision}>
                <td>${h.host}</td>
                <td>${h.score ?? incidents.length}${h.threshold ? ` / ${h.threshold}` : ''}</td>
                <td><span class=${`badge d-${decision}`}>${decision}</span>${shadow ? html` <span class="badge shadow">shadow</span>` : null}</td>
                <td class="cause">${h.why ?? ''}${h.block?.end ? html` <span class="abs">block until ${absolute(h.block.end)}</span>` : null}</td>
                <td class="cause">${last ? html`${(last.summaries ?? []).slice(0, 2).join('; ')} <span class="abs">${Number.isFinite(last.at) ? relative(last.at, now) : ''}, ${incidents.length} incident${incidents.length === 1 ? '' : 's'}</span>` : ''}</td>
              </tr>`;
            })}</tbody>
          </table></div>`}
    </section>`;
}
