/**
 * The console's confirm beside another writer (headless Chromium, a real sidecar on SQLite, the
 * simulator over HTTP). An admin previews an unblock or an extend, and before they confirm another
 * admin changes that block through the API. The confirm must not undo the newer change: the page
 * sends the version of the block it showed (If-Match) and the API refuses a block that is no
 * longer that version (412), which the page shows. Without it, the stale unblock deleted the other
 * admin's fresh block, and the stale extend re-created a block the other admin had just lifted.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { sidecarConfigForSimulator } from '../../src/quickstart/local-cluster';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { silentLogger } from '../../src/core/logger';
import { http, tempDir } from '../support/sidecar';
import { ADMIN_TOKEN, SECOND_ADMIN_TOKEN, bearer, writeTokenFile } from '../security/support';
import { Browser, launchBrowser, skipWithoutChromium } from './browser';

const TOKENS = ['tokens:', `  "${ADMIN_TOKEN}": { name: alice, role: admin }`, `  "${SECOND_ADMIN_TOKEN}": { name: carol, role: admin }`, ''].join('\n');
const WAIT = { timeout: 10_000 };

describe('console: a stale confirm does not undo another admin’s newer change', function () {
  this.timeout(60_000);
  let sim: RunningSimulator;
  let sidecar: Sidecar;
  let b: Browser;

  before(async function () {
    skipWithoutChromium(this);
    const dir = tempDir('blocklist-console-stale-');
    sim = await startSimulator({ port: 0, nodes: 12, containers: 4, tickMs: 100, seed: 3 });
    const config = sidecarConfigForSimulator(sim.url, path.join(dir, 'blocklist.db'), {
      'rest.port': '0',
      'rest.auth.tokens-file': writeTokenFile(dir, TOKENS),
      'cluster.resource-blocklist.poll-interval': '100 ms',
    });
    sidecar = await startSidecar({ config, logger: silentLogger, env: {} });
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await sidecar?.close();
    await sim?.close();
  });
  afterEach(() => {
    const problems = b?.problems.splice(0) ?? [];
    assert.deepEqual(problems, [], 'no script error and no CSP refusal in the page');
  });

  const alice = (method: string, p: string, body?: unknown) => http(sidecar.url, method, p, body, bearer(ADMIN_TOKEN));
  const carol = (method: string, p: string, body?: unknown) => http(sidecar.url, method, p, body, bearer(SECOND_ADMIN_TOKEN));

  async function open(): Promise<Page> {
    const page = await b.page();
    await page.goto(`${sidecar.url}/ui/?refresh=250`);
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('#login button[type=submit]');
    await page.waitForSelector('#blocklist', WAIT);
    return page;
  }

  /** The page at the preview of `action` on `host`'s row (extend: to 2 h), ready to confirm. */
  async function preview(host: string, action: 'unblock' | 'extend'): Promise<Page> {
    const page = await open();
    const row = `#blocklist tr[data-id="${host}"]`;
    await page.waitForSelector(row, WAIT);
    await page.click(`${row} button.${action}`);
    if (action === 'extend') {
      await page.fill('#extend-timeout', '2 h');
      await page.click('#extend-preview');
    }
    await page.waitForSelector('#action-preview', WAIT);
    return page;
  }

  it('unblock: the block was replaced meanwhile (lifted and blocked again by another admin): confirm is refused, the new block stays', async () => {
    const host = sim.cluster.nodes[1].host;
    assert.equal((await alice('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'disk full', timeout: 3_600_000 })).status, 201);
    const page = await preview(host, 'unblock');

    assert.equal((await carol('DELETE', `/blocklist/nodes/${host}`)).status, 200);
    assert.equal((await carol('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'NIC flapping' })).status, 201);

    await page.click('#action-confirm');
    await page.waitForSelector('#action-error', WAIT);
    assert.match(await page.locator('#action-error').innerText(), /changed since/);
    const now = await alice('GET', `/blocklist/nodes/${host}`);
    assert.equal(now.status, 200, "carol's block is still there");
    assert.equal((now.body as { cause: string; createdBy: string }).cause, 'NIC flapping');
    await page.close();
  });

  it('extend: the block was lifted meanwhile: confirm is refused and does not block the host again', async () => {
    const host = sim.cluster.nodes[2].host;
    assert.equal((await alice('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'short', timeout: 600_000 })).status, 201);
    const page = await preview(host, 'extend');

    assert.equal((await carol('DELETE', `/blocklist/nodes/${host}`)).status, 200);

    await page.click('#action-confirm');
    await page.waitForSelector('#action-error', WAIT);
    assert.match(await page.locator('#action-error').innerText(), /unblocked since|changed since/);
    assert.equal((await alice('GET', `/blocklist/nodes/${host}`)).status, 404, 'the lifted block is not re-created');
    await page.close();
  });

  it('extend: an unchanged block is still extended (the version the page shows is the stored one)', async () => {
    const host = sim.cluster.nodes[3].host;
    assert.equal((await alice('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'short', timeout: 600_000 })).status, 201);
    // A merge by another admin before the page loads is part of what the page shows.
    assert.equal((await carol('PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'and hot', allowMerge: true })).status, 202);
    const page = await preview(host, 'extend');
    await page.click('#action-confirm');
    await page.waitForSelector('.notice.ok', WAIT);
    const end = Number(((await alice('GET', `/blocklist/nodes/${host}`)).body as { endTimestamp: string }).endTimestamp);
    assert.ok(end - Date.now() > 100 * 60_000, 'the block now ends about 2 h from now');
    await page.close();
  });
});
