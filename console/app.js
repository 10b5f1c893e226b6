// The blocklist console: logs in with a bearer token, polls the REST API, draws the panels.
import { html, render, useEffect, useRef, useState } from './vendor/preact-htm.js';
import { ApiError, call, kindOfId, saveToken, savedToken } from './api.js';
import { DetectorPanel, EvacuationsPanel, Header, HistoryChart, NodeGrid, SummaryTiles, YarnPanel } from './panels.js';
import { BlocklistPanel } from './blocklist.js';
import { ActionPanel, BlockForm } from './controls.js';
import { summaryTiles } from './figures.js';

/** Poll period: ?refresh=<ms> (at least 200 ms), else 2 s. The API has no push channel; polling is cheap on loopback. */
function refreshMs() {
  const v = Number(new URLSearchParams(location.search).get('refresh'));
  return Number.isFinite(v) && v >= 200 ? v : 2000;
}

function Login({ message, onToken }) {
  const [value, setValue] = useState('');
  const submit = (e) => {
    e.preventDefault();
    if (value.trim()) onToken(value.trim());
  };
  return html`
    <main class="login">
      <form id="login" onSubmit=${submit}>
        <h1>Blocklist console</h1>
        <p>This sidecar needs a bearer token (one of <code>rest.auth.tokens-file</code>). It is kept in this tab only.</p>
        ${message ? html`<p class="error" role="alert">${message}</p>` : null}
        <label>Token <input id="token" type="password" autocomplete="off" autoFocus value=${value} onInput=${(e) => setValue(e.target.value)} /></label>
        <button type="submit">Sign in</button>
      </form>
    </main>`;
}

/**
 * The chart (GET /ui/history, every 15 s or every sample if more often) and the links (GET
 * /ui/links, every 30 s) beside the polls; a failure keeps what the page had.
 */
function refreshExtra(token, at, setExtra, stopped) {
  const now = Date.now();
  const due = (key, ms) => now - at[key] >= ms && ((at[key] = now), true);
  const every = Math.min(15_000, Math.max(refreshMs(), at.sampleMs ?? 15_000));
  const keep = (key) => (value) => {
    if (key === 'history' && value.intervalMs) at.sampleMs = value.intervalMs;
    if (!stopped()) setExtra((x) => ({ ...x, [key]: value }));
  };
  if (due('history', every)) call(token, 'GET', '/ui/history').then(keep('history'), () => undefined);
  if (due('links', 30_000)) call(token, 'GET', '/ui/links').then(keep('links'), () => undefined);
}

function App() {
  const [token, setToken] = useState(savedToken());
  const [session, setSession] = useState(undefined);
  const [loginMessage, setLoginMessage] = useState('');
  const [data, setData] = useState({ status: undefined, items: [], detector: undefined, offset: 0, error: '', fetchedAt: 0 });
  // The chart and the links change slowly: asked for now and then, not on every poll.
  const [extra, setExtra] = useState({ history: undefined, links: undefined });
  const extraAt = useRef({ history: 0, links: 0 });
  const [filter, setFilter] = useState({ text: '', kind: '', state: '' });
  const [tick, setTick] = useState(0);
  const [action, setAction] = useState(undefined);
  const [notice, setNotice] = useState(undefined);
  const detectorMissing = useRef(0);
  const pollNow = useRef(() => undefined);

  // Who are we? 401 → the login prompt with the API's message.
  useEffect(() => {
    let live = true;
    call(token, 'GET', '/ui/session')
      .then((s) => live && (setSession(s), setLoginMessage('')))
      .catch((e) => {
        if (!live) return;
        setSession(null);
        if (e instanceof ApiError && e.status === 401) {
          if (token) saveToken('');
          setLoginMessage(token ? e.messages.join('; ') : '');
        } else setLoginMessage(e.message);
      });
    return () => {
      live = false;
    };
  }, [token]);

  // Poll /status (with the nodes), /blocklist and, when it exists, /detector.
  useEffect(() => {
    if (!session) return undefined;
    let stopped = false;
    let timer;
    let inFlight = false;
    let again = false;
    const once = async () => {
      // One chain of polls: a poll asked for while one runs (a control's refresh, the tab shown
      // again) runs right after it instead of beside it.
      if (inFlight) {
        again = true;
        return;
      }
      clearTimeout(timer);
      // A tab in the background asks nothing; it catches up the moment it is shown again.
      if (document.hidden) {
        timer = setTimeout(once, refreshMs());
        return;
      }
      inFlight = true;
      const started = Date.now();
      try {
        const wantDetector = detectorMissing.current === 0;
        const [status, list, detector] = await Promise.all([
          call(token, 'GET', '/status?nodes=true'),
          call(token, 'GET', '/blocklist'),
          wantDetector ? call(token, 'GET', '/detector').catch((e) => (e instanceof ApiError && e.status === 404 ? null : undefined)) : Promise.resolve(null),
        ]);
        refreshExtra(token, extraAt.current, setExtra, () => stopped);
        // A sidecar without a detector answers 404: ask again only now and then.
        if (detector === null) detectorMissing.current = wantDetector ? 15 : detectorMissing.current - 1;
        if (stopped) return;
        const items = Object.values(list);
        // The sidecar's clock as of when the poll was sent: a time it reports is then never
        // "in the future" on this page (an answer's latency only makes countdowns a bit short).
        const offset = typeof status.now === 'number' ? status.now - started : 0;
        setData({ status, items, detector: detector ?? undefined, offset, error: '', fetchedAt: Date.now() });
      } catch (e) {
        if (stopped) return;
        if (e instanceof ApiError && e.status === 401) {
          saveToken('');
          setSession(null);
          setLoginMessage(e.messages.join('; '));
          return;
        }
        setData((d) => ({ ...d, error: e.message }));
      } finally {
        inFlight = false;
      }
      if (stopped) return;
      if (again) {
        again = false;
        once();
      } else {
        // A poll that takes long (a huge blocklist, a busy sidecar) spaces the next ones out, so the
        // console never costs the sidecar more than about a fifth of its time.
        timer = setTimeout(once, Math.max(refreshMs(), 4 * (Date.now() - started)));
      }
    };
    pollNow.current = once;
    const onVisible = () => !document.hidden && once();
    document.addEventListener('visibilitychange', onVisible);
    once();
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [session, token]);

  // Countdowns move every second between polls.
  useEffect(() => {
    const t = setInterval(() => setTick((x) => x + 1), 1000);
    return () => clearInterval(t);
  }, []);

  if (session === undefined) return html`<p class="loading">Connecting to the sidecar…</p>`;
  if (session === null) {
    return html`<${Login} message=${loginMessage} onToken=${(t) => (saveToken(t), setToken(t), setSession(undefined))} />`;
  }

  const now = Date.now() + data.offset + tick * 0;
  const admin = session.role === 'admin';
  const logout = () => {
    saveToken('');
    setToken('');
    setSession(undefined);
  };
  const done = (text) => {
    setAction(undefined);
    setNotice({ kind: 'ok', text });
    pollNow.current();
  };
  const links = extra.links;
  return html`
    <${Header} session=${session} status=${data.status} links=${links} now=${now} error=${data.error} fetchedAt=${data.fetchedAt} onLogout=${session.auth ? logout : undefined}
      onRemoveQuarantined=${(row) => (setNotice(undefined), setAction({ kind: 'remove-quarantined', item: { id: row.id, kind: kindOfId(row.id), reason: row.reason } }))} />
    <main class="panels">
      ${notice ? html`<p class=${`notice ${notice.kind}`} role="status">${notice.text} <button class="link" onClick=${() => setNotice(undefined)}>dismiss</button></p>` : null}
      ${admin && action ? html`<${ActionPanel} token=${token} action=${action} now=${now} onDone=${done} onCancel=${() => setAction(undefined)} />` : null}
      ${data.status ? html`<${SummaryTiles} tiles=${summaryTiles(data.status, data.items, data.detector)} onFilter=${(state) => setFilter({ text: '', kind: '', state })} />` : null}
      ${data.status ? html`<${EvacuationsPanel} status=${data.status} links=${links} now=${now} />` : null}
      ${data.status ? html`<${HistoryChart} history=${extra.history} now=${now} />` : null}
      <${BlocklistPanel} items=${data.items} now=${now} admin=${admin} loaded=${data.status !== undefined} links=${links} filter=${filter} setFilter=${setFilter}
        onUnblock=${(item) => (setNotice(undefined), setAction({ kind: 'unblock', item }))}
        onExtend=${(item) => (setNotice(undefined), setAction({ kind: 'extend', item }))} />
      ${data.status ? html`<${YarnPanel} status=${data.status} now=${now} />` : null}
      ${data.status ? html`<${NodeGrid} status=${data.status} items=${data.items} />` : null}
      ${admin ? html`<${BlockForm} token=${token} now=${now} hosts=${data.status?.nodes?.list.map((n) => n.host)} cap=${data.status?.safetyCap} onDone=${done} />` : null}
      ${data.detector && data.detector.mode !== 'off' ? html`<${DetectorPanel} detector=${data.detector} links=${links} now=${now} />` : null}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app'));
