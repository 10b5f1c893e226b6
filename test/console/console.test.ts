/**
 * The web console in a real browser (Debian's chromium, headless) against a real sidecar (SQLite,
 * bearer tokens) wired to the YARN simulator over HTTP. The page polls the API every 250 ms; every
 * wait is a bounded wait for something on the page, never a fixed sleep.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { sidecarConfigForSimulator } from '../../src/quickstart/local-cluster';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { silentLogger } from '../../src/core/logger';
import { http, tempDir } from '../support/sidecar';
import { ADMIN_TOKEN, VIEWER_TOKEN, bearer, writeTokenFile } from '../security/support';
import { Browser, launchBrowser, skipWithoutChromium, waitForTrue } from './browser';
import { repoRoot } from '../support/paths';

const TOKENS = ['tokens:', `  "${ADMIN_TOKEN}": { name: alice, role: admin }`, `  "${VIEWER_TOKEN}": { name: grafana, role: viewer }`, ''].join('\n');
const WAIT = { timeout: 10_000 };

/**
 * Elements that reach past the right (or left) edge of the screen, or that scroll sideways inside
 * themselves (a panel's table too wide for it), as "tag.class" strings. Runs in the page.
 */
const OVERFLOWING = `(() => {
  const W = document.documentElement.clientWidth;
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className ? '.' + el.className.trim().replace(/\\s+/g, '.') : '');
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && (r.right > W + 0.5 || r.left < -0.5)) out.push(name(el) + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right));
    const cs = getComputedStyle(el);
    if (cs.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1 && !el.classList.contains('sr')) out.push(name(el) + ' scrolls sideways');
  }
  return out.slice(0, 20);
})()`;
const BUTTONS_OFF_SCREEN = `[...document.querySelectorAll('#blocklist button.extend, #blocklist button.unblock')].filter((b) => { const r = b.getBoundingClientRect(); return r.width === 0 || r.left < 0 || r.right > document.documentElement.clientWidth; }).map((b) => b.closest('tr').dataset.id + ' ' + b.className)`;

describe('console: in a browser', function () {
  this.timeout(60_000);
  let c: { sim: RunningSimulator; sidecar: Sidecar };
  let b: Browser;
  let api: string;
  let db: string;

  before(async function () {
    skipWithoutChromium(this);
    const dir = tempDir('blocklist-console-ui-');
    // Six racks of four nodes: a rack block fits under the safety cap (7 of 24).
    const sim = await startSimulator({ port: 0, nodes: 24, racks: 6, containers: 16, tickMs: 100, seed: 7 });
    db = path.join(dir, 'blocklist.db');
    const config = sidecarConfigForSimulator(sim.url, db, {
      'rest.port': '0',
      'rest.auth.tokens-file': writeTokenFile(dir, TOKENS),
      'cluster.resource-blocklist.poll-interval': '100 ms',
      'cluster.resource-blocklist.expiry.cron': '*/2 * * * * *',
      // A proxy outage in one scenario is retried within a second of its end.
      'cluster.resource-blocklist.retry.max-backoff': '500 ms',
      // The detector decides and shows, blocks nothing: the other scenarios are not disturbed.
      'cluster.resource-blocklist.detector.mode': 'shadow',
      'cluster.resource-blocklist.detector.flink.rest-address': sim.url,
      'cluster.resource-blocklist.detector.poll-interval': '300 ms',
      // The chart's samples: a few per second, so it draws lines within a test.
      'rest.console.history-interval': '250 ms',
    });
    c = { sim, sidecar: await startSidecar({ config, logger: silentLogger, env: {} }) };
    api = c.sidecar.url;
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await c?.sidecar.close();
    await c?.sim.close();
  });
  afterEach(() => {
    const problems = b?.problems.splice(0) ?? [];
    assert.deepEqual(problems, [], 'no script error and no CSP refusal in the page');
  });

  const admin = (method: string, p: string, body?: unknown) => http(api, method, p, body, bearer(ADMIN_TOKEN));

  async function open(token?: string): Promise<Page> {
    const page = await b.page();
    await page.goto(`${api}/ui/?refresh=250`);
    if (token !== undefined) {
      await page.fill('#token', token);
      await page.click('#login button[type=submit]');
      await page.waitForSelector('#blocklist', WAIT);
    }
    return page;
  }

  /** Hosts with task managers on them, not the AM's (evacuating the AM's host is another story). */
  function busyHosts(): string[] {
    const am = c.sim.cluster.currentAttempt.amHost;
    return [...new Set(c.sim.cluster.taskManagers().map((t) => t.host))].filter((h) => h !== am).sort();
  }
  /** A host without task managers and not blocked now (so one test's leftovers never meet the next). */
  const idleHost = async (taken: string[] = []): Promise<string> => {
    const blocked = Object.keys((await admin('GET', '/blocklist')).body as object);
    const busy = new Set(c.sim.cluster.taskManagers().map((t) => t.host));
    const h = c.sim.cluster.nodes.map((n) => n.host).find((x) => !busy.has(x) && !taken.includes(x) && !blocked.includes(x));
    if (!h) throw new Error('no idle host in the simulator');
    return h;
  };

  it('without a token the page asks for one; a wrong token is refused with the API’s message', async () => {
    const page = await open();
    await page.waitForSelector('#login', WAIT);
    assert.equal(await page.locator('#blocklist').count(), 0, 'no data before signing in');
    await page.fill('#token', 'wrong-token-0123456789abcdef');
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#login .error', WAIT);
    assert.match(await page.locator('#login .error').innerText(), /invalid bearer token/);
    await b.shot(page, 'login');
    await page.close();
  });

  it('a viewer sees the blocklist and YARN’s side but no control', async () => {
    const host = await idleHost();
    assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'viewer can see this' })).status, 201);
    const page = await open(VIEWER_TOKEN);
    await page.waitForSelector(`#blocklist tr[data-id="${host}"]`, WAIT);
    assert.match(await page.locator('header .who').innerText(), /grafana\s*viewer/);
    assert.match(await page.locator(`#blocklist tr[data-id="${host}"] .ends`).innerText(), /never/);
    for (const control of ['#block-form', '#block', 'button.unblock', 'button.extend', '#action']) {
      assert.equal(await page.locator(control).count(), 0, `${control} is not drawn for a viewer`);
    }
    await page.waitForSelector(`#blacklist-diff tr[data-host="${host}"]`, WAIT);
    await b.shot(page, 'viewer');
    // A phone's width: one card per item, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    // A string: the expression runs in the page (this project is compiled without the DOM's types).
    await waitForTrue(page, 'document.documentElement.scrollWidth <= window.innerWidth');
    assert.equal(await page.locator('#blocklist thead').isVisible(), false, 'the table header gives way to labelled cards');
    await b.shot(page, 'viewer-narrow');
    await page.close();
    assert.equal((await admin('DELETE', `/blocklist/nodes/${host}`)).status, 200);
  });

  it('an admin blocks with a dry-run preview, the row appears, then unblocks through the page', async () => {
    const host = await idleHost();
    const page = await open(ADMIN_TOKEN);
    await page.fill('#block-node', host);
    await page.fill('#block-cause', 'disk full on /data3');
    await page.fill('#block-timeout', '30 min');
    await page.click('#block-preview');
    await page.waitForSelector('#preview', WAIT);
    const preview = await page.locator('#preview').innerText();
    assert.match(preview, new RegExp(`YARN blacklist gains\\s+${host.replace(/\./g, '\\.')}`));
    assert.match(preview, /ending in (30m|29m 5\ds)/);
    assert.match(preview, /The safety cap allows 7 of 24 RUNNING nodes; \d+ (is|are) blacklisted, so this fits/);
    assert.equal((await admin('GET', `/blocklist/nodes/${host}`)).status, 404, 'a preview writes nothing');
    await b.shot(page, 'block-preview');

    await page.click('#block-confirm');
    const row = `#blocklist tr[data-id="${host}"]`;
    await page.waitForSelector(`${row}[data-state="applied"]`, WAIT);
    assert.match(await page.locator(`${row} .ends`).innerText(), /in 2\dm/);
    assert.match(await page.locator(`${row}`).innerText(), /alice/);
    await page.waitForSelector(`#nodes .node[data-host="${host}"][data-state="blocked"]`, WAIT);
    const stored = (await admin('GET', `/blocklist/nodes/${host}`)).body as { cause: string; createdBy: string };
    assert.equal(stored.cause, 'disk full on /data3');
    assert.equal(stored.createdBy, 'alice');

    // The API's own message is shown for a refused block.
    await page.fill('#block-node', '*');
    await page.fill('#block-cause', 'everything');
    await page.click('#block-preview');
    await page.waitForSelector('#block-error', WAIT);
    assert.match(await page.locator('#block-error').innerText(), /YARN's ANY and cannot be blocked/);

    await page.click(`${row} button.unblock`);
    await page.waitForSelector('#action-preview', WAIT);
    assert.match(await page.locator('#action-preview').innerText(), new RegExp(`YARN blacklist loses\\s+${host.replace(/\./g, '\\.')}`));
    assert.equal((await admin('GET', `/blocklist/nodes/${host}`)).status, 200, 'the unblock preview removed nothing');
    await page.click('#action-confirm');
    await page.waitForSelector(row, { state: 'detached', ...WAIT });
    assert.equal((await admin('GET', `/blocklist/nodes/${host}`)).status, 404);
    await page.close();
  });

  it('an admin extends a block through the page', async () => {
    const host = await idleHost();
    assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'short', timeout: 60_000 })).status, 201);
    const page = await open(ADMIN_TOKEN);
    const row = `#blocklist tr[data-id="${host}"]`;
    await page.waitForSelector(row, WAIT);
    await page.click(`${row} button.extend`);
    await page.fill('#extend-timeout', '2 h');
    await page.click('#extend-preview');
    await page.waitForSelector('#action-preview', WAIT);
    assert.match(await page.locator('#action-preview').innerText(), /would end in (1h 59m|2h)/);
    await page.click('#action-confirm');
    await page.waitForSelector('.notice.ok', WAIT);
    const end = Number(((await admin('GET', `/blocklist/nodes/${host}`)).body as { endTimestamp: string }).endTimestamp);
    assert.ok(end - Date.now() > 100 * 60_000, 'the block now ends about 2 h from now');
    await page.close();
    assert.equal((await admin('DELETE', `/blocklist/nodes/${host}`)).status, 200);
  });

  it('an admin blocks one task manager with evacuation: the preview names the container to release', async () => {
    const [host] = busyHosts();
    const tm = c.sim.cluster.taskManagers().find((t) => t.host === host);
    if (!tm) throw new Error(`no task manager on ${host}`);
    const page = await open(ADMIN_TOKEN);
    await page.selectOption('#block-kind', 'taskmanager');
    await page.fill('#block-node', host);
    await page.fill('#block-container', tm.id);
    await page.selectOption('#block-action', 'MARK_BLOCKED_AND_EVACUATE_TASKS');
    await page.fill('#block-evac', '600');
    await page.check('#block-ends-never');
    await page.fill('#block-cause', 'GC storms in this TM');
    await page.click('#block-preview');
    await page.waitForSelector('#preview', WAIT);
    const preview = await page.locator('#preview').innerText();
    assert.match(preview, new RegExp(`containers to release\\s+${tm.id}`));
    assert.match(preview, /YARN blacklist gains\s+none/, 'a task manager block leaves the node off the blacklist');
    assert.match(preview, /ending never/);
    await page.click('#block-confirm');
    const id = `${host}/${tm.id}`;
    await page.waitForSelector(`#blocklist tr[data-id="${id}"]`, WAIT);
    assert.match(await page.locator(`#blocklist tr[data-id="${id}"]`).innerText(), /task manager/);
    const stored = (await admin('GET', `/blocklist/taskmanagers/${encodeURIComponent(id)}`)).body as { evacuationTimeout?: number; action: string };
    assert.equal(stored.action, 'MARK_BLOCKED_AND_EVACUATE_TASKS');
    assert.equal(stored.evacuationTimeout, 600);
    await page.close();
    assert.equal((await admin('DELETE', `/blocklist/taskmanagers/${encodeURIComponent(id)}`)).status, 200);
  });

  it('a rack block reads kind rack, its nodes read blocked, and it is unblocked through the page', async () => {
    const am = c.sim.cluster.currentAttempt.amHost;
    const rack = [...new Set(c.sim.cluster.nodes.map((n) => n.rack))].find((r) => !c.sim.cluster.nodes.some((n) => n.rack === r && n.host === am));
    if (!rack) throw new Error('no rack without the AM');
    const hosts = c.sim.cluster.nodes.filter((n) => n.rack === rack).map((n) => n.host);
    const rackPath = `/blocklist/racks/${encodeURIComponent(rack)}`;
    assert.equal((await admin('PUT', rackPath, { action: 'MARK_BLOCKED', cause: 'rack switch firmware' })).status, 201);
    const page = await open(ADMIN_TOKEN);
    const row = `#blocklist tr[data-id="${rack}"]`;
    await page.waitForSelector(`${row}[data-state="applied"]`, WAIT);
    assert.equal(await page.locator(`${row} .kind`).innerText(), 'rack');
    for (const h of hosts) await page.waitForSelector(`#nodes .node[data-host="${h}"][data-state="blocked"]`, WAIT);
    await page.selectOption('#filter-kind', 'rack');
    await waitForTrue(page, "document.querySelectorAll('#blocklist tbody tr').length === 1");
    await b.shot(page, 'rack');

    await page.click(`${row} button.unblock`);
    await page.waitForSelector('#action-preview', WAIT);
    assert.match(await page.locator('#action-preview').innerText(), new RegExp(`YARN blacklist loses\\s+${rack}`));
    assert.equal((await admin('GET', rackPath)).status, 200, 'the unblock preview removed nothing');
    await page.click('#action-confirm');
    await page.waitForSelector(row, { state: 'detached', ...WAIT });
    assert.equal((await admin('GET', rackPath)).status, 404);
    // Off YARN's blacklist again before the next test counts the cap.
    for (const h of hosts) await page.waitForSelector(`#nodes .node[data-host="${h}"][data-state="ok"]`, WAIT);
    await page.close();
  });

  it('a quarantined row (the store cannot decode it) is named in the banner; an admin removes it with a confirmed Remove', async () => {
    const host = await idleHost();
    assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'about to be garbled' })).status, 201);
    // Garble the stored row as a disk error or a hand edit would, and move the store's version as
    // any write does, so the running sidecar reads it again (and quarantines it).
    const raw = new Database(db, { timeout: 5_000 });
    try {
      raw.transaction(() => {
        assert.equal(raw.prepare("update items set data='{garbage' where id=?").run(host).changes, 1);
        raw.prepare("update meta set value = value + 1 where key = 'version'").run();
      })();
    } finally {
      raw.close();
    }
    const banner = `#quarantined li[data-id="${host}"]`;
    const viewer = await open(VIEWER_TOKEN);
    await viewer.waitForSelector(banner, WAIT);
    assert.match(await viewer.locator(banner).innerText(), /cannot be decoded/);
    assert.equal(await viewer.locator('button.remove-quarantined').count(), 0, 'no Remove for a viewer');
    await viewer.close();

    const page = await open(ADMIN_TOKEN);
    await page.waitForSelector(`${banner} button.remove-quarantined`, WAIT);
    await b.shot(page, 'quarantined');
    await page.click(`${banner} button.remove-quarantined`);
    await page.waitForSelector('#action-preview', WAIT);
    assert.match(await page.locator('#action').innerText(), /Remove quarantined/);
    assert.match(await page.locator('#action-preview').innerText(), /YARN blacklist loses\s+none/);
    const quarantined = async () => ((await admin('GET', '/status')).body as { quarantined: { id: string }[] }).quarantined.map((q) => q.id);
    assert.deepEqual(await quarantined(), [host], 'the preview removed nothing');
    assert.equal(await page.locator('#action-confirm').innerText(), 'Confirm remove');
    await page.click('#action-confirm');
    await page.waitForSelector('.notice.ok', WAIT);
    assert.match(await page.locator('.notice.ok').innerText(), new RegExp(`Removed the quarantined row ${host.replace(/\./g, '\\.')}`));
    await page.waitForSelector('#quarantined', { state: 'detached', ...WAIT });
    assert.deepEqual(await quarantined(), []);
    assert.equal((await admin('GET', `/blocklist/nodes/${host}`)).status, 404);
    await page.close();
  });

  it('past the safety cap an item reads deferred with the reason, and the cap reads n of m', async () => {
    const running = c.sim.cluster.nodes.length;
    const limit = Math.floor(0.33 * running);
    const hosts = c.sim.cluster.nodes.map((n) => n.host).filter((h) => h !== c.sim.cluster.currentAttempt.amHost).slice(0, limit + 1);
    const r = await admin('POST', '/blocklist', hosts.map((id) => ({ id, action: 'MARK_BLOCKED', cause: 'rack power work' })));
    assert.equal(r.status, 200, r.text);
    const page = await open(VIEWER_TOKEN);
    // Oldest are kept: the items are written in one batch, so which one is deferred is the store's order.
    await page.waitForSelector('#blocklist tr[data-state="deferred"]', WAIT);
    assert.equal(await page.locator('#blocklist tr[data-state="deferred"]').count(), 1);
    assert.match(await page.locator('#blocklist tr[data-state="deferred"] .sync-cell').innerText(), /held back by the safety cap/);
    await waitForTrue(page, `document.querySelector('#safety-cap')?.innerText.includes('${limit} of ${running}')`);
    assert.match(await page.locator('#safety-cap').innerText(), new RegExp(`${limit} of ${running} RUNNING nodes blacklisted \\(at most ${limit}.*1 deferred`));
    await page.waitForSelector('#nodes .node[data-state="deferred"]', WAIT);
    // The tiles: the deferred one raised, the cap's use beside it; a click shows just those rows.
    await waitForTrue(page, `document.querySelector('#summary [data-figure="deferred"]')?.innerText === '1'`);
    assert.equal(await page.locator('#summary [data-figure="blocked"]').innerText(), String(limit));
    assert.match(await page.locator('#summary [data-tile="deferred"]').innerText(), new RegExp(`cap: ${limit} of at most ${limit} \\(${running} RUNNING nodes\\)`));
    assert.equal(await page.locator('#summary [data-tile="deferred"]').getAttribute('class'), 'tile alarm');
    assert.equal(await page.locator('#summary [data-tile="deferred"] meter').getAttribute('value'), String(limit));
    await page.click('#summary [data-tile="deferred"] button');
    await waitForTrue(page, "document.querySelectorAll('#blocklist tbody tr').length === 1");
    assert.equal(await page.locator('#filter-state').inputValue(), 'deferred');
    await b.shot(page, 'deferred');
    await page.close();
    for (const h of hosts) assert.equal((await admin('DELETE', `/blocklist/nodes/${h}`)).status, 200);
  });

  it('an evacuation shows its phase, and the phase changes when the containers are gone', async () => {
    const [host] = busyHosts();
    const page = await open(ADMIN_TOKEN);
    // A permanent block and a scoped one beside it, for the screenshot.
    const other = await idleHost([host]);
    await admin('PUT', `/blocklist/nodes/${other}`, { action: 'MARK_BLOCKED', cause: 'NIC drops packets' });
    // Waits for its containers forever (-1): the phase moves only when they are gone.
    assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'kernel soft lockups', evacuationTimeout: -1 })).status, 201);
    const evac = `#evacuations li[data-item="${host}"]`;
    await page.waitForSelector(`${evac}[data-phase="WAIT_CONTAINER"]`, WAIT);
    await page.waitForSelector(`#blocklist tr[data-id="${host}"][data-state="evacuating"]`, WAIT);
    await page.waitForSelector(`#nodes .node[data-host="${host}"][data-state="evacuating"]`, WAIT);
    assert.match(await page.locator(`#blocklist tr[data-id="${host}"] .sync-cell`).innerText(), /WAIT_CONTAINER, \d+ containers? left/);
    // The card: why it waits, containers moved (a progress bar), no deadline (it waits forever).
    const left = c.sim.cluster.taskManagers().filter((t) => t.host === host).length;
    assert.match(await page.locator(evac).innerText(), /waiting for its containers to end/);
    assert.equal(await page.locator(`${evac} progress.moved`).getAttribute('max'), String(left));
    assert.equal(await page.locator(`${evac} progress.moved`).getAttribute('value'), '0');
    assert.match(await page.locator(`${evac} .bar-text`).innerText(), new RegExp(`0 of ${left} moved, ${left} left`));
    assert.match(await page.locator(`${evac} .deadline`).innerText(), /no deadline: waits for its containers/);
    assert.equal(await page.locator(`${evac} progress.grace`).count(), 0, 'no grace period to show');
    await page.waitForSelector('#summary [data-tile="evacuating"] progress', WAIT);
    assert.equal(await page.locator('#summary [data-figure="evacuating"]').innerText(), '1');
    await b.shot(page, 'evacuating');

    // The containers end (as if Flink moved them); the simulator places none there: it is blacklisted.
    for (let round = 0; round < 20; round++) {
      const left = c.sim.cluster.taskManagers().filter((t) => t.host === host);
      if (!left.length) break;
      for (const t of left) await http(c.sim.url, 'POST', `/sim/v1/containers/${t.id}/kill`);
      await page.waitForTimeout(100);
    }
    await page.waitForSelector(`${evac}[data-phase="READY"]`, WAIT);
    assert.match(await page.locator(evac).innerText(), /done: nothing of the job left there/);
    await page.waitForSelector(`#blocklist tr[data-id="${host}"][data-state="evacuated"]`, WAIT);
    await page.close();
    for (const h of [host, other]) assert.equal((await admin('DELETE', `/blocklist/nodes/${h}`)).status, 200);
  });

  it('while the AMRM proxy is down a new block reads pending with the error; it is applied once the proxy is back', async () => {
    const host = await idleHost();
    const page = await open(VIEWER_TOKEN);
    assert.equal((await http(c.sim.url, 'PUT', '/sim/v1/faults/amrm', { outage: 'unavailable' })).status, 200);
    try {
      assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'during the outage' })).status, 201, 'the store takes the block');
      const row = `#blocklist tr[data-id="${host}"]`;
      await page.waitForSelector(`${row}[data-state="pending"]`, WAIT);
      await page.waitForSelector('#last-error', WAIT);
      await page.waitForSelector(`#nodes .node[data-host="${host}"][data-state="pending"]`, WAIT);
      assert.match(await page.locator(`${row} .sync-cell`).innerText(), /pending\s+not yet applied/);
      await b.shot(page, 'proxy-outage');
    } finally {
      assert.equal((await http(c.sim.url, 'DELETE', '/sim/v1/faults/amrm')).status, 200);
    }
    await page.waitForSelector(`#blocklist tr[data-id="${host}"][data-state="applied"]`, WAIT);
    await page.waitForSelector(`#blacklist-diff tr[data-host="${host}"][data-diff=""]`, WAIT);
    await page.close();
    assert.equal((await admin('DELETE', `/blocklist/nodes/${host}`)).status, 200);
  });

  it('an expired block leaves the page by itself', async () => {
    const host = await idleHost();
    const page = await open(ADMIN_TOKEN);
    assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'brief', timeout: 1500 })).status, 201);
    const row = `#blocklist tr[data-id="${host}"]`;
    await page.waitForSelector(row, WAIT);
    assert.match(await page.locator(`${row} .ends`).innerText(), /in [01]s/);
    await page.waitForSelector(row, { state: 'detached', ...WAIT });
    await page.waitForSelector(`#nodes .node[data-host="${host}"][data-state="ok"]`, WAIT);
    await page.close();
  });

  it('the detector (shadow mode): a failing host reads would-block (then shadow-blocked), marked shadow; a job-wide failure blames nobody', async () => {
    const hosts = c.sim.flink.hostsWithTaskManagers().filter((h) => h !== c.sim.cluster.currentAttempt.amHost);
    const [victim, ...others] = hosts;
    for (let i = 0; i < 3; i++) {
      assert.equal((await http(c.sim.url, 'POST', '/sim/v1/flink/failures', { host: victim, exception: 'java.io.IOException: No space left on device' })).status, 200);
      assert.equal((await http(c.sim.url, 'POST', '/sim/v1/flink/failures', { hosts: others.slice(0, 3), exception: 'java.lang.NullPointerException: user code' })).status, 200);
    }
    const page = await open(VIEWER_TOKEN);
    await page.waitForSelector('#detector [data-mode="shadow"]', WAIT);
    // One sidecar of the job runs the detector: this one (no other sidecar shares its store).
    await page.waitForSelector('#detector [data-runner="runner"]', WAIT);
    const row = `#detector tr[data-host="${victim}"]`;
    // 'would-block' in the pass that decides, 'shadow-blocked' while the would-be block runs.
    await page.waitForSelector(`${row}:is([data-decision="would-block"], [data-decision="shadow-blocked"])`, WAIT);
    assert.match(await page.locator(row).innerText(), /(would-block|shadow-blocked)\s+shadow/);
    assert.match(await page.locator(row).innerText(), /No space left on device/);
    // Its standing reads as the CLI's: toward the next block, and what its incidents count for.
    assert.match(await page.locator(`${row} td[data-label="toward a block"]`).innerText(), /^\d of 3$/);
    assert.match(await page.locator(`${row} td[data-label="incidents"]`).innerText(), /^3: (3 counting|3 spent by a block)$/);
    for (const h of others.slice(0, 3)) await page.waitForSelector(`#detector tr[data-host="${h}"][data-decision="job-fault"]`, WAIT);
    assert.match(await page.locator('#detector').innerText(), /Shadow mode: decisions are shown, nothing is blocked/);
    await b.shot(page, 'detector');
    assert.equal((await admin('GET', `/blocklist/nodes/${victim}`)).status, 404, 'shadow mode blocked nothing');
    await page.close();
  });

  it('links go where YARN says: the application’s RM page, Flink’s web UI, each node’s NodeManager page, each TaskManager’s Flink page', async () => {
    const [host] = busyHosts();
    const tm = c.sim.cluster.taskManagers().find((t) => t.host === host);
    if (!tm) throw new Error(`no task manager on ${host}`);
    const id = `${host}/${tm.id}`;
    const app = c.sim.cluster.applicationId;
    // Flink's web UI is the tracking URL the RM's application report names, whatever it is.
    const report = (await http(c.sim.url, 'GET', `/ws/v1/cluster/apps/${app}`)).body as { app: { trackingUrl: string } };
    const flink = report.app.trackingUrl;
    assert.match(flink, new RegExp(`^http://[^/]+/proxy/${app}/$`));
    assert.equal((await admin('PUT', `/blocklist/taskmanagers/${encodeURIComponent(id)}`, { action: 'MARK_BLOCKED', cause: 'slow TM' })).status, 201);
    try {
      const page = await open(VIEWER_TOKEN);
      await page.waitForSelector('header a.app-link', WAIT);
      assert.equal(await page.locator('header a.app-link').getAttribute('href'), `${c.sim.url}/cluster/app/${app}`);
      assert.equal(await page.locator('header a.flink-link').getAttribute('href'), flink);
      assert.equal(await page.locator('header a.rm-link').getAttribute('href'), `${c.sim.url}/cluster/nodes`);
      const row = `#blocklist tr[data-id="${id}"]`;
      await page.waitForSelector(`${row} a.node-link`, WAIT);
      assert.equal(await page.locator(`${row} a.node-link`).getAttribute('href'), `http://${host}:8042/node`);
      assert.equal(await page.locator(`${row} a.tm-link`).getAttribute('href'), `${flink}#/task-manager/${tm.id}/metrics`);
      assert.equal(await page.locator(`${row} a.tm-link`).getAttribute('rel'), 'noopener noreferrer');
      await page.close();
    } finally {
      // A failed check must not leave its item to the next scenarios (they count rows).
      assert.equal((await admin('DELETE', `/blocklist/taskmanagers/${encodeURIComponent(id)}`)).status, 200);
    }
  });

  it('an evacuation with a deadline counts down beside its grace bar; its containers link to Flink', async () => {
    const [, host] = busyHosts();
    const page = await open(VIEWER_TOKEN);
    assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'memory errors (EDAC)', evacuationTimeout: 600 })).status, 201);
    const evac = `#evacuations li[data-item="${host}"]`;
    await page.waitForSelector(`${evac}[data-phase="WAIT_CONTAINER"] progress.grace`, WAIT);
    assert.match(await page.locator(`${evac} .deadline`).innerText(), /deadline in (10m|9m 5\ds)/);
    const grace = Number(await page.locator(`${evac} progress.grace`).getAttribute('value'));
    assert.ok(grace >= 0 && grace <= 2, `grace used ${grace} %`);
    await page.click(`${evac} details.containers summary`);
    const first = c.sim.cluster.taskManagers().find((t) => t.host === host);
    if (!first) throw new Error(`no task manager on ${host}`);
    assert.match(await page.locator(`${evac} details.containers a.tm-link`).first().getAttribute('href') ?? '', /#\/task-manager\/container_.+\/metrics$/);
    await page.close();
    assert.equal((await admin('DELETE', `/blocklist/nodes/${host}`)).status, 200);
  });

  it('the chart draws blocked and evacuating nodes over the sidecar’s samples', async () => {
    const host = await idleHost();
    const page = await open(VIEWER_TOKEN);
    await waitForTrue(page, "Number(document.querySelector('#history .chart svg')?.dataset.points) >= 3");
    assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'for the chart' })).status, 201);
    // The legend says the figures now; the blocked line steps up to it.
    await waitForTrue(page, `document.querySelector('#history [data-series="blocked"] strong')?.innerText === document.querySelector('#summary [data-figure="blocked"]')?.innerText`);
    assert.equal(await page.locator('#history polyline.line-blocked').count(), 1);
    assert.equal(await page.locator('#history polyline.line-evacuating').count(), 1);
    assert.match((await page.locator('#history .chart svg').getAttribute('aria-label')) ?? '', /^Blocked nodes \d+, evacuating \d+, deferred \d+ over the last /);
    assert.ok(((await page.locator('#history .tick').allTextContents()).some((t) => /^\d\d:\d\d$/.test(t))), 'time ticks in UTC');
    await page.close();
    assert.equal((await admin('DELETE', `/blocklist/nodes/${host}`)).status, 200);
  });

  it('the end of a block is typed as an ISO time (no mm/dd/yyyy picker), checked as typed, and sent as that instant', async () => {
    const host = await idleHost();
    const page = await open(ADMIN_TOKEN);
    await page.fill('#block-node', host);
    await page.fill('#block-cause', 'until the vendor swaps the DIMM');
    await page.check('#block-ends-at');
    assert.equal(await page.locator('#block-end').getAttribute('type'), 'text');
    await page.fill('#block-end', '12/01/2026 6:00 PM');
    await page.waitForSelector('#block-end-hint.bad', WAIT);
    await page.click('#block-preview');
    await page.waitForSelector('#block-error', WAIT);
    assert.match(await page.locator('#block-error').innerText(), /is not an ISO time/);
    const end = Math.ceil((Date.now() + 2 * 3_600_000) / 60_000) * 60_000;
    const text = new Date(end).toISOString().slice(0, 16).replace('T', ' ') + 'Z';
    await page.fill('#block-end', text);
    await waitForTrue(page, `/^= ${text.replace('Z', ':00Z')}, in (1h 5\\d|2h)/.test(document.querySelector('#block-end-hint')?.innerText ?? '')`);
    await page.click('#block-preview');
    await page.waitForSelector('#preview', WAIT);
    await page.click('#block-confirm');
    await page.waitForSelector(`#blocklist tr[data-id="${host}"]`, WAIT);
    assert.equal(((await admin('GET', `/blocklist/nodes/${host}`)).body as { endTimestamp: string }).endTimestamp, String(end));
    await page.close();
    assert.equal((await admin('DELETE', `/blocklist/nodes/${host}`)).status, 200);
  });

  it('a long cause is one line that opens to the whole; an unknown host has its tile', async () => {
    const host = await idleHost();
    const long = `automatic: 5 failures in 10 min: ${'java.io.IOException: No space left on device at org.apache.flink.runtime.io.disk; '.repeat(8)}`.trim();
    assert.equal((await admin('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: long })).status, 201);
    assert.equal((await admin('PUT', '/blocklist/nodes/nodo-typo.sim.local', { action: 'MARK_BLOCKED', cause: 'a typo' })).status, 201);
    const page = await open(VIEWER_TOKEN);
    const cause = `#blocklist tr[data-id="${host}"] td.cause details.fold`;
    await page.waitForSelector(cause, WAIT);
    const folded = await page.locator(`#blocklist tr[data-id="${host}"] td.cause`).innerText();
    assert.ok(folded.length < 80, `folded to ${folded.length} characters`);
    assert.equal(await page.locator(cause).getAttribute('open'), null);
    await page.click(`${cause} summary`);
    assert.equal((await page.locator(`${cause} .full`).innerText()).trim(), long);
    await waitForTrue(page, `document.querySelector('#summary [data-figure="unknown"]')?.innerText === '1'`);
    assert.match(await page.locator('#summary [data-tile="unknown"]').innerText(), /nodo-typo\.sim\.local/);
    await page.click('#summary [data-tile="unknown"] button');
    await waitForTrue(page, "document.querySelectorAll('#blocklist tbody tr').length === 1");
    assert.equal(await page.locator('#blocklist tbody tr').getAttribute('data-id'), 'nodo-typo.sim.local');
    await page.close();
    for (const id of [host, 'nodo-typo.sim.local']) assert.equal((await admin('DELETE', `/blocklist/nodes/${id}`)).status, 200);
  });

  it('at 1280 px and on a 400 px phone nothing is wider than the screen and every button is on it (the docs’ screenshots)', async () => {
    const [busy] = busyHosts();
    const [a, bHost] = [await idleHost(), await idleHost([await idleHost()])];
    const tm = c.sim.cluster.taskManagers().find((t) => t.host !== busy && t.host !== c.sim.cluster.currentAttempt.amHost);
    if (!tm) throw new Error('no second task manager');
    const made = [
      [`/blocklist/nodes/${a}`, { action: 'MARK_BLOCKED', cause: 'disk full on /data3', timeout: 7_200_000 }],
      [`/blocklist/nodes/${busy}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'kernel soft lockups', evacuationTimeout: 900 }],
      [`/blocklist/nodes/${bHost}`, { action: 'MARK_BLOCKED', cause: `NIC drops packets; ${'the switch sees the link flapping, '.repeat(5)}ticket OPS-4411`, timeout: 3_600_000 }],
      [`/blocklist/taskmanagers/${encodeURIComponent(`${tm.host}/${tm.id}`)}`, { action: 'MARK_BLOCKED', cause: 'GC storms in this TM', timeout: 1_800_000 }],
      ['/blocklist/nodes/nodo0099.sim.local', { action: 'MARK_BLOCKED', cause: 'a typo in the host name' }],
    ] as const;
    for (const [p, body] of made) assert.equal((await admin('PUT', p, body)).status, 201, p);
    const page = await open(ADMIN_TOKEN);
    await page.waitForSelector(`#evacuations li[data-item="${busy}"]`, WAIT);
    await page.waitForSelector('#detector', WAIT);
    await waitForTrue(page, "Number(document.querySelector('#history .chart svg')?.dataset.points) >= 4");
    const docs = process.env.BLOCKLIST_DOCS_SCREENSHOTS === '1';
    for (const [width, name] of [[1280, 'console'], [400, 'console-phone']] as const) {
      await page.setViewportSize({ width, height: 900 });
      await waitForTrue(page, `document.documentElement.scrollWidth <= ${width}`);
      const wide = (await page.evaluate(OVERFLOWING)) as string[];
      assert.deepEqual(wide, [], `at ${width} px`);
      const buttons = (await page.evaluate(BUTTONS_OFF_SCREEN)) as string[];
      assert.deepEqual(buttons, [], `every Extend/Unblock button is on the screen at ${width} px`);
      await b.shot(page, name);
      if (docs) await page.screenshot({ path: path.join(repoRoot, 'docs', 'img', `${name}.png`), fullPage: true, ...(width > 600 ? {} : { clip: { x: 0, y: 0, width, height: 1700 } }) });
    }
    await page.close();
    for (const [p] of made) assert.equal((await admin('DELETE', p)).status, 200, p);
  });

  // Last: it leaves its items behind.
  it('a long blocklist is drawn a page of rows at a time; the filter searches all of it', async () => {
    // Scoped to another application: stored and listed, nothing for this job's YARN blacklist.
    const many = Array.from({ length: 230 }, (_, i) => ({ id: `far${String(i).padStart(3, '0')}.example`, action: 'MARK_BLOCKED', cause: `bulk ${i}`, scope: 'application_1652313600000_0999' }));
    assert.equal((await admin('POST', '/blocklist', many)).status, 200);
    const page = await open(VIEWER_TOKEN);
    await page.waitForSelector('#more-rows', WAIT);
    assert.equal(await page.locator('#blocklist tbody tr').count(), 200);
    assert.match(await page.locator('#more-rows').innerText(), /Showing 200 of 230/);
    await page.click('#more-rows button');
    await waitForTrue(page, "document.querySelectorAll('#blocklist tbody tr').length === 230");
    await page.fill('#filter-text', 'far229');
    await waitForTrue(page, "document.querySelectorAll('#blocklist tbody tr').length === 1");
    assert.match(await page.locator('#blocklist tbody tr').innerText(), /not-applicable/);
    await page.close();
    // Left in the store: this is the suite's last test, and 230 deletes would cost seconds.
  });
});
