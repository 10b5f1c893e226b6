import { strict as assert } from 'node:assert';
import { decide, AddRequest } from '../../src/model/decide';
import { newItem } from '../../src/model/merge';
import { BlockedItem, EVACUATE, MARK_BLOCKED } from '../../src/model/item';
import { BlockSpec } from '../../src/model/validate';
import { CasLostError, CasPort, Versioned, casAdd } from '../../src/store/cas-add';
import { encodeItem, decodeItem } from '../../src/store/codec';
import { Deadline } from '../../src/store/retry';
import { FakeClock } from '../../src/core/clock';
import { MemoryStore } from '../../src/store/memory-store';

const T0 = 1_000_000;
const spec = (over: Partial<BlockSpec> = {}): BlockSpec => ({
  id: 'node1', kind: 'node', node: 'node1', action: MARK_BLOCKED, end: { type: 'at', at: T0 + 10_000 }, cause: 'a', scope: 'cluster', allowMerge: true, ...over,
});
const at = (t: number, over: Partial<BlockSpec> = {}, by = 'alice'): BlockedItem => newItem(spec(over), t, { by, from: '127.0.0.1' });
const req = (item: BlockedItem, allowMerge = true): AddRequest => ({ item, allowMerge });

describe('model/decide: the one add/merge decision', () => {
  it('nothing stored → created, the request item is the write', () => {
    const it1 = at(T0);
    assert.deepEqual(decide(undefined, req(it1, false), T0), { outcome: 'created', write: it1 });
  });

  it('an item past its end (inclusive) is gone: a new block starts fresh instead of merging', () => {
    const old = at(T0, { end: { type: 'at', at: T0 + 100 }, cause: 'old' });
    const fresh = at(T0 + 100, { cause: 'new' });
    const d = decide(old, req(fresh, false), T0 + 100);
    assert.equal(d.outcome, 'created');
    assert.equal(d.outcome === 'created' && d.write.cause, 'new');
    assert.equal(decide(old, req(fresh, false), T0 + 99).outcome, 'conflict', 'one ms before its end it is still there');
  });

  it('without allowMerge an existing id is a conflict with code exists and a message', () => {
    const old = at(T0);
    const d = decide(old, req(at(T0 + 1, { cause: 'b' }), false), T0 + 1);
    assert.equal(d.outcome, 'conflict');
    assert.ok(d.outcome === 'conflict');
    assert.equal(d.conflict.code, 'exists');
    assert.match(d.conflict.message, /'node1' is already blocked/);
    assert.equal(d.existing, old);
  });

  it('a merge that adds something is merged: write replaces previous, updated stamp moves, start stays', () => {
    const old = at(T0);
    const d = decide(old, req(at(T0 + 5, { cause: 'b', action: EVACUATE }, 'bob')), T0 + 5);
    assert.ok(d.outcome === 'merged');
    assert.equal(d.previous, old);
    assert.equal(d.write.cause, 'a,b');
    assert.equal(d.write.action, EVACUATE);
    assert.equal(d.write.startTimestamp, T0);
    assert.deepEqual(d.write.updated, { by: 'bob', from: '127.0.0.1', at: T0 + 5 });
    assert.deepEqual(d.write.created, old.created);
  });

  it('a merge that adds nothing is unchanged and hands back the stored item itself', () => {
    const old = at(T0, { cause: 'a,b' });
    const d = decide(old, req(at(T0 + 5, { cause: 'b', end: { type: 'at', at: T0 + 50 } }, 'bob')), T0 + 5);
    assert.deepEqual(d, { outcome: 'unchanged', item: old });
  });
});

/** A port over one slot whose reads can be made stale: the shape of "changed between read and CAS". */
class SlotPort implements CasPort<number> {
  text: string | undefined;
  version = 0;
  reads = 0;
  writes = 0;
  /** Runs after each read, before the write: another writer's turn. */
  meddle: ((round: number) => void) | undefined;

  async read(id: string): Promise<Versioned<number> | undefined> {
    const r = this.text === undefined ? undefined : { item: decodeItem(this.text), version: this.version, text: this.text };
    this.meddle?.(this.reads++);
    assert.ok(id);
    return r;
  }
  async create(id: string, text: string): Promise<void> {
    if (this.text !== undefined) throw new CasLostError(id);
    this.set(text);
  }
  async replace(id: string, text: string, version: number): Promise<void> {
    if (this.text === undefined || this.version !== version) throw new CasLostError(id);
    this.set(text);
  }
  set(text: string): void {
    this.text = text;
    this.version++;
    this.writes++;
  }
}

const casOpts = (clock = new FakeClock()) => ({
  deadline: new Deadline(5000),
  clock,
  classify: (e: unknown) => (e instanceof CasLostError ? ('contention' as const) : ('fatal' as const)),
  exhausted: (last: unknown) => last,
});

describe('store/cas-add: read → decide → compare-and-set, retried', () => {
  it('the stored item changed between read and CAS: the round is lost, read again, and both causes survive', async () => {
    const port = new SlotPort();
    port.set(encodeItem(at(T0, { cause: 'a' })));
    // After our first read another writer merges 'x' in.
    port.meddle = (round) => {
      if (round === 0) port.set(encodeItem(at(T0, { cause: 'a,x' })));
    };
    const o = await casAdd(port, req(at(T0 + 1, { cause: 'b' })), casOpts());
    assert.equal(o.outcome, 'merged');
    assert.equal(port.reads, 2, 'one lost round, one won');
    assert.equal(decodeItem(port.text ?? '').cause, 'a,x,b');
  });

  it('the id was created between our read (absent) and our create: merged into it on the next round', async () => {
    const port = new SlotPort();
    port.meddle = (round) => {
      if (round === 0) port.set(encodeItem(at(T0, { cause: 'first' })));
    };
    const o = await casAdd(port, req(at(T0 + 1, { cause: 'second' })), casOpts());
    assert.equal(o.outcome, 'merged');
    assert.equal(decodeItem(port.text ?? '').cause, 'first,second');
  });

  it('without allowMerge, losing the create race turns into a conflict (exactly one created)', async () => {
    const port = new SlotPort();
    port.meddle = (round) => {
      if (round === 0) port.set(encodeItem(at(T0, { cause: 'first' })));
    };
    const o = await casAdd(port, req(at(T0 + 1, { cause: 'second' }), false), casOpts());
    assert.equal(o.outcome === 'conflict' && o.conflict.code, 'exists');
    assert.equal(decodeItem(port.text ?? '').cause, 'first');
  });

  it('the item was changed to hold our cause meanwhile: unchanged, nothing written', async () => {
    const port = new SlotPort();
    port.set(encodeItem(at(T0, { cause: 'a' })));
    port.meddle = (round) => {
      if (round === 0) port.set(encodeItem(at(T0, { cause: 'a,b' })));
    };
    const writesBefore = port.writes;
    const o = await casAdd(port, req(at(T0 + 1, { cause: 'b' })), casOpts());
    assert.equal(o.outcome, 'unchanged');
    assert.equal(port.writes, writesBefore + 1, 'only the meddler wrote');
  });

  it('a write whose reply was lost is recognised as ours on the next round (not a conflict with itself)', async () => {
    const port = new SlotPort();
    const transient = new Error('connection loss');
    const create = port.create.bind(port);
    let lose = true;
    port.create = async (id, text) => {
      await create(id, text);
      if (lose) {
        lose = false;
        throw transient; // applied, but the reply never came
      }
    };
    const clock = new FakeClock();
    const pending = casAdd(port, req(at(T0, { cause: 'a' }), false), {
      ...casOpts(clock),
      classify: (e: unknown) => (e === transient ? 'transient' : e instanceof CasLostError ? 'contention' : 'fatal'),
    });
    // The backoff waits on the injected clock: nothing happens until it moves.
    await new Promise((r) => setImmediate(r));
    assert.equal(clock.pendingTimers(), 1);
    clock.advance(20);
    const o = await pending;
    assert.equal(o.outcome, 'created');
  });

  it('50 concurrent merges on one MemoryStore lose rounds and retry, and keep every cause', async () => {
    const s = new MemoryStore();
    let waits = 0;
    const s2 = new MemoryStore({
      backend: s.backend,
      beforeWrite: async () => {
        waits++;
        await new Promise((r) => setImmediate(r));
      },
    });
    const outs = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? s : s2).add(req(at(T0 + i, { cause: `c${i}` })))));
    assert.equal(outs.filter((o) => o.outcome === 'created').length, 1);
    assert.equal(outs.filter((o) => o.outcome === 'merged').length, 49);
    assert.ok(waits > 25, `rounds were retried (${waits} writes attempted through the slow instance)`);
    assert.deepEqual((await s.get('node1'))?.cause.split(',').sort(), Array.from({ length: 50 }, (_, i) => `c${i}`).sort());
  });
});
