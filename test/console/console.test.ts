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
import { Browser, launchBrowser, skipWithoutChromium } from './browser';

const TOKENS = ['tokens:', `  "${ADMIN_TOKEN}": { name: alice, role: admin }`, `  "${VIEWER_TOKEN}": { name: grafana, role: viewer }`, ''].join('\n');
const WAIT = { timeout: 10_000 };

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
    await page.waitForFunction('document.documentElement.scrollWidth <= window.innerWidth', undefined, WAIT);
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
    assert.equal(await page.locator(`${row} td[data-label="kind"]`).innerText(), 'rack');
    for (const h of hosts) await page.waitForSelector(`#nodes .node[data-host="${h}"][data-state="blocked"]`, WAIT);
    await page.selectOption('#filter-kind', 'rack');
    await page.waitForFunction("document.querySelectorAll('#blocklist tbody tr').length === 1", undefined, WAIT);
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
    await page.waitForFunction(`document.querySelector('#safety-cap')?.innerText.includes('${limit} of ${running}')`, undefined, WAIT);
    assert.match(await page.locator('#safety-cap').innerText(), new RegExp(`${limit} of ${running} RUNNING nodes blacklisted \\(at most ${limit}.*1 deferred`));
    await page.waitForSelector('#nodes .node[data-state="deferred"]', WAIT);
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
    const evac = `#evacuations tr[data-item="${host}"]`;
    await page.waitForSelector(`${evac}[data-phase="WAIT_CONTAINER"]`, WAIT);
    await page.waitForSelector(`#blocklist tr[data-id="${host}"][data-state="evacuating"]`, WAIT);
    await page.waitForSelector(`#nodes .node[data-host="${host}"][data-state="evacuating"]`, WAIT);
    assert.match(await page.locator(`#blocklist tr[data-id="${host}"] .sync-cell`).innerText(), /WAIT_CONTAINER, \d+ containers? left/);
    await b.shot(page, 'evacuating');

    // The containers end (as if Flink moved them); the simulator places none there: it is blacklisted.
    for (let round = 0; round < 20; round++) {
      const left = c.sim.cluster.taskManagers().filter((t) => t.host === host);
      if (!left.length) break;
      for (const t of left) await http(c.sim.url, 'POST', `/sim/v1/containers/${t.id}/kill`);
      await page.waitForTimeout(100);
    }
    await page.waitForSelector(`${evac}[data-phase="READY"]`, WAIT);
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
    for (const h of others.slice(0, 3)) await page.waitForSelector(`#detector tr[data-host="${h}"][data-decision="job-fault"]`, WAIT);
    assert.match(await page.locator('#detector').innerText(), /Shadow mode: decisions are shown, nothing is blocked/);
    await b.shot(page, 'detector');
    assert.equal((await admin('GET', `/blocklist/nodes/${victim}`)).status, 404, 'shadow mode blocked nothing');
    await page.close();
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
    await page.waitForFunction("document.querySelectorAll('#blocklist tbody tr').length === 230", undefined, WAIT);
    await page.fill('#filter-text', 'far229');
    await page.waitForFunction("document.querySelectorAll('#blocklist tbody tr').length === 1", undefined, WAIT);
    assert.match(await page.locator('#blocklist tbody tr').innerText(), /not-applicable/);
    await page.close();
    // Left in the store: this is the suite's last test, and 230 deletes would cost seconds.
  });
});
