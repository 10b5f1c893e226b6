/**
 * How a streamed GET /blocklist shares the event loop (src/api/listing-cache.ts): a chunk ends
 * after a couple of milliseconds of work however costly an item's live part is, and every
 * listing's steps share one budget per event-loop turn, so other callbacks (a /healthz request)
 * run in between. No server: the cache over an in-memory source, the stream read directly.
 */
import { strict as assert } from 'node:assert';
import { Readable } from 'node:stream';
import { ListingCache, LiveParts } from '../../src/api/listing-cache';
import { STREAM_ABOVE, fullListing } from '../../src/api/listing-body';
import { BlockedItem } from '../../src/model/item';
import { nodeItem } from '../sync/items';

const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

function cacheOf(n: number): { cache: ListingCache; items: BlockedItem[] } {
  const items = Array.from({ length: n }, (_, i) => nodeItem(`h${String(i).padStart(6, '0')}.example.com`));
  return { cache: new ListingCache({ version: async () => '1', list: async () => items }), items };
}

async function drain(s: Readable, onChunk: (b: Buffer) => void = () => undefined): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of s) {
    parts.push(c as Buffer);
    onChunk(c as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

describe('listing cache: pacing of streamed listings', () => {
  it('a chunk ends after ~2 ms of work when items are costly (here 1 ms each), and the body is still every item once', async () => {
    const { cache, items } = cacheOf(STREAM_ABOVE + 50);
    let slow = 0;
    const live = (): LiveParts => {
      // The first 30 items cost 1 ms each (as the nearest-host search can), the rest nothing.
      if (slow < 30) {
        slow++;
        busy(1);
      }
      return { taskManagers: [] };
    };
    const out = fullListing(cache, await cache.entries(), { now: Date.now(), filter: {}, live });
    assert.ok(out instanceof Readable);
    const sizes: number[] = [];
    const body = await drain(out, (b) => {
      // Members of a chunk are separated by `,"h`; count items per data event.
      sizes.push(b.toString('utf8').split('"h').length - 1);
    });
    const parsed = JSON.parse(body) as Record<string, { taskManagers: string[] }>;
    assert.deepEqual(Object.keys(parsed), items.map((i) => i.id));
    const firstChunkItems = sizes.find((n) => n > 0) ?? 0;
    assert.ok(firstChunkItems >= 1 && firstChunkItems <= 5, `the first chunk held ${firstChunkItems} costly items (≤ 5 expected at 1 ms each)`);
  });

  it('steps of many listings share one budget per turn: other callbacks run between them', async () => {
    const { cache } = cacheOf(STREAM_ABOVE + 10);
    const steps = 40;
    let ran = 0;
    let ranWhenTickFired = -1;
    // Each step costs 3 ms: 40 of them would hold one turn for 120 ms without the budget. The
    // first step arms a timer (due 1 ms later), as a request arriving meanwhile would wait.
    let tick: Promise<void> = Promise.resolve();
    for (let i = 0; i < steps; i++) {
      cache.pace(() => {
        if (ran === 0) {
          tick = new Promise<void>((resolve) =>
            setTimeout(() => {
              ranWhenTickFired = ran;
              resolve();
            }, 0),
          );
        }
        busy(3);
        ran++;
      });
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    await tick;
    await new Promise<void>((resolve) => {
      const wait = (): void => (ran === steps ? resolve() : void setImmediate(wait));
      wait();
    });
    assert.ok(ranWhenTickFired >= 1 && ranWhenTickFired < steps, `a timer ran after ${ranWhenTickFired} of ${steps} steps (budget: a few per turn)`);
  });
});
