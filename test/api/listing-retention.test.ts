/**
 * The listing's serialisation is kept while a listing is being sent from it and released after
 * rest.listing.cache-retention (src/api/listing-cache.ts). A client that walks away in the middle of
 * a streamed listing must not keep it forever: that depends on Fastify destroying the response
 * stream when the connection closes, which only a real socket shows. Real HTTP on 127.0.0.1,
 * memory store, fake clock for the retention.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { BlockedItem } from '../../src/model/item';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';
import { nodeItem } from '../sync/items';

/** Enough items that the body (~12 MB) outgrows the loopback socket's buffers: the server must wait for the client. */
const ITEMS = 40_000;
const RETENTION = 30_000;

/** A memory store that counts full reads: the listing cache reads the store only to build its serialisation. */
class CountingStore extends MemoryStore {
  lists = 0;
  override async list(): Promise<readonly BlockedItem[]> {
    this.lists++;
    return super.list();
  }
}

describe('api: GET /blocklist serialisation released after an abandoned listing (real HTTP)', () => {
  let app: FastifyInstance;
  let store: CountingStore;
  let clock: FakeClock;
  let port: number;

  before(async () => {
    clock = new FakeClock();
    store = new CountingStore();
    const reqs = Array.from({ length: ITEMS }, (_, i) => ({ item: nodeItem(`h${String(i).padStart(6, '0')}.example.com`, { start: clock.now() }), allowMerge: false }));
    await store.addMany(reqs);
    app = await buildApi({ store, sync: new NoSync(true), clock, logger: silentLogger, audit: new MemoryAudit(), enabled: true, listingRetentionMs: RETENTION });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  after(() => app.close());

  const page = async (): Promise<void> => {
    const r = await app.inject({ method: 'GET', url: '/blocklist?limit=1' });
    assert.equal(r.statusCode, 200, r.body);
  };

  it('kept while a client reads slowly, released the retention after the client hung up', async () => {
    // A client that takes the first bytes of a full listing and then stops reading.
    let req: http.ClientRequest | undefined;
    await new Promise<void>((resolve, reject) => {
      req = http.get({ host: '127.0.0.1', port, path: '/blocklist' }, (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', () => {
          res.pause();
          resolve();
        });
      });
      req.on('error', reject);
    });
    assert.equal(store.lists, 1);
    // Long past the retention while the listing is still being sent: kept (a page reuses it).
    clock.advance(2 * RETENTION);
    await page();
    assert.equal(store.lists, 1, 'the serialisation was released under a listing still being sent');

    req?.destroy();
    // The server sees the connection close in its own time; each round gives the retention a chance to pass.
    const until = Date.now() + 5000;
    while (store.lists === 1 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 20));
      clock.advance(RETENTION);
      await page();
    }
    assert.equal(store.lists, 2, 'the serialisation was never released after the client hung up: the abandoned listing still holds it');
  });
});
