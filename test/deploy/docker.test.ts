/**
 * Dockerfile and docker-compose.yml, without a Docker engine (none runs on the build machines):
 * every path they copy or name exists, the image's layout — built in a folder the way the
 * Dockerfile's last stage builds it — starts and serves the console at /ui/, and the compose file
 * validates with `docker compose config` (or Debian's docker-compose) where one is installed.
 */
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { listeningUrl } from '../support/child-sidecar';
import { repoRoot, tempDir } from '../support/paths';
import { http } from '../support/sidecar';

interface Copy {
  from?: string;
  sources: string[];
  dest: string;
  /** The destination ends with '/' (or several sources): each source goes inside it under its own name. */
  into: boolean;
}
interface Stage {
  name?: string;
  workdir: string;
  copies: Copy[];
  entrypoint?: string[];
}

/** The Dockerfile's stages with their COPY lines (the only instructions that name files). */
function dockerStages(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const line of text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim())) {
    const [op, ...rest] = line.split(/\s+/);
    if (op === 'FROM') stages.push({ name: /\bAS\s+(\S+)/i.exec(line)?.[1], workdir: '/', copies: [] });
    const stage = stages[stages.length - 1];
    if (op === 'WORKDIR') stage.workdir = path.posix.resolve(stage.workdir, rest[0]);
    if (op === 'ENTRYPOINT') stage.entrypoint = JSON.parse(rest.join(' ')) as string[];
    if (op === 'COPY') {
      const from = rest.find((a) => a.startsWith('--from='))?.slice('--from='.length);
      const args = rest.filter((a) => !a.startsWith('--'));
      const dest = args[args.length - 1];
      stage.copies.push({ from, sources: args.slice(0, -1), dest: path.posix.resolve(stage.workdir, dest), into: dest.endsWith('/') || args.length > 2 });
    }
  }
  return stages;
}

const dockerfile = dockerStages(fs.readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'));
const compose = YAML.parse(fs.readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { build?: string; command?: string[]; volumes?: string[] }> };
const image = dockerfile[dockerfile.length - 1];
const build = dockerfile.find((s) => s.name !== undefined && image.copies.some((c) => c.from === s.name));

/** Where a file of the build stage comes from in the checkout: its WORKDIR holds the context's files and what `npm ci` made there. */
const fromBuildStage = (p: string) => path.join(repoRoot, path.posix.relative(build!.workdir, p));

/** The image's last stage as a folder: what each COPY puts at its destination (node_modules linked, not copied). */
function imageLayout(): string {
  const root = tempDir('blocklist-image-');
  for (const c of image.copies) {
    for (const src of c.sources) {
      const from = c.from ? fromBuildStage(src) : path.join(repoRoot, src);
      const to = path.join(root, c.into ? path.join(c.dest, path.basename(src)) : c.dest);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      if (path.basename(from) === 'node_modules') fs.symlinkSync(from, to);
      else fs.cpSync(from, to, { recursive: true });
    }
  }
  return root;
}

/** `docker compose`, else Debian's `docker-compose` (scripts/ensure-compose.sh installs it when CI=true). */
function composeCommand(): string[] | undefined {
  if (spawnSync('docker', ['compose', 'version']).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['--version']).status === 0) return ['docker-compose'];
  return undefined;
}

describe('deploy: Dockerfile and docker-compose.yml', () => {
  it('copies only paths that exist in the build context, and from the build stage what it makes', () => {
    assert.ok(build, 'the last stage copies from a named build stage');
    for (const stage of dockerfile) {
      for (const c of stage.copies) {
        for (const src of c.sources) {
          const there = c.from ? fromBuildStage(src) : path.join(repoRoot, src);
          assert.ok(fs.existsSync(there), `COPY ${c.from ? `--from=${c.from} ` : ''}${src}: ${path.relative(repoRoot, there)} does not exist`);
        }
      }
    }
  });

  it("names in the compose file's commands and volumes only files the image or the checkout has", () => {
    const layout = imageLayout();
    const inImage = (p: string) => fs.existsSync(path.join(layout, p));
    assert.ok(image.entrypoint?.filter((a) => a.startsWith('/')).every(inImage), `ENTRYPOINT ${image.entrypoint?.join(' ')} names a file of the image`);
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const arg of svc.command ?? []) {
        for (const p of arg.match(new RegExp(`${image.workdir}/[\\w./-]+`, 'g')) ?? []) assert.ok(inImage(p), `service ${name}: ${p} is not in the image`);
      }
      for (const v of svc.volumes ?? []) {
        const host = v.split(':')[0];
        if (host.startsWith('.') || host.startsWith('/')) assert.ok(fs.existsSync(path.resolve(repoRoot, host)), `service ${name}: volume ${host} does not exist`);
      }
    }
  });

  it("the image's layout starts with the compose file's token file and serves /ui/", async function () {
    this.timeout(20_000);
    const layout = imageLayout();
    const sidecar = compose.services.sidecar.command ?? [];
    const tokens = sidecar.find((a) => a.startsWith('-Drest.auth.tokens-file='))!.split('=')[1];
    const [node, main, ...cmd] = [...image.entrypoint!, 'sidecar'];
    assert.equal(node, 'node');
    const child = spawn(process.execPath, [path.join(layout, main), ...cmd, '-Drest.port=0', `-Drest.auth.tokens-file=${path.join(layout, tokens)}`, `-Dcluster.resource-blocklist.store.sqlite.path=${path.join(tempDir(), 'b.db')}`], { cwd: layout, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const { url } = await listeningUrl(child, 15_000);
      const ui = await fetch(`${url}/ui/`);
      assert.equal(ui.status, 200);
      assert.match(await ui.text(), /<script type="module"/);
      assert.equal((await fetch(`${url}/ui/app.js`)).status, 200);
      assert.equal((await http(url, 'GET', '/blocklist')).status, 401);
      assert.equal((await http(url, 'GET', '/blocklist', undefined, { authorization: 'Bearer admin-token-change-me' })).status, 200);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('docker-compose.yml validates (docker compose config)', function () {
    const cmd = composeCommand();
    if (!cmd) {
      // CI installs Debian's docker-compose first (scripts/ensure-compose.sh), so this skip is
      // for a developer's machine only, where it counts as skipped, not passed.
      if (process.env.CI === 'true') assert.fail('neither `docker compose` nor `docker-compose` is installed (scripts/ensure-compose.sh should have installed it)');
      this.skip();
    }
    const r = spawnSync(cmd[0], [...cmd.slice(1), '-f', 'docker-compose.yml', 'config', '-q'], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });
});
