/**
 * One key of the ResourceManager's own configuration, as its `/conf` servlet answers it (Hadoop's
 * ConfServlet, served by every Hadoop daemon's web server): `GET /conf?name=<key>` with
 * `Accept: application/json` answers `{"property":{"key":…,"value":…,"isFinal":…,"resource":…}}`
 * (Configuration#dumpConfiguration), otherwise `<configuration><property><name>…</name><value>…`;
 * a key without a value is a 404 ("Property … not found").
 */

/** The value of `key` in a /conf answer, or undefined when the answer does not hold it. */
export function parseConfAnswer(text: string, key: string): string | undefined {
  const json = jsonValue(text, key);
  if (json !== undefined) return json;
  // The XML form: the first <property> whose <name> is the key.
  for (const m of text.matchAll(/<property>([\s\S]*?)<\/property>/g)) {
    const name = /<name>\s*([^<]*?)\s*<\/name>/.exec(m[1])?.[1];
    if (name === key) return /<value>\s*([^<]*?)\s*<\/value>/.exec(m[1])?.[1] ?? '';
  }
  return undefined;
}

function jsonValue(text: string, key: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const asProperty = (p: unknown): string | undefined => {
    if (p === null || typeof p !== 'object') return undefined;
    const o = p as Record<string, unknown>;
    return o.key === key && typeof o.value === 'string' ? o.value : undefined;
  };
  if (doc === null || typeof doc !== 'object') return undefined;
  const d = doc as Record<string, unknown>;
  if (d.property !== undefined) return asProperty(d.property);
  // The whole dump ({"properties":[…]}), from an RM that ignores `name`.
  if (Array.isArray(d.properties)) {
    for (const p of d.properties) {
      const v = asProperty(p);
      if (v !== undefined) return v;
    }
  }
  return undefined;
}
