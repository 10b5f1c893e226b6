// The blocklist: one row per item, filtered, sorted and drawn a page at a time. Six columns that
// wrap within the panel (never a scroll sideways); on a phone each row is a card.
import { html, useState } from './vendor/preact-htm.js';
import { endsText, filterItems, sortItems, stamp, syncText } from './format.js';
import { nodePageUrl, taskManagerUrl } from './figures.js';
import { Ext, Fold, When } from './bits.js';

/** Rows drawn at first (and added per "show more"). */
const ROWS = 200;

const ACTION_SHORT = { MARK_BLOCKED: 'block', MARK_BLOCKED_AND_EVACUATE_TASKS: 'block + evacuate' };
const KIND_LABEL = { node: 'node', taskmanager: 'task manager', rack: 'rack' };

function ItemCell({ it, links }) {
  const [host, ...rest] = it.id.split('/');
  const container = it.kind === 'taskmanager' ? rest.join('/') : undefined;
  return html`<td class="id" data-label="item">
    ${it.kind === 'rack'
      ? html`<span class="item-id">${it.id}</span>`
      : html`<${Ext} href=${nodePageUrl(links, host)} cls="item-id node-link" title="the node's NodeManager page">${host}<//>`}
    ${container ? html`<span class="container">/<wbr />${container} <${Ext} href=${taskManagerUrl(links, container)} cls="tm-link" title="this TaskManager in Flink's web UI">Flink<//></span>` : null}
    <span class="item-meta"><span class="kind" data-kind=${it.kind}>${KIND_LABEL[it.kind] ?? it.kind}</span>${it.scope !== 'cluster' ? html` · <span class="scope">${it.scope}</span>` : null}${it.source?.startsWith('detector:') ? html` · <span class="badge auto">automatic</span>` : null}</span>
  </td>`;
}

function TimeCell({ it, now }) {
  const ends = endsText(it.endTimestamp, now);
  const who = it.createdBy === it.updatedBy ? it.createdBy : `${it.createdBy}, then ${it.updatedBy}`;
  return html`<td class="ends" data-label="ends">
    ${ends.abs ? html`<span class="when"><span class="rel">ends ${ends.rel}</span> <span class="abs">${ends.abs}</span></span>` : html`<span class="never">never ends</span>`}
    <span class="since">since <${When} at=${stamp(it.startTimestamp)} now=${now} /></span>
    <span class="who" title=${`created from ${it.createdFrom}, last changed from ${it.updatedFrom}`}>by ${who}</span>
  </td>`;
}

function SyncCell({ item, now }) {
  const t = syncText(item.sync, now);
  return html`<td class="sync-cell" data-label="sync"><span class=${`badge s-${t.state}`} data-state=${t.state}>${t.state}</span>${t.detail ? html` <${Fold} cls="detail" text=${t.detail} max=${48} />` : null}</td>`;
}

function Row({ it, now, admin, links, onUnblock, onExtend }) {
  return html`<tr key=${it.id} data-id=${it.id} data-state=${it.sync?.state ?? 'unknown'}>
    <${ItemCell} it=${it} links=${links} />
    <td data-label="action"><span class=${`action a-${it.action === 'MARK_BLOCKED' ? 'block' : 'evacuate'}`} title=${it.action}>${ACTION_SHORT[it.action] ?? it.action}</span></td>
    <td class="cause" data-label="cause"><${Fold} text=${it.cause} max=${64} /></td>
    <${TimeCell} it=${it} now=${now} />
    <${SyncCell} item=${it} now=${now} />
    ${admin ? html`<td class="row-actions">
      <button class="extend" onClick=${() => onExtend(it)}>Extend</button>
      <button class="unblock danger" onClick=${() => onUnblock(it)}>Unblock</button>
    </td>` : null}
  </tr>`;
}

function Filters({ filter, setFilter, states }) {
  return html`<div class="filters">
    <input id="filter-text" type="search" placeholder="filter: id, cause, scope, who" aria-label="filter" value=${filter.text} onInput=${(e) => setFilter({ ...filter, text: e.target.value })} />
    <select id="filter-kind" aria-label="kind" value=${filter.kind} onChange=${(e) => setFilter({ ...filter, kind: e.target.value })}>
      <option value="">all kinds</option><option value="node">node</option><option value="taskmanager">task manager</option><option value="rack">rack</option>
    </select>
    <select id="filter-state" aria-label="sync state" value=${filter.state} onChange=${(e) => setFilter({ ...filter, state: e.target.value })}>
      <option value="">all states</option>${states.map((s) => html`<option value=${s}>${s}</option>`)}
    </select>
  </div>`;
}

export function BlocklistPanel({ items, now, admin, loaded, links, filter, setFilter, onUnblock, onExtend }) {
  const [sort, setSort] = useState({ by: 'since', dir: 'desc' });
  const [limit, setLimit] = useState(ROWS);
  const matching = sortItems(filterItems(items, filter), sort.by, sort.dir);
  // A page of rows at a time: thousands of rows redrawn on every poll would make the page crawl.
  const shown = matching.slice(0, limit);
  const states = [...new Set([...items.map((i) => i.sync?.state ?? 'unknown'), ...(filter.state ? [filter.state] : [])])].sort();
  const head = (key, label, cls) => {
    const active = sort.by === key;
    const next = () => setSort({ by: key, dir: active && sort.dir === 'asc' ? 'desc' : 'asc' });
    return html`<th class=${cls} aria-sort=${active ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}><button class="sort" data-sort=${key} onClick=${next}>${label}${active ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}</button></th>`;
  };
  return html`
    <section class="panel wide" id="blocklist">
      <h2>Blocklist <span class="count">${items.length} item${items.length === 1 ? '' : 's'}</span></h2>
      <${Filters} filter=${filter} setFilter=${setFilter} states=${states} />
      <table class=${`items cards${admin ? ' with-actions' : ''}`}>
        <thead><tr>${head('id', 'item', 'c-item')}${head('action', 'action', 'c-action')}${head('cause', 'cause', 'c-cause')}${head('ends', 'ends', 'c-ends')}${head('sync', 'sync', 'c-sync')}${admin ? html`<th class="c-actions"><span class="sr">actions</span></th>` : null}</tr></thead>
        <tbody>${shown.map((it) => html`<${Row} key=${it.id} it=${it} now=${now} admin=${admin} links=${links} onUnblock=${onUnblock} onExtend=${onExtend} />`)}</tbody>
      </table>
      ${!loaded ? html`<p class="muted">Loading…</p>` : items.length === 0 ? html`<p class="empty">Nothing is blocked.</p>` : matching.length === 0 ? html`<p class="empty">No item matches the filter.</p>` : null}
      ${matching.length > shown.length
        ? html`<p class="more" id="more-rows">Showing ${shown.length} of ${matching.length}${matching.length < items.length ? ' matching' : ''}. <button class="link" onClick=${() => setLimit(limit + ROWS)}>show ${Math.min(ROWS, matching.length - shown.length)} more</button> or narrow the filter.</p>`
        : null}
    </section>`;
}
