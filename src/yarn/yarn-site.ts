/**
 * Reading the RM's web address from Hadoop's yarn-site.xml, as an AM container sees it
 * ($HADOOP_CONF_DIR/yarn-site.xml), so the launch script needs no duplicate configuration.
 *
 * Hadoop's rules (yarn-default.xml, YarnConfiguration):
 *  - yarn.resourcemanager.webapp.address defaults to ${yarn.resourcemanager.hostname}:8088,
 *    yarn.resourcemanager.webapp.https.address to ${yarn.resourcemanager.hostname}:8090;
 *  - yarn.http.policy HTTPS_ONLY makes the https address the one to use;
 *  - with yarn.resourcemanager.ha.enabled, each id in yarn.resourcemanager.ha.rm-ids has its own
 *    yarn.resourcemanager.webapp.address.<id> (or hostname.<id> + the default port);
 *  - ${name} references are expanded from the same file (Configuration#substituteVars).
 */
import * as fs from 'node:fs';
import { XMLParser } from 'fast-xml-parser';

export interface YarnSite {
  /** RM web addresses, host:port (several under HA), with the scheme when HTTPS_ONLY. */
  rmWebAddresses: string[];
  httpsOnly: boolean;
  properties: Map<string, string>;
}

export class YarnSiteError extends Error {}

export function parseYarnSite(xml: string, source = 'yarn-site.xml'): YarnSite {
  let doc: unknown;
  try {
    doc = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: true, isArray: (name) => name === 'property' }).parse(xml, true);
  } catch (e) {
    throw new YarnSiteError(`${source} is not valid XML: ${(e as Error).message}`);
  }
  const conf = (doc as { configuration?: { property?: { name?: unknown; value?: unknown }[] } }).configuration;
  if (!conf) throw new YarnSiteError(`${source} has no <configuration> element`);
  const props = new Map<string, string>();
  for (const p of conf.property ?? []) {
    if (typeof p.name === 'string') props.set(p.name.trim(), p.value === undefined || p.value === null ? '' : String(p.value).trim());
  }

  const get = (name: string, fallback?: string): string | undefined => {
    const raw = props.get(name) ?? fallback;
    return raw === undefined ? undefined : expand(raw, 0);
  };
  const expand = (v: string, depth: number): string =>
    depth > 20 ? v : v.replace(/\$\{([^}]+)\}/g, (_, n: string) => (props.has(n) ? expand(props.get(n) as string, depth + 1) : n === 'yarn.resourcemanager.hostname' ? '0.0.0.0' : `\${${n}}`));

  const httpsOnly = (get('yarn.http.policy') ?? 'HTTP_ONLY').toUpperCase() === 'HTTPS_ONLY';
  const key = httpsOnly ? 'yarn.resourcemanager.webapp.https.address' : 'yarn.resourcemanager.webapp.address';
  const port = httpsOnly ? 8090 : 8088;
  const scheme = httpsOnly ? 'https://' : '';

  const addresses: string[] = [];
  if ((get('yarn.resourcemanager.ha.enabled') ?? 'false').toLowerCase() === 'true') {
    const ids = (get('yarn.resourcemanager.ha.rm-ids') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    if (!ids.length) throw new YarnSiteError(`${source}: yarn.resourcemanager.ha.enabled is true but yarn.resourcemanager.ha.rm-ids is empty`);
    for (const id of ids) {
      const addr = get(`${key}.${id}`) ?? (get(`yarn.resourcemanager.hostname.${id}`) ? `${get(`yarn.resourcemanager.hostname.${id}`)}:${port}` : undefined);
      if (!addr) throw new YarnSiteError(`${source}: neither ${key}.${id} nor yarn.resourcemanager.hostname.${id} is set`);
      addresses.push(scheme + addr);
    }
  } else {
    addresses.push(scheme + (get(key) ?? `${get('yarn.resourcemanager.hostname', '0.0.0.0')}:${port}`));
  }
  return { rmWebAddresses: addresses, httpsOnly, properties: props };
}

export function readYarnSite(file: string): YarnSite {
  let xml: string;
  try {
    xml = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new YarnSiteError(`cannot read ${file}: ${(e as Error).message}`);
  }
  return parseYarnSite(xml, file);
}
