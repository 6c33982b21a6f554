// The command line of `npm run bench:reconcile` (scripts/bench-reconcile.ts).
import path from 'node:path';

export interface Options {
  sizes: number[];
  runs: number;
  /** Runs per figure for sizes above 50,000 (each costs tens of seconds). */
  bigRuns: number;
  keep: boolean;
  /** Only issue 25's rows: check_specs and the window's update after one file change. */
  checkOnly: boolean;
  markOnly: boolean;
  /** Only warm get_spec_diff, get_changed_artifacts and export_context (benchWarmReads). */
  warmReads: boolean;
  repo?: string;
  /** A NotarAI 0.7 binary: the CLI rows then run it beside `grove` and print ratios. */
  notarai?: string;
}

export function parseOptions(argv: string[]): Options {
  const options: Options = {
    sizes: [20_000, 200_000],
    runs: 3,
    bigRuns: 1,
    keep: false,
    checkOnly: false,
    markOnly: false,
    warmReads: false,
  };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--check-only') options.checkOnly = true;
    if (arg === '--sizes') options.sizes = (argv[++index] ?? '').split(',').map(Number);
    else if (arg === '--runs') options.runs = Number(argv[++index]);
    else if (arg === '--big-runs') options.bigRuns = Number(argv[++index]);
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--mark-only') options.markOnly = true;
    else if (arg === '--warm-reads') options.warmReads = true;
    else if (arg === '--repo') options.repo = argv[++index];
    else if (arg === '--notarai') options.notarai = path.resolve(argv[++index] ?? '');
  }
  return options;
}
