/** GoneSweep: gone jobs' records are looked for beside the passes, one sweep at a time. */
import { strict as assert } from 'node:assert';
import { GoneSweep } from '../../src/sync/gone-job-sweeps';
import { LogFields, Logger, silentLogger } from '../../src/core/logger';

function held(): { promise: Promise<number>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<number>((r) => (release = () => r(0)));
  return { promise, release };
}

describe('sync/gone-job-sweeps', () => {
  it('starts without waiting (a pass goes on), runs one sweep at a time, then both families in order', async () => {
    const calls: string[] = [];
    const slow = held();
    const sweep = new GoneSweep({
      starts: { collect: (_items, now) => (calls.push(`starts@${now}`), slow.promise) },
      also: async (app, now) => void calls.push(`also:${app}@${now}`),
      logger: silentLogger,
    });
    sweep.start([], 'application_1_0001', 1);
    assert.ok(sweep.running, 'a sweep runs');
    sweep.start([], 'application_1_0001', 2);
    assert.deepEqual(calls, ['starts@1'], 'a second start while one runs starts nothing');
    slow.release();
    await sweep.running;
    assert.deepEqual(calls, ['starts@1', 'also:application_1_0001@1']);
    assert.equal(sweep.running, undefined);
    sweep.start([], undefined, 3);
    await sweep.running;
    assert.deepEqual(calls.slice(2), ['starts@3'], 'without an application id only the evacuation starts are looked at');
  });

  it('a failing sweep is logged and over; the next one starts', async () => {
    const warned: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (m: string, _f?: LogFields) => void warned.push(m) };
    let fail = true;
    const sweep = new GoneSweep({
      starts: {
        collect: async () => {
          if (fail) throw new Error('store is down');
          return 0;
        },
      },
      logger,
    });
    sweep.start([], 'application_1_0001', 1);
    await sweep.running;
    assert.match(warned[0] ?? '', /gone failed .*store is down/);
    fail = false;
    sweep.start([], 'application_1_0001', 2);
    assert.ok(sweep.running);
    await sweep.running;
    assert.equal(warned.length, 1);
  });
});
