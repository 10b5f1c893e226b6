/**
 * npm run bench [-- --quick] [--only <section>[,<section>…]] [--soak-seconds N] [--markdown FILE]
 *
 * Runs the benchmarks (docs/benchmarks.md) and prints every figure next to the limit measured
 * in the same run and their ratio. Sections: propagation, reconcile, throughput, evacuation, memory,
 * rm-footprint, listing, evacuation-flink, evacuation-yarn (real Flink JVMs).
 * --quick uses small sizes (well under 30 s) for a smoke run; the published figures use the
 * defaults. --markdown writes the result table (and the machine's load) to FILE as well.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { ALL_SECTIONS, BenchSizes, SectionName, runBench, sizesFor } from './suite';
import { markdownTable } from './lib/report';

interface Args {
  quick: boolean;
  only: SectionName[];
  soakSeconds?: number;
  markdown?: string;
}

function usage(msg?: string): never {
  if (msg) console.error(msg);
  console.error(`usage: npm run bench -- [--quick] [--only ${ALL_SECTIONS.join('|')}[,…]] [--soak-seconds N] [--markdown FILE]`);
  process.exit(2);
}

function parseArgs(argv: string[]): Args {
  const a: Args = { quick: false, only: [...ALL_SECTIONS] };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const value = (): string => argv[++i] ?? usage(`${k} needs a value`);
    if (k === '--quick') a.quick = true;
    else if (k === '--only') {
      const names = value().split(',').map((x) => x.trim());
      for (const n of names) if (!(ALL_SECTIONS as readonly string[]).includes(n)) usage(`unknown section '${n}'`);
      a.only = names as SectionName[];
    } else if (k === '--soak-seconds') {
      const n = Number(value());
      if (!Number.isFinite(n) || n < 0) usage('--soak-seconds takes a number ≥ 0');
      a.soakSeconds = n;
    } else if (k === '--markdown') a.markdown = value();
    else if (k === '--help' || k === '-h') usage();
    else usage(`unknown argument '${k}'`);
  }
  return a;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const sizes: BenchSizes = sizesFor(args.quick);
  if (args.soakSeconds !== undefined) sizes.memory.soakSeconds = args.soakSeconds;
  const load0 = os.loadavg();
  const started = Date.now();
  console.log(`blocklist benchmarks (${args.quick ? 'quick' : 'full'}): ${args.only.join(', ')}; ${os.cpus().length} CPUs, load average ${load0.map((x) => x.toFixed(2)).join(' ')}`);
  const result = await runBench(args.only, sizes, (line) => console.log(line));
  const load1 = os.loadavg();
  const table = markdownTable(result.rows, result.skipped);
  const header = [
    `Run ${new Date(started).toISOString()}, ${((Date.now() - started) / 1000).toFixed(0)} s, ${args.quick ? 'quick sizes' : 'full sizes'}; node ${process.version}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}.`,
    `Load average (1/5/15 min) at start ${load0.map((x) => x.toFixed(2)).join(' / ')}, at end ${load1.map((x) => x.toFixed(2)).join(' / ')}.`,
  ];
  const text = [...header, '', table, '', ...result.notes.map((n) => `- ${n}`)].join('\n');
  console.log(`\n${text}\n`);
  if (args.markdown) fs.writeFileSync(args.markdown, text + '\n');
  const missed = result.rows.filter((r) => r.met === false).length;
  console.log(`${result.rows.length} figures, ${missed} goal(s) missed, ${result.skipped.length} skipped`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  },
);
