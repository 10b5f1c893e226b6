/**
 * One sidecar's shared-cluster-state member in a process of its own, so a test can SIGKILL it (a
 * sidecar that dies without closing its ZooKeeper session). argv: quorum base rmUrl member
 * sessionTimeoutMs. Prints one JSON line per role change and per leader read on stdout.
 */
import { systemClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { ZkSession } from '../../src/store/zookeeper/session';
import { SharedClusterState } from '../../src/sidecar/shared-cluster-state';
import { ResourceManagerClient } from '../../src/yarn/rm-client';

const [quorum, base, rmUrl, member, sessionTimeout] = process.argv.slice(2);
const session = new ZkSession({ hosts: quorum, sessionTimeoutMs: Number(sessionTimeout), operationTimeoutMs: 3000 });
const share = new SharedClusterState({
  rm: new ResourceManagerClient({ addresses: rmUrl }),
  session,
  basePath: base,
  member,
  clock: systemClock,
  logger: silentLogger,
  operationTimeoutMs: 3000,
  metricsIntervalMs: 200,
  nodesIntervalMs: 400,
});
share.election.on('role', (role: string) => process.stdout.write(JSON.stringify({ role, member }) + '\n'));
share.start();
setInterval(() => undefined, 1000);
