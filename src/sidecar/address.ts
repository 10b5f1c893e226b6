/**
 * Where this sidecar can be reached, told to those who look for it: the record it publishes in
 * ZooKeeper (store/zookeeper/sidecar-registry.ts) and writes to `rest.address-file`. With
 * `rest.port: 0` (the AM profile) nobody can know the port beforehand.
 *
 * The host in the record is `rest.address` when set (as Flink's key of that name: the address
 * clients use), else the address the API is bound to, except a wildcard bind (0.0.0.0, ::), which
 * names no host: then the NodeManager's host name YARN gives the container (NM_HOST), else the
 * machine's.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AddressInfo } from 'node:net';
import { formatApplicationId, formatAttemptId, parseContainerId } from '../model/ids';
import type { SidecarRecord } from '../store/zookeeper/sidecar-registry';

export interface AdvertiseInput {
  bound: AddressInfo;
  tls: boolean;
  /** rest.address ('' = derive it). */
  restAddress: string;
  env: NodeJS.ProcessEnv;
  version: string;
  application: string;
  attempt?: string;
  /** Epoch ms the API started listening. */
  started: number;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

export function advertisedRecord(i: AdvertiseInput): SidecarRecord {
  const configured = i.restAddress.trim();
  const bound = i.bound.address;
  const host = configured || (WILDCARDS.has(bound) ? i.env.NM_HOST?.trim() || os.hostname() : bound);
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const scheme = i.tls ? 'https' : 'http';
  const address = `${hostPart}:${i.bound.port}`;
  return {
    url: `${scheme}://${address}`,
    address,
    scheme,
    version: i.version,
    application: i.application,
    ...(i.attempt ? { attempt: i.attempt } : {}),
    started: new Date(i.started).toISOString(),
    host: i.env.NM_HOST?.trim() || os.hostname(),
    pid: process.pid,
  };
}

/** The attempt of the container this process runs in (CONTAINER_ID), when it belongs to `application`. */
export function attemptOfContainer(env: NodeJS.ProcessEnv, application: string): string | undefined {
  const c = parseContainerId(env.CONTAINER_ID?.trim() ?? '');
  if (!c.ok) return undefined;
  if (formatApplicationId(c.value.application) !== application) return undefined;
  return formatAttemptId({ application: c.value.application, attempt: c.value.attempt });
}

/** Writes the record to `file` whole (a reader never sees half of it). */
export function writeAddressFile(file: string, record: SidecarRecord): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(record, null, 2) + '\n', { mode: 0o644 });
  fs.renameSync(tmp, file);
}

/** Removes `file` if it still holds this process's record (a newer sidecar may have written it since). */
export function removeAddressFile(file: string): void {
  try {
    const r = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid?: unknown };
    if (r.pid === process.pid) fs.rmSync(file, { force: true });
  } catch {
    // gone, or not ours to judge: leave it
  }
}
