// `--mark-only`: mark_reconciled through the client, each mark right after a `b3sum` of the same
// files, with the stages the worktree process traced (GROVE_STAGE_TIMINGS).
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import type { Host } from '../../main/host/host.ts';
import type { Client } from '@modelcontextprotocol/client';
import { type Options } from './bench-options.ts';
import { b3sumAll, fileName, fmt, generate, medianOf, processCpuMs, time } from './bench-repo.ts';
import {
  type StageMarks,
  callOk,
  dropLiveIndex,
  mcpClientOf,
  stagesFile,
  takeStageTraces,
} from './served-client.ts';

/**
 * A mark_reconciled request's stages between its arrival and its answer leaving, in ms, from the
 * worktree process's marks; `client` is the rest of what the client measured (its request's
 * serialization, the loopback, reading the answer).
 */
const MARK_STAGES = [
  ['request read + JSON.parse', 'arrived', 'body-parsed'],
  ['SDK: JSON-RPC checks, server, input validation', 'body-parsed', 'handler-started'],
  ['confinement checks (paths)', 'handler-started', 'checked'],
  ['hashing (workers)', 'checked', 'hashed'],
  ['rows + sort', 'hashed', 'sorted'],
  ['DB open / create', 'sorted', 'db-ready'],
  ['transaction (upserts)', 'db-ready', 'committed'],
  ['after commit', 'committed', 'handler-done'],
  ['answer: result, output validation, write', 'handler-done', 'answer-sent'],
] as const;

type StageFigures = Record<string, number>;

function markStages(marks: StageMarks, clientMs: number): StageFigures | undefined {
  const at = (name: string): number | undefined => marks.find(([stage]) => stage === name)?.[1];
  const figures: StageFigures = {};
  for (const [label, from, to] of MARK_STAGES) {
    const start = at(from);
    const end = at(to);
    if (start === undefined || end === undefined) return undefined;
    figures[label] = end - start;
  }
  // Of the SDK's share: validating the 20,000 paths against the input schema.
  const validating = at('validating');
  const validated = at('validated');
  if (validating !== undefined && validated !== undefined) {
    figures['  of which input validation'] = validated - validating;
  }
  const served = at('answer-sent') ?? 0;
  figures['client: request out, answer in'] = clientMs - served;
  figures.total = clientMs;
  return figures;
}

export interface MarkFigures {
  /** mark_reconciled alone, each run. */
  ms: number[];
  /** clear_cache + mark_reconciled, each run (the figure earlier runs reported as "cold"). */
  withClearMs: number[];
  /** The `b3sum` right before each mark. */
  b3sumMs: number[];
  stages: StageFigures[];
}

/**
 * One cold mark: clear_cache, then mark_reconciled of `files` (the live index made to vouch for
 * nothing first when `afterWrite`; `beforeMark` runs between the two), both timed into `figures`.
 * Resolves to the mark's time.
 */
async function clearAndMark(
  client: Client,
  root: string,
  files: readonly string[],
  afterWrite: boolean,
  figures: MarkFigures,
  beforeMark?: () => Promise<unknown>,
): Promise<number> {
  if (afterWrite) await dropLiveIndex(root);
  const cleared = await time(() => callOk(client, 'clear_cache', {}));
  await beforeMark?.();
  const marked = await time(() => callOk(client, 'mark_reconciled', { files }));
  figures.ms.push(marked.ms);
  figures.withClearMs.push(cleared.ms + marked.ms);
  return marked.ms;
}

/**
 * mark_reconciled of every file through the client, `runs` times, each right after a `b3sum` of
 * the same files. `afterWrite`: the .gitignore is rewritten just before, which the live index
 * cannot apply path by path (it changes what git lists), so it vouches for nothing and every file
 * is read. (A file written elsewhere no longer does that: the index forgets that path only.) Cold
 * either way: clear_cache first, so the mark creates notarai.db.
 */
export async function markRuns(
  served: { client: Client; settled(since: number): Promise<void> },
  root: string,
  files: readonly string[],
  runs: number,
  traces: string,
  afterWrite: boolean,
): Promise<MarkFigures> {
  const { client } = served;
  const figures: MarkFigures = { ms: [], withClearMs: [], b3sumMs: [], stages: [] };
  for (let run = 0; run < runs; run++) {
    figures.b3sumMs.push((await time(() => b3sumAll(root, files))).ms);
    const markedMs = await clearAndMark(client, root, files, afterWrite, figures, () =>
      takeStageTraces(traces),
    );
    // The mark's write makes the window's state be recomputed: not during the next b3sum.
    await served.settled(performance.now());
    const traced = (await takeStageTraces(traces)).find((marks) =>
      marks.some(([stage]) => stage === 'hashed'),
    );
    const stages = traced ? markStages(traced, markedMs) : undefined;
    if (stages) figures.stages.push(stages);
    if (process.env.BENCH_MARKS_RAW) console.log(JSON.stringify(traced));
  }
  return figures;
}

/** The median of a mark's ratios to the `b3sum` run right before each. */
export function markRatio(figures: MarkFigures): number {
  return medianOf(figures.ms.map((ms, run) => ms / (figures.b3sumMs[run] ?? ms)));
}

/** A table cell: the mark's median time and its median ratio to `b3sum`. */
export function markCell(figures: MarkFigures): string {
  return `${fmt(medianOf(figures.ms))} (${markRatio(figures).toFixed(2)}x b3sum right before)`;
}

/**
 * The way a script or an impatient agent calls: clear_cache + mark_reconciled `runs` times with no
 * pause (each mark's write starts the window's recomputation, which then meets the next mark).
 * `b3sum` right before the sequence and right after; each mark is compared with their mean.
 */
async function markBackToBack(
  client: Client,
  root: string,
  files: readonly string[],
  runs: number,
  traces: string,
  afterWrite: boolean,
): Promise<MarkFigures> {
  const figures: MarkFigures = { ms: [], withClearMs: [], b3sumMs: [], stages: [] };
  const before = (await time(() => b3sumAll(root, files))).ms;
  const traced: { marks: StageMarks | undefined; ms: number }[] = [];
  for (let run = 0; run < runs; run++) {
    const markedMs = await clearAndMark(client, root, files, afterWrite, figures);
    traced.push({ marks: undefined, ms: markedMs });
  }
  const after = (await time(() => b3sumAll(root, files))).ms;
  figures.b3sumMs = figures.ms.map(() => (before + after) / 2);
  // Traces were appended as the calls went: the marks' are those with hashing in them.
  const all = await takeStageTraces(traces);
  if (process.env.BENCH_MARKS_RAW) for (const trace of all) console.log(JSON.stringify(trace));
  const marks = all.filter((trace) => trace.some(([stage]) => stage === 'hashed'));
  marks.forEach((trace, index) => {
    const stages = markStages(trace, traced[index]?.ms ?? 0);
    if (stages) figures.stages.push(stages);
  });
  return figures;
}

export function printMarkFigures(title: string, figures: MarkFigures): void {
  const ratios = figures.ms.map((ms, run) => ms / (figures.b3sumMs[run] ?? ms));
  const withClear = figures.withClearMs.map((ms, run) => ms / (figures.b3sumMs[run] ?? ms));
  console.log(
    `\n${title}: mark_reconciled ${fmt(medianOf(figures.ms))} vs b3sum ${fmt(
      medianOf(figures.b3sumMs),
    )} right before: ${medianOf(ratios).toFixed(2)}x median of ${ratios.length} pairs ` +
      `[${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}] (target <= 1.5x: ` +
      `${medianOf(ratios) <= 1.5 ? 'met' : 'MISSED'}); with the clear_cache call before it ` +
      `${fmt(medianOf(figures.withClearMs))}, ${medianOf(withClear).toFixed(2)}x`,
  );
  if (figures.stages.length === 0) return;
  const total = medianOf(figures.stages.map((stages) => stages.total ?? 0));
  console.log(`\n| stage (median of ${figures.stages.length}) | ms | share |`);
  console.log('| --- | ---: | ---: |');
  for (const label of Object.keys(figures.stages[0]!)) {
    if (label === 'total') continue;
    const ms = medianOf(figures.stages.map((stages) => stages[label] ?? 0));
    console.log(`| ${label} | ${ms.toFixed(1)} | ${((100 * ms) / total).toFixed(0)}% |`);
  }
  console.log(`| total, as the client measured | ${total.toFixed(1)} | 100% |`);
}

/**
 * CPU of the worktree process (/proc) around its first mark: from the client's connection to the
 * mark's start (the workers' prestart, beside the `b3sum` before it), and during the mark.
 */
function firstMarkCpu(host: Host): { markStarts(): void; markAnswered(): void } {
  const pid = host.processId(host.snapshot().repos[0]!.worktrees[0]!.id);
  if (pid === undefined) throw new Error('no worktree process');
  const connected = processCpuMs(pid);
  let started = connected;
  return {
    markStarts: () => {
      started = processCpuMs(pid);
      if (process.env.BENCH_MARKS_RAW)
        console.log(
          `threads at the mark: ${readdirSync(`/proc/${pid}/task`)
            .map((t) => readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim())
            .join(',')}`,
        );
    },
    markAnswered: () =>
      console.log(
        `worktree process CPU: ${started - connected} ms from the connection to the first mark, ` +
          `${processCpuMs(pid) - started} ms during it`,
      ),
  };
}

/** --mark-only: the mark rows alone, on a generated (or reused) repository. */
export async function benchMarkOnly(size: number, options: Options): Promise<void> {
  let dir: string;
  let root: string;
  if (options.repo !== undefined) {
    root = path.resolve(options.repo);
    dir = path.dirname(root);
  } else {
    process.stdout.write(`\n== ${size.toLocaleString('en-US')} governed files: generating... `);
    const generated = await time(() => generate(size));
    ({ dir, root } = generated.value);
    console.log(`${fmt(generated.ms)} (${root})`);
  }
  const files = [
    ...Array.from({ length: size }, (_, index) => fileName(index)),
    '.notarai/product.spec.yaml',
  ];
  const dataDir = path.join(dir, `data-${process.pid}`);
  try {
    await b3sumAll(root, files); // the page cache warm
    const served = await mcpClientOf(root, dataDir);
    try {
      const traces = stagesFile(dataDir);
      // The process's first mark (its pool's workers start, its code is cold), then warm runs.
      const cpu = firstMarkCpu(served.host);
      const firstB3sum = await time(() => b3sumAll(root, files));
      await takeStageTraces(traces);
      const firstAt = Date.now();
      cpu.markStarts();
      const first = await time(() => callOk(served.client, 'mark_reconciled', { files }));
      cpu.markAnswered();
      await served.settled(performance.now());
      const firstTrace = (await takeStageTraces(traces)).find((marks) =>
        marks.some(([stage]) => stage === 'hashed'),
      );
      if (process.env.BENCH_MARKS_RAW)
        console.log(`${JSON.stringify(firstTrace)} at ${firstAt} ms`);
      const firstStages = firstTrace ? markStages(firstTrace, first.ms) : undefined;
      const firstFigures: MarkFigures = {
        ms: [first.ms],
        withClearMs: [first.ms],
        b3sumMs: [firstB3sum.ms],
        stages: firstStages ? [firstStages] : [],
      };
      if (process.env.BENCH_FIRST_MARK_ONLY) {
        printMarkFigures(`the first mark (load average ${loadavg()[0]!.toFixed(1)})`, firstFigures);
        return;
      }
      const cold = await markRuns(served, root, files, options.runs, traces, false);
      const written = await markRuns(served, root, files, options.runs, traces, true);
      console.log(
        `\n${size.toLocaleString('en-US')} files, through a real MCP client (modern Streamable ` +
          `HTTP, a real worktree process), load average ${loadavg()
            .map((value) => value.toFixed(1))
            .join(' ')} at the end:`,
      );
      printMarkFigures(
        'the first mark of a fresh worktree process, right after the client connected (creates ' +
          "notarai.db; the pool's workers start; the window's first state is being computed)",
        firstFigures,
      );
      printMarkFigures('cold (clear_cache, then the mark creates notarai.db)', cold);
      printMarkFigures(
        'the live index vouching for nothing (.gitignore rewritten just before: every file read)',
        written,
      );
      await takeStageTraces(traces);
      const inARow = await markBackToBack(served.client, root, files, options.runs, traces, true);
      printMarkFigures(
        'back to back, no pause: .gitignore rewritten, clear_cache, mark, again (every file read; b3sum = the ' +
          'mean of one right before and one right after the sequence)',
        inARow,
      );
    } finally {
      await served.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
    await rm(stagesFile(dataDir), { force: true });
    if (options.repo === undefined && !options.keep)
      await rm(dir, { recursive: true, force: true });
  }
}
