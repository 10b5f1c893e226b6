/**
 * Debian's chromium, headless, driven by playwright-core (no browser download: the system binary).
 * One browser per test run; each scenario gets its own page (its own sessionStorage, so its own
 * login). Outside CI a missing chromium skips the suite with the reason; in CI it fails
 * (scripts/ensure-chromium.sh installs it there).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BrowserContext, Page, chromium } from 'playwright-core';
import { repoRoot } from '../support/paths';

export const CHROMIUM = process.env.BLOCKLIST_CHROMIUM ?? '/usr/bin/chromium';

/** Flags for a quiet, hermetic headless run: no GPU, no sandbox (root in CI), nothing phoning home. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Screenshots land here (gitignored): test artefacts a person can look at after a run. */
export const ARTEFACTS = path.join(repoRoot, 'test-artifacts', 'console');

export function skipWithoutChromium(ctx: Mocha.Context): void {
  if (fs.existsSync(CHROMIUM)) return;
  const why = `${CHROMIUM} not found (apt-get install chromium, or run scripts/ensure-chromium.sh)`;
  if (process.env.CI === 'true') throw new Error(`the console's browser suite cannot run in CI: ${why}`);
  console.log(`      (skipped: ${why})`);
  ctx.skip();
}

export interface Browser {
  context: BrowserContext;
  /** A new tab (fresh sessionStorage) that fails the test on any script error or CSP violation. */
  page(): Promise<Page>;
  /** Errors the pages reported (uncaught exceptions, CSP refusals). */
  problems: string[];
  shot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  // A fresh profile per run: nothing from an earlier run (or the user's own chromium) leaks in.
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-chromium-'));
  // launchPersistentContext passes the profile as --user-data-dir itself.
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1360, height: 900 },
    timeout: 30_000,
  });
  fs.mkdirSync(ARTEFACTS, { recursive: true });
  const problems: string[] = [];
  return {
    context,
    problems,
    async page() {
      const p = await context.newPage();
      p.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      p.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
      });
      return p;
    },
    async shot(page, name) {
      const file = path.join(ARTEFACTS, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until `expression` (JavaScript, run in the page) is true, asking every 50 ms for at most
 * `timeoutMs`. Not page.waitForFunction: with a string it polls through `new Function` inside the
 * page, which the console's CSP (no 'unsafe-eval') refuses; page.evaluate runs from outside it.
 */
export async function waitForTrue(page: Page, expression: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await page.evaluate(expression)) return;
    if (Date.now() > until) throw new Error(`not true within ${timeoutMs} ms: ${expression}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
