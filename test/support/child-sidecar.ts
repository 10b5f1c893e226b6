/**
 * A `blocklist sidecar` as a child process (directly, or through scripts/launch-in-am.sh): waiting
 * until it listens (it prints `sidecar listening on <url>` once its port is bound).
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from './paths';

const LISTENING = /sidecar listening on (https?:\/\/[\d.:]+)/;

export interface Listening {
  url: string;
  /** Everything the child printed so far (stdout and stderr, interleaved), also after it listens. */
  output(): string;
}

/** Resolves at the line; rejects with all it printed if the child exits first or is silent for `timeoutMs`. */
export function listeningUrl(child: ChildProcess, timeoutMs = 10_000): Promise<Listening> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sidecar did not start within ${timeoutMs} ms: ${out}`)), timeoutMs);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = LISTENING.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], output: () => out });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sidecar exited with ${code}: ${out}`));
    });
  });
}

export interface LaunchedInAm extends Listening {
  child: ChildProcess;
}

/**
 * scripts/launch-in-am.sh as YARN runs it in the AM container (`env` carries CONTAINER_ID,
 * HADOOP_CONF_DIR…), with `-D` flags, waited for until its sidecar listens; killed if it never does.
 * The caller stops it (child.kill) when done.
 */
export async function launchInAm(flags: string[], env: NodeJS.ProcessEnv, timeoutMs = 10_000): Promise<LaunchedInAm> {
  const child = spawn('bash', [path.join(repoRoot, 'scripts', 'launch-in-am.sh'), ...flags], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    return { child, ...(await listeningUrl(child, timeoutMs)) };
  } catch (e) {
    child.kill('SIGTERM');
    throw e;
  }
}

/** A yarn-site.xml in `dir` naming the RM's web address, as HADOOP_CONF_DIR holds it in a container. */
export function writeYarnSite(dir: string, rmWebapp: string): void {
  fs.writeFileSync(
    path.join(dir, 'yarn-site.xml'),
    `<?xml version="1.0"?><configuration><property><name>yarn.resourcemanager.webapp.address</name><value>${rmWebapp.replace('http://', '')}</value></property></configuration>`,
  );
}
