// Admin controls. Each is the REST API's own call (audit, validation and rate limits apply as for
// any client): first with ?dryRun=true to preview what YARN would see, then for real on confirm.
import { html, useEffect, useState } from './vendor/preact-htm.js';
import { ApiError, call, itemPath, versionOf } from './api.js';
import { absolute, endsText, parseDuration, relative } from './format.js';
import { isoExample, parseIsoTime } from './figures.js';

const ACTIONS = [
  ['MARK_BLOCKED', 'MARK_BLOCKED — no new containers there'],
  ['MARK_BLOCKED_AND_EVACUATE_TASKS', 'MARK_BLOCKED_AND_EVACUATE_TASKS — also move the job’s containers off'],
];

const messagesOf = (e) => (e instanceof ApiError ? e.messages : [e.message]);

function Errors({ errors, id }) {
  if (!errors?.length) return null;
  return html`<ul class="error" id=${id} role="alert">${errors.map((m) => html`<li>${m}</li>`)}</ul>`;
}

/** The end of a block from the "ends" inputs: {timeout} | {endTimestamp} | {} (permanent) | {error}. */
function endFields(mode, timeoutText, endText) {
  if (mode === 'never') return {};
  if (mode === 'timeout') {
    const d = parseDuration(timeoutText);
    return d.error ? { error: d.error } : { timeout: d.ms };
  }
  if (!endText.trim()) return { error: `write the end as an ISO time, e.g. ${isoExample(Date.now())}` };
  const at = parseIsoTime(endText);
  return at.error ? { error: at.error } : { endTimestamp: String(at.ms) };
}

/** What an ISO end as typed so far means, under the input: the time in UTC and how far off it is. */
function EndHint({ id, text, now }) {
  if (!text.trim()) return html`<span class="hint" id=${id}>UTC unless a zone is given (+02:00)</span>`;
  const at = parseIsoTime(text);
  if (at.error) return html`<span class="hint bad" id=${id}>not an ISO time yet</span>`;
  return html`<span class=${`hint${at.ms <= now ? ' bad' : ''}`} id=${id}>= ${absolute(at.ms)}, ${relative(at.ms, now)}</span>`;
}

function EndsInput({ prefix, mode, setMode, timeout, setTimeout, end, setEnd, now }) {
  return html`<fieldset class="ends-input">
    <legend>Ends</legend>
    <label><input type="radio" name=${`${prefix}-ends`} id=${`${prefix}-ends-timeout`} checked=${mode === 'timeout'} onChange=${() => setMode('timeout')} /> after</label>
    <input id=${`${prefix}-timeout`} class="short" value=${timeout} disabled=${mode !== 'timeout'} onInput=${(e) => setTimeout(e.target.value)} aria-label="duration, e.g. 30 min, 2 h" />
    <label><input type="radio" name=${`${prefix}-ends`} id=${`${prefix}-ends-at`} checked=${mode === 'end'} onChange=${() => setMode('end')} /> at</label>
    <span class="iso">
      <input id=${`${prefix}-end`} type="text" inputmode="numeric" autocomplete="off" spellcheck="false" placeholder=${isoExample(now)} value=${end} disabled=${mode !== 'end'} onInput=${(e) => setEnd(e.target.value)} aria-label="end, an ISO time (UTC unless a zone is given)" />
      ${mode === 'end' ? html`<${EndHint} id=${`${prefix}-end-hint`} text=${end} now=${now} />` : null}
    </span>
    <label><input type="radio" name=${`${prefix}-ends`} id=${`${prefix}-ends-never`} checked=${mode === 'never'} onChange=${() => setMode('never')} /> never</label>
  </fieldset>`;
}

function Effect({ dryRun }) {
  if (!dryRun) return null;
  const line = (label, list) => html`<li><span class="label">${label}</span> ${list.length ? list.join(', ') : html`<span class="muted">none</span>`}</li>`;
  return html`<ul class="effect">
    ${line('YARN blacklist gains', dryRun.blacklistAdditions)}
    ${line('YARN blacklist loses', dryRun.blacklistRemovals)}
    ${line('containers to release', dryRun.containersToRelease)}
  </ul>`;
}

/** What the safety cap will make of a previewed addition, from the cap as of the last pass. */
function capNote(cap, additions) {
  if (!cap || !additions?.length) return 'The safety cap is applied when the block is enforced: a new node block beyond it is kept but deferred.';
  const room = cap.limit - cap.blockedRunningNodes;
  if (room >= additions.length) return `The safety cap allows ${cap.limit} of ${cap.runningNodes} RUNNING nodes; ${cap.blockedRunningNodes} ${cap.blockedRunningNodes === 1 ? 'is' : 'are'} blacklisted, so this fits.`;
  return `The safety cap is full (${cap.blockedRunningNodes} of at most ${cap.limit} RUNNING nodes blacklisted): this block would be kept but deferred until there is room, unless the node is not RUNNING.`;
}

/** A block preview's verb, by the outcome the dry run answers (201 created; 202 merged or unchanged). */
const PREVIEW_VERB = { created: 'create', merged: 'merge into the existing block', unchanged: 'change nothing: the existing block already covers' };

export function BlockForm({ token, now, hosts, cap, onDone }) {
  const [kind, setKind] = useState('node');
  const [node, setNode] = useState('');
  const [container, setContainer] = useState('');
  const [action, setAction] = useState('MARK_BLOCKED');
  const [mode, setMode] = useState('timeout');
  const [timeout, setTimeoutText] = useState('1 h');
  const [end, setEnd] = useState('');
  const [cause, setCause] = useState('');
  const [evac, setEvac] = useState('');
  const [scope, setScope] = useState('');
  const [merge, setMerge] = useState(false);
  const [errors, setErrors] = useState([]);
  const [preview, setPreview] = useState(undefined);
  const [busy, setBusy] = useState(false);

  // Any edit makes an earlier preview stale: confirming must confirm what was previewed.
  const edit = (set) => (v) => {
    set(v);
    setPreview(undefined);
  };

  const request = () => {
    const problems = [];
    const host = node.trim();
    if (!host) problems.push('name the node (its YARN host name)');
    if (kind === 'taskmanager' && !container.trim()) problems.push('name the task manager’s container id');
    if (!cause.trim()) problems.push('say why (the cause is required)');
    const ends = endFields(mode, timeout, end);
    if (ends.error) problems.push(ends.error);
    const body = { action, cause: cause.trim(), ...ends };
    delete body.error;
    if (action === 'MARK_BLOCKED_AND_EVACUATE_TASKS' && evac.trim() !== '') {
      const n = Number(evac.trim());
      if (!Number.isInteger(n)) problems.push('the evacuation timeout is whole seconds (negative = wait forever, 0 = at once)');
      else body.evacuationTimeout = n;
    }
    if (scope.trim()) body.scope = scope.trim();
    if (merge) body.allowMerge = true;
    const id = kind === 'taskmanager' ? `${host}/${container.trim()}` : host;
    return { problems, path: itemPath(kind, id), id, body };
  };

  const doPreview = async (e) => {
    e.preventDefault();
    const r = request();
    setErrors(r.problems);
    setPreview(undefined);
    if (r.problems.length) return;
    setBusy(true);
    try {
      const body = await call(token, 'PUT', `${r.path}?dryRun=true`, r.body);
      setPreview({ ...r, res: body });
    } catch (err) {
      setErrors(messagesOf(err));
    } finally {
      setBusy(false);
    }
  };

  const confirm = async () => {
    setBusy(true);
    try {
      const res = await call(token, 'PUT', preview.path, preview.body);
      setPreview(undefined);
      setErrors([]);
      setCause('');
      onDone(`Blocked ${res.id} (${res.endTimestamp === '9223372036854775807' ? 'permanent' : `until ${absolute(Number(res.endTimestamp))}`}).`);
    } catch (err) {
      setErrors(messagesOf(err));
      setPreview(undefined);
    } finally {
      setBusy(false);
    }
  };

  const evacuate = action === 'MARK_BLOCKED_AND_EVACUATE_TASKS';
  return html`
    <section class="panel" id="block">
      <h2>Block</h2>
      <form id="block-form" onSubmit=${doPreview}>
        <div class="row">
          <label>Kind <select id="block-kind" value=${kind} onChange=${(e) => edit(setKind)(e.target.value)}>
            <option value="node">node</option><option value="taskmanager">task manager</option>
          </select></label>
          <label>Node <input id="block-node" list="known-hosts" autocomplete="off" value=${node} placeholder="host name as YARN names it" onInput=${(e) => edit(setNode)(e.target.value)} /></label>
          <datalist id="known-hosts">${(hosts ?? []).map((h) => html`<option key=${h} value=${h} />`)}</datalist>
          ${kind === 'taskmanager' ? html`<label>Container <input id="block-container" value=${container} placeholder="container_…" onInput=${(e) => edit(setContainer)(e.target.value)} /></label>` : null}
        </div>
        <label>Action <select id="block-action" value=${action} onChange=${(e) => edit(setAction)(e.target.value)}>
          ${ACTIONS.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
        </select></label>
        <${EndsInput} prefix="block" mode=${mode} setMode=${edit(setMode)} timeout=${timeout} setTimeout=${edit(setTimeoutText)} end=${end} setEnd=${edit(setEnd)} now=${now} />
        <label>Cause <input id="block-cause" value=${cause} maxlength="1024" placeholder="why, for the next person (e.g. disk full on /data3)" onInput=${(e) => edit(setCause)(e.target.value)} /></label>
        <div class="row">
          ${evacuate ? html`<label>Evacuation timeout (s) <input id="block-evac" class="short" value=${evac} placeholder="default" inputmode="numeric" onInput=${(e) => edit(setEvac)(e.target.value)} /></label>` : null}
          <label>Scope <input id="block-scope" class="short" value=${scope} placeholder="cluster" onInput=${(e) => edit(setScope)(e.target.value)} /></label>
          <label class="check"><input id="block-merge" type="checkbox" checked=${merge} onChange=${(e) => edit(setMerge)(e.target.checked)} /> merge with an existing block</label>
        </div>
        <button type="submit" id="block-preview" disabled=${busy}>Preview</button>
      </form>
      <${Errors} errors=${errors} id="block-error" />
      ${preview
        ? html`<div class="preview" id="preview">
            <p><strong>Dry run:</strong> this would ${PREVIEW_VERB[preview.res.outcome] ?? 'create'} <code>${preview.res.id}</code>: ${preview.res.action}, ending ${endsText(preview.res.endTimestamp, now).rel}${endsText(preview.res.endTimestamp, now).abs ? ` (${endsText(preview.res.endTimestamp, now).abs})` : ''}, scope ${preview.res.scope}.</p>
            <${Effect} dryRun=${preview.res.dryRun} />
            <p class="muted" id="preview-cap">${capNote(cap, preview.res.dryRun?.blacklistAdditions)}</p>
            <button id="block-confirm" class="danger" disabled=${busy} onClick=${confirm}>Confirm block</button>
            <button class="link" onClick=${() => setPreview(undefined)}>cancel</button>
          </div>`
        : null}
    </section>`;
}

const TITLES = { unblock: 'Unblock', extend: 'Extend', 'remove-quarantined': 'Remove quarantined' };
const CONFIRMS = { unblock: 'Confirm unblock', extend: 'Confirm extend', 'remove-quarantined': 'Confirm remove' };

/**
 * Unblock or extend one item, or remove a quarantined row (one the store cannot decode): preview
 * (dry run) first, then confirm. Both removals are the same DELETE; the API tells them apart.
 */
export function ActionPanel({ token, action, now, onDone, onCancel }) {
  const { item } = action;
  const path = itemPath(item.kind, item.id);
  const removal = action.kind !== 'extend';
  const [errors, setErrors] = useState([]);
  const [preview, setPreview] = useState(undefined);
  const [busy, setBusy] = useState(false);
  const [mode, setMode] = useState('timeout');
  const [timeout, setTimeoutText] = useState('1 h');
  const [end, setEnd] = useState('');

  const extendBody = () => {
    const ends = endFields(mode, timeout, end);
    if (ends.error) return { error: ends.error };
    // A merge keeps the later end, the stronger action and the causes: sending the item's own
    // action and cause changes nothing but the end.
    return { body: { action: item.action, cause: item.cause, scope: item.scope, allowMerge: true, ...ends } };
  };

  const run = async (dryRun) => {
    setBusy(true);
    setErrors([]);
    try {
      if (removal) {
        // The preview and the confirm both name the version this panel shows: a block another
        // admin changed or made again meanwhile is refused (412), not removed.
        const res = await call(token, 'DELETE', `${path}${dryRun ? '?dryRun=true' : ''}`, undefined, action.kind === 'unblock' ? versionOf(item) : undefined);
        if (dryRun) setPreview(res);
        else onDone(action.kind === 'unblock' ? `Unblocked ${item.id}.` : `Removed the quarantined row ${item.id}.`);
      } else {
        const b = extendBody();
        if (b.error) {
          setErrors([b.error]);
          return;
        }
        // The item's own action, cause and scope go back in the merge: only right for the version
        // shown (a block lifted meanwhile would be made again, a replacement would gain them).
        const res = await call(token, 'PUT', `${path}${dryRun ? '?dryRun=true' : ''}`, b.body, versionOf(item));
        if (dryRun) setPreview(res);
        else onDone(res.outcome === 'unchanged' ? `${item.id} unchanged: it already ends later than that.` : `Extended ${item.id}: ends ${endsText(res.endTimestamp, now).rel}.`);
      }
    } catch (err) {
      setErrors(messagesOf(err));
    } finally {
      setBusy(false);
    }
  };

  // A removal's preview needs no input: ask for it at once.
  useEffect(() => {
    setPreview(undefined);
    setErrors([]);
    if (removal) run(true);
  }, [action]);

  const edit = (set) => (v) => {
    set(v);
    setPreview(undefined);
  };
  const newEnd = preview && action.kind === 'extend' ? endsText(preview.endTimestamp, now) : undefined;
  return html`
    <section class="panel wide action" id="action" data-kind=${action.kind}>
      <h2>${TITLES[action.kind]} <code>${item.id}</code></h2>
      ${action.kind === 'extend'
        ? html`<p>Now ends ${endsText(item.endTimestamp, now).rel}${endsText(item.endTimestamp, now).abs ? ` (${endsText(item.endTimestamp, now).abs})` : ''}. A block is only ever lengthened here (the later end wins).</p>
          <form id="extend-form" onSubmit=${(e) => (e.preventDefault(), run(true))}>
            <${EndsInput} prefix="extend" mode=${mode} setMode=${edit(setMode)} timeout=${timeout} setTimeout=${edit(setTimeoutText)} end=${end} setEnd=${edit(setEnd)} now=${now} />
            <button type="submit" id="extend-preview" disabled=${busy}>Preview</button>
          </form>`
        : action.kind === 'unblock'
          ? html`<p>Blocked ${relative(Number(item.startTimestamp), now)} by ${item.createdBy}: ${item.cause}</p>`
          : html`<p>Its stored data cannot be read (${item.reason}), so it is not enforced and never expires. Removing deletes the stored row; YARN's blacklist does not change.</p>`}
      <${Errors} errors=${errors} id="action-error" />
      ${preview
        ? html`<div class="preview" id="action-preview">
            ${newEnd ? html`<p><strong>Dry run:</strong> would end ${newEnd.rel}${newEnd.abs ? ` (${newEnd.abs})` : ''}.</p>` : html`<p><strong>Dry run:</strong> what YARN would see.</p>`}
            <${Effect} dryRun=${preview.dryRun} />
            <button id="action-confirm" class=${removal ? 'danger' : ''} disabled=${busy} onClick=${() => run(false)}>${CONFIRMS[action.kind]}</button>
            <button class="link" id="action-cancel" onClick=${onCancel}>cancel</button>
          </div>`
        : html`<button class="link" id="action-cancel" onClick=${onCancel}>cancel</button>`}
    </section>`;
}
