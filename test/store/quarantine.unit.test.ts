import { strict as assert } from 'node:assert';
import { Logger, LogFields } from '../../src/core/logger';
import { MemoryStore } from '../../src/store/memory-store';
import { newItem } from '../../src/model/merge';

/** A logger that keeps its lines. */
function capture(): Logger & { lines: { level: string; message: string; fields?: LogFields }[] } {
  const lines: { level: string; message: string; fields?: LogFields }[] = [];
  const l = {
    lines,
    error: (message: string, fields?: LogFields) => lines.push({ level: 'error', message, fields }),
    warn: (message: string, fields?: LogFields) => lines.push({ level: 'warn', message, fields }),
    info: (message: string, fields?: LogFields) => lines.push({ level: 'info', message, fields }),
    debug: (message: string, fields?: LogFields) => lines.push({ level: 'debug', message, fields }),
    log: (level: string, message: string, fields?: LogFields) => lines.push({ level, message, fields }),
    child: () => l,
  };
  return l as Logger & { lines: typeof lines };
}

describe('store/quarantine: a row that cannot be decoded is named once in the log', () => {
  it('one warning per newly quarantined row, naming it and how to remove it; none on later reads', async () => {
    const logger = capture();
    const s = new MemoryStore({ logger });
    await s.add({ item: newItem({ id: 'good', kind: 'node', node: 'good', action: 'MARK_BLOCKED', end: { type: 'permanent' }, cause: 'x', scope: 'cluster', allowMerge: false }, 1000, { by: 'a', from: 'b' }), allowMerge: false });
    s.backend.writeRaw('bad', '{garbage');
    assert.deepEqual((await s.list()).map((i) => i.id), ['good']);
    await s.list();
    const warns = logger.lines.filter((l) => l.level === 'warn');
    assert.equal(warns.length, 1, JSON.stringify(logger.lines));
    assert.match(warns[0].message, /quarantined item 'bad'.*not enforced.*blocklist unblock bad/);
    assert.equal(warns[0].fields?.id, 'bad');
    assert.match(String(warns[0].fields?.reason), /cannot be decoded: not JSON/);
  });
});
