/** The audit sink builds a line only for someone who takes it: the logger at info, or the audit file. */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createAuditSink } from '../../src/log/audit';
import { LogFields, LogLevel, Logger } from '../../src/core/logger';
import { nodeItem } from '../sync/items';

function capture(enabled: LogLevel[] | undefined): { logger: Logger; lines: LogFields[] } {
  const lines: LogFields[] = [];
  const drop = (): void => undefined;
  const logger: Logger = {
    error: drop,
    warn: drop,
    debug: drop,
    log: drop,
    info: (_m, f) => void lines.push(f ?? {}),
    child: () => logger,
    ...(enabled ? { isLevelEnabled: (l: LogLevel) => enabled.includes(l) } : {}),
  };
  return { logger, lines };
}

const record = { op: 'put', id: 'h1', who: 'alice', from: '127.0.0.1', outcome: 'created', after: nodeItem('h1') };

describe('log/audit', () => {
  it('logs at info when the logger takes info, or says nothing of its levels; skips the line when it takes only errors', () => {
    for (const [enabled, expected] of [[['error', 'warn', 'info'], 1], [undefined, 1], [['error'], 0]] as const) {
      const { logger, lines } = capture(enabled ? [...enabled] : undefined);
      createAuditSink(logger).record(record);
      assert.equal(lines.length, expected, String(enabled));
      if (expected) assert.equal(lines[0].audit, true);
    }
  });

  it('the audit file gets every line even when the logger takes only errors', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-'));
    try {
      const file = path.join(dir, 'audit.log');
      const { logger, lines } = capture(['error']);
      const sink = createAuditSink(logger, file, () => 1_652_313_600_000);
      sink.record(record);
      sink.record({ ...record, outcome: 'merged' });
      assert.equal(lines.length, 0);
      const written = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { outcome: string; at: string });
      assert.deepEqual(written.map((l) => l.outcome), ['created', 'merged']);
      assert.equal(written[0].at, '2022-05-12T00:00:00.000Z');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the message says a block's end as a time, and a permanent one as permanent (the line's fields keep the wire values)", () => {
    const messages: string[] = [];
    const drop = (): void => undefined;
    const logger: Logger = { error: drop, warn: drop, debug: drop, log: drop, info: (m) => void messages.push(m), child: () => logger };
    const sink = createAuditSink(logger);
    sink.record(record);
    sink.record({ ...record, after: nodeItem('h2', { end: Date.UTC(2030, 0, 1) }) });
    assert.match(messages[0], /\(MARK_BLOCKED, cause "test", permanent\)$/);
    assert.doesNotMatch(messages[0], /9223372036854775807/);
    assert.match(messages[1], /ends 2030-01-01T00:00:00\.000Z\)$/);
  });
});
