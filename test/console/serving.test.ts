/**
 * How the sidecar serves the console, over real HTTP: the redirect, the files and their security
 * headers, which parts need a token, the loopback Host guard without tokens, and the status fields
 * the console draws (safety cap, the sidecar's clock, the node list on request).
 */
import { strict as assert } from 'node:assert';
import * as nodeHttp from 'node:http';
import * as path from 'node:path';
import { CONTENT_SECURITY_POLICY } from '../../src/api/console/console-routes';
import { startLocalCluster, LocalCluster } from '../../src/quickstart/local-cluster';
import { http, startTestSidecar, tempDir, TestSidecar } from '../support/sidecar';
import { ADMIN_TOKEN, VIEWER_TOKEN, bearer, writeTokenFile } from '../security/support';

const TOKENS = ['tokens:', `  "${ADMIN_TOKEN}": { name: alice, role: admin }`, `  "${VIEWER_TOKEN}": { name: grafana, role: viewer }`, ''].join('\n');

/** Every file the page loads: index.html's script and links, then each module's static imports. */
async function referencedFiles(base: string): Promise<string[]> {
  const seen = new Set<string>();
  const queue: string[] = [];
  const html = (await http(base, 'GET', '/ui/')).text;
  for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) queue.push(new URL(m[1], `${base}/ui/`).pathname);
  while (queue.length) {
    const p = queue.shift() as string;
    if (seen.has(p)) continue;
    seen.add(p);
    if (!p.endsWith('.js')) continue;
    const js = (await http(base, 'GET', p)).text;
    for (const m of js.matchAll(/(?:^|[;\n])\s*import\s[^'"]*?from\s*['"]([^'"]+)['"]/g)) queue.push(new URL(m[1], base + p).pathname);
  }
  return [...seen].sort();
}

/** A request with a Host header of our choosing (fetch does not let a caller set Host). */
function withHost(base: string, method: string, p: string, host: string, body?: unknown): Promise<{ status: number; text: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = nodeHttp.request({ host: u.hostname, port: u.port, method, path: p, headers: { host, ...(data ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

describe('console: serving', () => {
  describe('without tokens (loopback only)', () => {
    let s: TestSidecar;
    before(async () => {
      s = await startTestSidecar();
    });
    after(() => s.close());

    it('GET / and GET /ui redirect to /ui/', async () => {
      for (const p of ['/', '/ui']) {
        const r = await fetch(s.url + p, { redirect: 'manual' });
        assert.equal(r.status, 302, p);
        assert.equal(r.headers.get('location'), '/ui/');
      }
    });

    it('serves the page and every file it loads, each with the strict CSP and the right type', async () => {
      const files = await referencedFiles(s.url);
      for (const f of ['/ui/app.js', '/ui/app.css', '/ui/vendor/preact-htm.js', '/ui/format.js', '/ui/favicon.svg']) assert.ok(files.includes(f), `${f} in ${files.join(', ')}`);
      for (const f of ['/ui/', ...files]) {
        const r = await http(s.url, 'GET', f);
        assert.equal(r.status, 200, `${f}: ${r.text.slice(0, 200)}`);
        assert.equal(r.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
        assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
        const type = r.headers.get('content-type') ?? '';
        const want = f.endsWith('/') ? /^text\/html/ : f.endsWith('.js') ? /^text\/javascript/ : f.endsWith('.css') ? /^text\/css/ : /^image\/svg\+xml/;
        assert.match(type, want, f);
      }
      assert.match(CONTENT_SECURITY_POLICY, /script-src 'self'(;|$)/);
      assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
    });

    it('the page has no inline script or style (the CSP would refuse it)', async () => {
      const html = (await http(s.url, 'GET', '/ui/')).text;
      for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
        assert.match(m[1], /\bsrc=/, 'every script has a src');
        assert.equal(m[2].trim(), '', 'and no body');
      }
      assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
    });

    it('a file is served only by its own name; a revalidation gets 304', async () => {
      for (const p of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/console-routes.js', '/ui/vendor/../../package.json', '/ui/app.js.map']) {
        const r = await http(s.url, 'GET', p);
        assert.equal(r.status, 404, `${p}: ${r.text.slice(0, 100)}`);
      }
      const first = await http(s.url, 'GET', '/ui/app.js');
      const etag = first.headers.get('etag') ?? '';
      assert.ok(etag);
      const again = await http(s.url, 'GET', '/ui/app.js', undefined, { 'if-none-match': etag });
      assert.equal(again.status, 304);
    });

    it('the session says: anonymous admin, no auth', async () => {
      const r = await http(s.url, 'GET', '/ui/session');
      assert.deepEqual(r.body, { name: 'anonymous', role: 'admin', auth: false });
    });

    it('a request addressed to a non-loopback name is refused (DNS rebinding), console and API alike; loopback names pass', async () => {
      for (const p of ['/ui/', '/ui/app.js', '/ui/session', '/blocklist', '/status']) {
        const r = await withHost(s.url, 'GET', p, 'attacker.example');
        assert.equal(r.status, 403, p);
        assert.match(r.text, /not a loopback name.*DNS rebinding/);
      }
      const v = await s.store.version();
      const put = await withHost(s.url, 'PUT', '/blocklist/nodes/n1', 'attacker.example:8090', { action: 'MARK_BLOCKED', cause: 'x' });
      assert.equal(put.status, 403);
      assert.equal(await s.store.version(), v);
      for (const host of ['localhost', `localhost:${s.port}`, `127.0.0.1:${s.port}`, '[::1]:1', 'LOCALHOST.']) {
        const r = await withHost(s.url, 'GET', '/ui/session', host);
        assert.equal(r.status, 200, `${host}: ${r.text}`);
      }
    });
  });

  describe('with tokens', () => {
    let s: TestSidecar;
    before(async () => {
      const dir = tempDir('blocklist-console-');
      s = await startTestSidecar({ dir, define: { 'rest.auth.tokens-file': writeTokenFile(dir, TOKENS) } });
    });
    after(() => s.close());

    it('the static shell loads without a token (it holds no data); the session, data and unknown /ui/ paths need one', async () => {
      for (const p of ['/ui/', '/ui/app.js', '/ui/vendor/preact-htm.js']) {
        assert.equal((await http(s.url, 'GET', p)).status, 200, p);
        assert.equal((await http(s.url, 'HEAD', p)).status, 200, `HEAD ${p}`);
      }
      assert.equal((await fetch(`${s.url}/`, { redirect: 'manual' })).status, 302);
      for (const p of ['/ui/session', '/ui/history', '/ui/links', '/ui/nope.js', '/ui/vendor/', '/blocklist', '/status']) {
        const r = await http(s.url, 'GET', p);
        assert.equal(r.status, 401, p);
        assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
      assert.equal((await http(s.url, 'GET', '/ui/session', undefined, bearer('wrong-token-0123456789abc'))).status, 401);
    });

    it('the session names the caller and the role; the Host guard is off (a token is the protection)', async () => {
      const admin = await http(s.url, 'GET', '/ui/session', undefined, bearer(ADMIN_TOKEN));
      assert.deepEqual(admin.body, { name: 'alice', role: 'admin', auth: true });
      const viewer = await http(s.url, 'GET', '/ui/session', undefined, bearer(VIEWER_TOKEN));
      assert.deepEqual(viewer.body, { name: 'grafana', role: 'viewer', auth: true });
      const elsewhere = await withHost(s.url, 'GET', '/ui/', 'sidecar.example:8090');
      assert.equal(elsewhere.status, 200);
    });
  });

  describe('rest.console.enabled: false', () => {
    let s: TestSidecar;
    before(async () => {
      s = await startTestSidecar({ define: { 'rest.console.enabled': 'false' } });
    });
    after(() => s.close());

    it('no console: / and /ui/… answer 404, the API is unchanged', async () => {
      for (const p of ['/', '/ui', '/ui/', '/ui/app.js', '/ui/session']) assert.equal((await http(s.url, 'GET', p)).status, 404, p);
      assert.equal((await http(s.url, 'GET', '/blocklist')).status, 200);
      assert.equal((await http(s.url, 'GET', '/status')).status, 200);
    });
  });

  describe('/status fields the console draws', () => {
    let c: LocalCluster;
    before(async () => {
      c = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(tempDir('blocklist-console-status-'), 'b.db'), nodes: 9, containers: 6, tickMs: 100, define: { 'cluster.resource-blocklist.poll-interval': '100 ms', 'cluster.resource-blocklist.full-resync-interval': '1 s' } });
    });
    after(() => c.close());

    it('safetyCap (n of m RUNNING nodes), now, and the nodes with their racks only when asked', async () => {
      const host = c.sim.cluster.nodes[2].host;
      const put = await http(c.sidecar.url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'test' });
      assert.equal(put.status, 201, put.text);
      type S = { now: number; safetyCap?: { blockedRunningNodes: number; runningNodes: number; limit: number; maxBlockedFraction: number }; nodes?: { readAt: number; list: { host: string; rack?: string; state: string }[] }; blacklist: { actual: string[] } };
      let s: S | undefined;
      for (let i = 0; i < 100; i++) {
        s = (await http(c.sidecar.url, 'GET', '/status?nodes=true')).body as S;
        if (s.blacklist.actual.includes(host)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      if (!s?.blacklist.actual.includes(host)) assert.fail('the block did not reach YARN');
      assert.deepEqual(s.safetyCap, { blockedRunningNodes: 1, runningNodes: 9, limit: 2, maxBlockedFraction: 0.33 });
      assert.ok(Math.abs(s.now - Date.now()) < 5_000);
      assert.equal(s.nodes?.list.length, 9);
      const node = s.nodes?.list.find((n) => n.host === host);
      assert.deepEqual(node, { host, rack: c.sim.cluster.nodes[2].rack, state: 'RUNNING' });
      const plain = (await http(c.sidecar.url, 'GET', '/status')).body as S;
      assert.equal(plain.nodes, undefined);
      assert.ok(plain.safetyCap);
      assert.equal((await http(c.sidecar.url, 'GET', '/status?nodes=maybe')).status, 400);
    });

    it('/ui/history: the chart’s samples, the live figures last; /ui/links: the RM, the application, Flink, a node’s page', async () => {
      type H = { intervalMs: number; points: { t: number; blocked: number; evacuating: number; deferred: number; unapplied: number }[] };
      const h = (await http(c.sidecar.url, 'GET', '/ui/history')).body as H;
      assert.equal(h.intervalMs, 60_000);
      assert.ok(h.points.length >= 1, JSON.stringify(h));
      const last = h.points[h.points.length - 1];
      assert.ok(Math.abs(last.t - Date.now()) < 5_000);
      assert.equal(last.blocked, 1, 'the block of the test before');
      assert.deepEqual({ evacuating: last.evacuating, deferred: last.deferred, unapplied: last.unapplied }, { evacuating: 0, deferred: 0, unapplied: 0 });
      const links = (await http(c.sidecar.url, 'GET', '/ui/links')).body as Record<string, unknown>;
      const app = c.sim.cluster.applicationId;
      assert.deepEqual(links, {
        rm: c.sim.url,
        applicationId: app,
        application: `${c.sim.url}/cluster/app/${app}`,
        // The simulator reports Flink's tracking URL as a real RM does: behind the RM's proxy (its own address).
        flink: `${c.sim.url}/proxy/${app}/`,
        nodePage: { scheme: 'http', port: 8042 },
      });
    });

    it("blacklist.owners: every owner's share of the AM's blacklist, as last read from the proxy", async () => {
      const theirs = c.sim.cluster.nodes[5].host;
      const r = await http(c.sim.url, 'POST', '/amrm/v1/blacklist', { owner: 'flink-speculative', blacklistAdditions: [theirs], blacklistRemovals: [] });
      assert.ok(r.status < 300, r.text);
      type S = { blacklist: { owners?: Record<string, string[]> } };
      let owners: Record<string, string[]> | undefined;
      // The proxy's blacklist is re-read at least every full-resync-interval (1 s here).
      for (let i = 0; i < 60 && !owners?.['flink-speculative']?.includes(theirs); i++) {
        await new Promise((res) => setTimeout(res, 50));
        owners = ((await http(c.sidecar.url, 'GET', '/status')).body as S).blacklist.owners;
      }
      assert.deepEqual(owners?.['flink-speculative'], [theirs]);
      assert.ok(owners?.blocklist?.includes(c.sim.cluster.nodes[2].host), JSON.stringify(owners));
    });
  });
});
