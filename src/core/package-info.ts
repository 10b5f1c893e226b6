/** What this installation is: the product's version, from the nearest package.json above this file. */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The `version` of the nearest package.json above `from` ('0.0.0' when none says). */
export function packageVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const f = path.join(dir, 'package.json');
    if (fs.existsSync(f)) return (JSON.parse(fs.readFileSync(f, 'utf8')) as { version?: string }).version ?? '0.0.0';
    if (path.dirname(dir) === dir) return '0.0.0';
  }
}
