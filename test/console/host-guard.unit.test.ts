/**
 * The loopback Host rule (src/api/host-guard.ts): which Host headers count as this machine when no
 * tokens are configured. A name an attacker can point at 127.0.0.1 must never pass.
 */
import { strict as assert } from 'node:assert';
import { hostName, isLoopbackHostHeader } from '../../src/api/host-guard';

describe('console: loopback Host rule', () => {
  it('the host part of a Host header, with or without a port, IPv6 in brackets', () => {
    assert.equal(hostName('LocalHost:8090'), 'localhost');
    assert.equal(hostName('[::1]:8090'), '[::1]');
    assert.equal(hostName('127.0.0.1'), '127.0.0.1');
  });

  it('loopback names pass, with any port', () => {
    for (const h of ['localhost', 'localhost:8090', 'LOCALHOST.', 'app.localhost:1', '127.0.0.1', '127.1.2.3:8090', '[::1]', '[::1]:8090']) {
      assert.equal(isLoopbackHostHeader(h), true, h);
    }
  });

  it('anything else is refused, including names that merely start like loopback', () => {
    for (const h of ['example.com', 'localhost.example.com', 'localhost.evil:80', '127.0.0.1.evil.com', '127.0.0.1evil', '0.0.0.0', '10.0.0.7:8090', '[::ffff:127.0.0.1]', '[fe80::1]', '', 'local host']) {
      assert.equal(isLoopbackHostHeader(h), false, h);
    }
  });
});
