/**
 * The listing's cached serialisation is released after a quiet interval (src/api/listing-cache.ts,
 * rest.listing.cache-retention): kept while listings keep using it or one is still being sent,
 * released once none has for the interval, built again by the next listing. Fake clock; no server.
 */
import { strict as assert } from 'node:assert';
import { Readable } from 'node:stream';
import { FakeClock } from '../../src/core/clock';
import { ListingCache } from '../../src/api/listing-cache';
import { STREAM_ABOVE, fullListing } from '../../src/api/listing-body';
import { toWire } from '../../src/model/item';
import { nodeItem } from '../sync/items';

const RETENTION = 30_000;

function cacheOf(n: number, retentionMs = RETENTION): { cache: ListingCache; clock: FakeClock; builds: () => number } {
  const items = Array.from({ length: n }, (_, i) => nodeItem(`h${String(i).padStart(6, '0')}.example.com`));
  const clock = new FakeClock();
  let lists = 0;
  const source = {
    version: async () => '1',
    list: async () => {
      lists++;
      return items;
    },
  };
  return { cache: new ListingCache(source, { clock, retentionMs }), clock, builds: () => lists };
}

async function drain(s: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

describe('listing cache: release after a quiet interval', () => {
  it('keeps the serialisation for the retention after a listing, then releases it; the next listing builds it again', async () => {
    const { cache, clock, builds } = cacheOf(10);
    await cache.entries();
    assert.equal(cache.held, true);
    clock.advance(RETENTION - 1);
    assert.equal(cache.held, true, 'released before the retention ended');
    await cache.entries();
    assert.equal(builds(), 1, 'a listing within the retention reuses the serialisation');
    // That use moved the release: RETENTION after it, not after the first.
    clock.advance(RETENTION - 1);
    assert.equal(cache.held, true, 'released although a listing used it less than the retention ago');
    clock.advance(1);
    assert.equal(cache.held, false, 'still held after the retention with no listing');
    assert.equal(clock.pendingTimers(), 0, 'a timer is left armed with nothing to release');
    await cache.entries();
    assert.equal(builds(), 2, 'the listing after a release builds the serialisation again');
    assert.equal(cache.held, true);
  });

  it('is not released under a streamed listing still being sent, and is released the retention after it ends', async () => {
    const { cache, clock, builds } = cacheOf(STREAM_ABOVE + 10);
    const out = fullListing(cache, await cache.entries(), { now: clock.now(), filter: {}, live: () => ({ taskManagers: [] }) });
    assert.ok(out instanceof Readable);
    // A slow client: nothing read while the clock passes the retention twice.
    clock.advance(2 * RETENTION);
    assert.equal(cache.held, true, 'released while a listing was being sent from it');
    const body = JSON.parse(await drain(out)) as Record<string, unknown>;
    assert.equal(Object.keys(body).length, STREAM_ABOVE + 10);
    clock.advance(RETENTION - 1);
    assert.equal(cache.held, true, 'released sooner than the retention after the listing ended');
    clock.advance(1);
    assert.equal(cache.held, false);
    assert.equal(builds(), 1);
  });

  it('a listing abandoned by its client (the stream destroyed) does not keep the serialisation', async () => {
    const { cache, clock } = cacheOf(STREAM_ABOVE + 10);
    const out = fullListing(cache, await cache.entries(), { now: clock.now(), filter: {}, live: () => ({ taskManagers: [] }) });
    assert.ok(out instanceof Readable);
    out.destroy();
    clock.advance(RETENTION);
    assert.equal(cache.held, false);
  });

  it('retention 0 releases as soon as no listing is being sent; close() leaves no timer', async () => {
    const zero = cacheOf(10, 0);
    await zero.cache.entries();
    zero.clock.advance(0);
    assert.equal(zero.cache.held, false);

    const { cache, clock } = cacheOf(10);
    await cache.entries();
    assert.equal(clock.pendingTimers(), 1);
    cache.close();
    assert.equal(clock.pendingTimers(), 0);
  });
});

describe('listing cache: the serialisation in pages', () => {
  it('a listing whose stored part spans several 8 MB pages is every item once, each exactly its wire form', async () => {
    // ~330 bytes per head: 30,000 items are ~10 MB, two pages and a slice cut at a page's end.
    const n = 30_000;
    const { cache } = cacheOf(n);
    const e = await cache.entries();
    const pages = new Set(e.slabs.map((b) => b.buffer));
    assert.ok(pages.size >= 2, `the serialisation took ${pages.size} page(s); the test needs it to span several`);
    const out = fullListing(cache, e, { now: Date.now(), filter: {}, live: () => ({ taskManagers: [] }) });
    assert.ok(out instanceof Readable);
    const body = JSON.parse(await drain(out)) as Record<string, Record<string, unknown>>;
    const ids = Object.keys(body);
    assert.equal(ids.length, n);
    for (const item of e.items) assert.deepEqual(body[item.id], { ...JSON.parse(JSON.stringify(toWire(item))), taskManagers: [] }, item.id);
  });
});
