/**
 * What this installation is: the product's version, the Node.js runtime running it (the one bundled
 * in a release tarball, or the host's), and the AMRMProxy interceptor it was built with. A release
 * carries build-info.json (scripts/release/stage.js); a checkout reads am-proxy/pom.xml instead.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ReleaseInfo {
  product: string;
  /** process.version of the running runtime. */
  node: string;
  /** The runtime's path, and whether it is the one bundled beside the product. */
  nodePath: string;
  bundled: boolean;
  /** The registry package the bundled runtime came from (release only). */
  runtimePackage?: string;
  interceptor: string;
  /** Where the product is installed (the folder holding package.json). */
  home: string;
}

interface BuildInfo {
  product?: string;
  runtime?: string;
  interceptor?: string;
}

/** The nearest folder above `from` that holds package.json (dist/src/cli → the checkout or release). */
export function productHome(from: string = __dirname): string | undefined {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return undefined;
}

/** package.json's version of this installation. */
export function productVersion(from: string = __dirname): string {
  const home = productHome(from);
  return (home && readJson<{ version?: string }>(path.join(home, 'package.json'))?.version) || 'unknown';
}

export function releaseInfo(from: string = __dirname): ReleaseInfo {
  const home = productHome(from) ?? from;
  const build = readJson<BuildInfo>(path.join(home, 'build-info.json'));
  const bundledNode = path.join(home, 'node', 'bin', 'node');
  return {
    product: productVersion(from),
    node: process.version,
    nodePath: process.execPath,
    bundled: samePath(process.execPath, bundledNode),
    runtimePackage: build?.runtime,
    interceptor: build?.interceptor ?? pomVersion(path.join(home, 'am-proxy', 'pom.xml')) ?? 'unknown',
    home,
  };
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function pomVersion(pom: string): string | undefined {
  try {
    return /<artifactId>am-proxy-parent<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(fs.readFileSync(pom, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

function samePath(a: string, b: string): boolean {
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
}
