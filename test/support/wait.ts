/**
 * The one polling wait of the suites: `cond` is checked every `pollMs` until it holds; the answer
 * is how long that took (ms, for figures), and after `timeoutMs` it fails naming `what`.
 */
export async function pollUntil(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000, pollMs = 10): Promise<number> {
  const t0 = performance.now();
  while (!(await cond())) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return performance.now() - t0;
}
