/** The real logger's level check: kept per level, and asked again once the level moves. */
import { strict as assert } from 'node:assert';
import type * as winston from 'winston';
import { createLogger } from '../../src/log/logger';

describe('log/logger: isLevelEnabled', () => {
  it('answers as the level says, and again after the level changes', () => {
    const logger = createLogger({ level: 'error', silent: true });
    assert.equal(logger.isLevelEnabled?.('info'), false);
    assert.equal(logger.isLevelEnabled?.('error'), true);
    assert.equal(logger.isLevelEnabled?.('info'), false, 'the kept answer');
    (logger as unknown as winston.Logger).level = 'debug';
    assert.equal(logger.isLevelEnabled?.('info'), true);
    assert.equal(logger.isLevelEnabled?.('debug'), true);
    (logger as unknown as winston.Logger).level = 'warn';
    assert.equal(logger.isLevelEnabled?.('info'), false);
    assert.equal(logger.child({ component: 'x' }).isLevelEnabled?.('warn'), true, 'a child asks the same logger');
    assert.equal(logger.child({ component: 'x' }).isLevelEnabled?.('info'), false);
  });
});
