// Benchmark of the reconciliation engine (`npm run bench:reconcile`): a script that prints
// figures, not a timed test. For each size (20,000 and 200,000 governed files by default) it
// generates a git repository in a temp directory (1% of the governed files changed vs the base:
// half committed on a feature branch, half modified in the working tree), measures the floor
// (`git diff --name-only base` plus `b3sum` over every governed file) and the engine's
// operations, and checks the targets of issue 3. Usage:
//   npm run bench:reconcile [-- --sizes 20000,200000 --runs 3 --big-runs 1 --keep --check-only]
// `--check-only` measures only issue 25's rows (check_specs, the window's update after a change);
// with `--repo DIR` (one size) it reuses a repository generated with --keep. It also prints issue
// 35's figures: warm check_specs and get_drift_score against `git ls-files` (interleaved, ratios
// per run), the worktree process's CPU per edited or new file (/proc), and the CLI rows (`grove
// check` / `grove score` as new processes); `--notarai PATH` (a NotarAI 0.7 binary) runs NotarAI's
// same commands interleaved with Grove's and prints the ratios.
//   npm run bench:reconcile -- --mark-only [--sizes 20000 --runs 7 --repo DIR]
// --mark-only measures mark_reconciled through the client only (cold and after a write), each
// mark right after a `b3sum` of the same files (ratios taken pair by pair: the machine's load
// moves both), with the stages of each mark in the worktree process (GROVE_STAGE_TIMINGS,
// main/platform/stage-timings.ts). --repo reuses a repository generated with --keep.
//   npm run bench:reconcile -- --warm-reads [--sizes 20000 --runs 5 --repo DIR]
// --warm-reads: warm get_spec_diff, get_changed_artifacts and export_context through the client,
// each beside a `git ls-files`, and the worktree process's CPU per call (benchWarmReads).
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stableStringify } from '../main/mcp/stable-json.ts';
import { mapLimit } from '../main/platform/concurrency.ts';
import { ReconcileEngine } from '../main/reconcile/reconcile-engine.ts';
import { git, makeTempDir } from '../main/testing/temp-repo.ts';
import { Host } from '../main/host/host.ts';
import { connectClient } from '../main/testing/mcp-clients.ts';
import { randomFirstPort } from '../main/testing/net.ts';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import type { ReconcileState } from '../shared/reconcile.ts';

const execFileAsync = promisify(execFile);

interface Options {
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

function parseOptions(argv: string[]): Options {
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

const FILES_PER_DIR = 100;
const SPEC = `schema_version: '0.7'
intent: The whole product.
artifacts:
  code:
    - path: src/**/*.ts
  docs:
    - path: docs/**
behaviors:
  - name: works
    given: a request
    then: an answer
`;
const SMALL_SPEC = (index: number): string => `schema_version: '0.7'
intent: Package ${index}.
tier: registered
artifacts:
  code:
    - path: src/d${index}/**
`;

function fileName(index: number): string {
  return `src/d${Math.floor(index / FILES_PER_DIR)}/f${index % FILES_PER_DIR}.ts`;
}

function fileContent(index: number, version: number): string {
  const lines = [`// file ${index} version ${version}`];
  for (let line = 0; line < 24; line++) {
    lines.push(
      `export const value${line} = ${(index * 31 + line * 7 + version) % 1000}; // padding text`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function generate(size: number): Promise<{ dir: string; root: string; governed: string[] }> {
  const dir = await makeTempDir('grove-bench-');
  const root = path.join(dir, 'repo');
  await mkdir(root);
  await git(root, 'init', '-q', '-b', 'main');
  const governed: string[] = [];
  for (let index = 0; index < size; index++) governed.push(fileName(index));
  const dirs = Math.ceil(size / FILES_PER_DIR);
  await mapLimit(
    Array.from({ length: dirs }, (_, index) => index),
    16,
    async (index) => {
      await mkdir(path.join(root, 'src', `d${index}`), { recursive: true });
    },
  );
  await mapLimit(governed, 64, async (file, index) => {
    await writeFile(path.join(root, file), fileContent(index, 0));
  });
  await mkdir(path.join(root, '.notarai'), { recursive: true });
  await writeFile(path.join(root, '.notarai/product.spec.yaml'), SPEC);
  for (let index = 0; index < 5; index++) {
    await writeFile(path.join(root, `.notarai/pkg${index}.spec.yaml`), SMALL_SPEC(index));
  }
  await git(root, 'add', '-A');
  await commitInForeground(root, '-q', '-m', 'base');
  await git(root, 'checkout', '-q', '-b', 'feature');
  // 1% changed vs main: every 100th file; half committed on the branch, half left modified.
  const changed = governed.filter((_, index) => index % 100 === 0);
  const committed = changed.filter((_, index) => index % 2 === 0);
  const uncommitted = changed.filter((_, index) => index % 2 === 1);
  await mapLimit(committed, 64, async (file) => {
    await writeFile(path.join(root, file), fileContent(governed.indexOf(file), 1));
  });
  await commitInForeground(root, '-q', '-a', '-m', 'feature work');
  await mapLimit(uncommitted, 64, async (file) => {
    await writeFile(path.join(root, file), fileContent(governed.indexOf(file), 2));
  });
  return { dir, root, governed };
}

/**
 * `git commit` that runs the `git gc --auto` it starts (20,000 new loose objects pass gc.auto)
 * before it returns: detached, as git runs it by default, its pack-objects took a core or more
 * for ~2 s, through the first rows measured on a repository generated the moment before (a first
 * mark read 2.7-3.2x b3sum instead of ~1.6x).
 */
async function commitInForeground(root: string, ...args: string[]): Promise<void> {
  await git(root, '-c', 'gc.autoDetach=false', 'commit', ...args);
}

async function time<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

async function median(runs: number, work: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) samples.push((await time(work)).ms);
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? 0;
}

/** `b3sum` over every file, fed through xargs -0 (no path on our command line). */
function b3sumAll(root: string, files: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('xargs', ['-0', '-n', '2000', 'b3sum', '--no-names'], {
      cwd: root,
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`xargs b3sum: ${code}`)),
    );
    child.stdin.end(files.map((file) => `${file}\0`).join(''));
  });
}

async function gitDiffNames(root: string): Promise<void> {
  await execFileAsync('git', ['diff', '--name-only', 'main'], {
    cwd: root,
    maxBuffer: 256 * 1024 * 1024,
  });
}

function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

interface SizeResult {
  size: number;
  generateMs: number;
  /** `grove check` / `grove score` as commands (and NotarAI's, with --notarai). */
  cli?: CliRow[];
  gitDiffMs: number;
  b3sumMs: number;
  floorMs: number;
  list: number;
  cold: number;
  warm: number;
  bypass: number;
  changedArtifacts: number;
  mark: number;
  coldJsonMs: number;
  coldJsonBytes: number;
  checks: { files: number; diffFiles: number };
  /** The same calls through a real MCP client (modern Streamable HTTP) of a real worktree process. */
  mcp: { list: number; cold: number; warm: number; mark: MarkFigures; markChanged: MarkFigures };
  /**
   * Issue 25: `git ls-files` (tracked + untracked), and check_specs through the client: cold (the
   * live index cannot vouch: a .gitignore was written), after one file written (the index applies
   * it), warm; and the window's update: from writing a file to the reconcile-state event carrying
   * the check that counts it.
   */
  check: {
    lsFiles: number;
    cold: number;
    afterWrite: number;
    warm: number;
    findings: number;
    updateNewFile: number;
    updateEdit: number;
    /** Warm get_drift_score, nothing changed (interleaved with the warm check_specs runs). */
    warmScore: number;
    /** Medians of the per-run ratios to the `git ls-files` run beside each (interleaved). */
    warmRatio: number;
    warmScoreRatio: number;
    /**
     * CPU of the worktree process (utime + stime from /proc, its threads included, its children
     * not) from writing one file until the window's state shows it and the process is idle.
     */
    editCpu: number;
    newFileCpu: number;
  };
}

/** The floor of check_specs: git's listing of the worktree, as Grove takes it. */
async function gitLsFiles(root: string): Promise<void> {
  // (200,000 paths are ~4 MiB: more than execFile's default buffer.)
  const options = { cwd: root, maxBuffer: 256 * 1024 * 1024 };
  await Promise.all([
    execFileAsync('git', ['ls-files', '-z', '--cached'], options),
    execFileAsync('git', ['ls-files', '-z', '--others', '--exclude-standard'], options),
  ]);
}

/** Serves `root` as `grove serve` would (a real worktree process) and connects an SDK client. */
async function mcpClientOf(
  root: string,
  dataDir: string,
): Promise<{
  client: Client;
  host: Host;
  settled(since: number): Promise<void>;
  close(): Promise<void>;
}> {
  // The worktree process inherits it: each traced request appends its stages there.
  process.env.GROVE_STAGE_TIMINGS = stagesFile(dataDir);
  const host = await Host.open({ dataDir, firstPort: randomFirstPort(), worktreePollMs: 0 });
  const repo = await host.addRepo(root);
  const id = repo.worktrees[0]!.id;
  await host.startServer(id);
  // At rest, as an agent finds it: the window's first reconciliation state is computed.
  const deadline = Date.now() + 120_000;
  while (host.snapshot().repos[0]?.worktrees[0]?.reconcileTotals == null) {
    if (Date.now() > deadline) throw new Error('no reconciliation state after 120 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { token, urls } = host.getConnectionInfo(id);
  const { client } = await connectClient(Number(new URL(urls.mcp).port), 'modern-http', token);
  let lastState = 0;
  host.onEvent((event) => {
    if (event.type === 'reconcile-state') lastState = performance.now();
  });
  return {
    client,
    host,
    /** Resolves once the window's state was recomputed after `since` (at most 60 s). */
    settled: async (since) => {
      const until = performance.now() + 60_000;
      while (lastState <= since && performance.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: async () => {
      await client.close().catch(() => undefined);
      await host.close();
    },
  };
}

async function callOk(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool(
    { name, arguments: args },
    { timeout: 600_000 },
  )) as CallToolResult;
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result;
}

/** Resolves when `host` emits a reconcile-state whose state passes `test`; its time then. */
function nextState(host: Host, test: (state: ReconcileState) => boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error('no reconcile-state with the change within 60 s'));
    }, 60_000);
    const stop = host.onEvent((event) => {
      if (event.type !== 'reconcile-state' || !test(event.state)) return;
      clearTimeout(timer);
      stop();
      resolve(performance.now());
    });
  });
}

/** The median of what `work` resolves to, over `runs` runs. */
async function medianOfRuns(runs: number, work: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let run = 0; run < runs; run++) values.push(await work());
  values.sort((x, y) => x - y);
  return values[Math.floor(values.length / 2)] as number;
}

type CheckContent = { summary: { warnings: number }; findings: { type: string }[] };

/** Issue 25's rows through a served worktree (see SizeResult.check). */
async function benchCheck(
  root: string,
  served: { client: Client; host: Host; settled(since: number): Promise<void> },
  governed: readonly string[],
  runs: number,
): Promise<SizeResult['check']> {
  const spec = '.notarai/product.spec.yaml';
  await callOk(served.client, 'mark_reconciled', { files: [...governed, spec] });
  // The floor is measured with the worktree process idle: the mark's write starts the window's
  // recomputation, which would otherwise run beside `git ls-files` and inflate the floor.
  await served.settled(performance.now());
  await gitLsFiles(root);
  const lsFiles = await median(runs, () => gitLsFiles(root));
  // Cold: the live index cannot vouch (a .gitignore changed), so git lists, specs load and
  // every governed file is compared with the cache (the stat fast path) again.
  let ignoreVersion = 0;
  const cold = await median(runs, async () => {
    await writeFile(path.join(root, '.gitignore'), `# ${++ignoreVersion}\n*.log\n`);
    await callOk(served.client, 'check_specs', {});
  });
  // One file written: the index applies that path only. Measured once the worktree process is
  // idle: the window's full recomputation after the cold rows' last .gitignore write (seconds at
  // 200,000 files) is not this row's.
  const pid = served.host.processId(served.host.snapshot().repos[0]!.worktrees[0]!.id);
  if (pid === undefined) throw new Error('no worktree process');
  await idle(pid);
  const afterWrite = await median(runs, async () => {
    await writeFile(path.join(root, 'scratch.txt'), `${performance.now()}\n`);
    await callOk(served.client, 'check_specs', {});
  });
  const checked = await callOk(served.client, 'check_specs', {});
  const warm = await median(runs, () => callOk(served.client, 'check_specs', {}));
  const content = async () =>
    (await callOk(served.client, 'check_specs', {})).structuredContent as CheckContent;
  // The window's update after one file change: from the write to the reconcile-state event
  // whose check counts it (a new file no spec governs is one more coverage gap).
  let added = 0;
  process.stdout.write('[window: new file] ');
  const updateNewFile = await medianOfRuns(runs, async () => {
    const before = (await content()).summary.warnings;
    const seen = nextState(served.host, (state) => state.check?.warnings === before + 1);
    const started = performance.now();
    await writeFile(path.join(root, `uncovered-${process.pid}-${++added}.txt`), 'new\n');
    return (await seen) - started;
  });
  // An edit of a governed, reconciled file: one more file changed since reconciliation.
  let edits = 0;
  process.stdout.write('[window: edit] ');
  const updateEdit = await medianOfRuns(runs, async () => {
    await content();
    const before = served.host.snapshot().repos[0]?.worktrees[0]?.reconcileTotals;
    const changed = before?.changedSinceReconciled ?? 0;
    const seen = nextState(
      served.host,
      (state) => state.totals.changedSinceReconciled === changed + 1,
    );
    const started = performance.now();
    await writeFile(
      path.join(root, `src/d1/f${++edits}.ts`),
      `// edited ${edits} at ${performance.now()}\n`,
    );
    return (await seen) - started;
  });
  // Warm, interleaved: git ls-files, check_specs, get_drift_score, in turn (a slow spell of the
  // shared machine hits all three); the ratios are taken run by run.
  process.stdout.write('[warm] ');
  const warmRuns: { ls: number; check: number; score: number }[] = [];
  await callOk(served.client, 'get_drift_score', {});
  for (let run = 0; run < Math.max(runs, 5); run++) {
    const ls = (await time(() => gitLsFiles(root))).ms;
    const check = (await time(() => callOk(served.client, 'check_specs', {}))).ms;
    const score = (await time(() => callOk(served.client, 'get_drift_score', {}))).ms;
    warmRuns.push({ ls, check, score });
  }
  // CPU of the worktree process per change, once it is idle (the idle memory reclaim, 5 s after
  // the last request, is waited out first: it is not the change's).
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  const cpuOf = async (changes: () => Promise<void>) => {
    await idle(pid);
    const before = processCpuMs(pid);
    await changes();
    await idle(pid);
    return processCpuMs(pid) - before;
  };
  process.stdout.write('[cpu]\n');
  // /proc counts in clock ticks (10 ms): each figure is the CPU of a batch of CHANGES_PER_BATCH
  // changes, one after the other (each waits for its state), divided by the batch's size.
  const cpuEdits: number[] = [];
  const cpuNewFiles: number[] = [];
  for (let run = 0; run < Math.max(runs, 3); run++) {
    cpuEdits.push(
      (await cpuOf(async () => {
        for (let change = 0; change < CHANGES_PER_BATCH; change++) {
          const changed =
            served.host.snapshot().repos[0]?.worktrees[0]?.reconcileTotals
              ?.changedSinceReconciled ?? 0;
          const file = `src/d2/f${++edits}.ts`;
          const seen = nextState(
            served.host,
            (state) => state.totals.changedSinceReconciled === changed + 1,
          );
          await writeFile(path.join(root, file), `// edited ${edits} at ${performance.now()}\n`);
          await seen;
        }
      })) / CHANGES_PER_BATCH,
    );
    cpuNewFiles.push(
      (await cpuOf(async () => {
        for (let change = 0; change < CHANGES_PER_BATCH; change++) {
          const warnings = lastWarnings(served.host);
          const seen = nextState(served.host, (state) => (state.check?.warnings ?? 0) > warnings);
          await writeFile(path.join(root, `uncovered-${process.pid}-${++added}.txt`), 'new\n');
          await seen;
        }
      })) / CHANGES_PER_BATCH,
    );
  }
  return {
    lsFiles,
    cold,
    afterWrite,
    warm,
    findings: (checked.structuredContent as CheckContent).findings.length,
    updateNewFile,
    updateEdit,
    warmScore: medianOf(warmRuns.map((run) => run.score)),
    warmRatio: medianOf(warmRuns.map((run) => run.check / run.ls)),
    warmScoreRatio: medianOf(warmRuns.map((run) => run.score / run.ls)),
    editCpu: medianOf(cpuEdits),
    newFileCpu: medianOf(cpuNewFiles),
  };
}

/** The check warnings of the window's last state (a new uncovered file adds one). */
function lastWarnings(host: Host): number {
  const snapshot = host.snapshot();
  const id = snapshot.repos[0]!.worktrees[0]!.id;
  return snapshot.reconcile[id]?.check?.warnings ?? 0;
}

/** utime + stime of a process, in ms (its threads included, its children not). */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** Changes measured together (the CPU figure is their mean). */
const CHANGES_PER_BATCH = 5;

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;

/** Resolves once the process used no CPU for 400 ms (at most 60 s). */
async function idle(pid: number): Promise<void> {
  const until = performance.now() + 60_000;
  let last = processCpuMs(pid);
  let quietSince = performance.now();
  while (performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = processCpuMs(pid);
    if (now !== last) {
      last = now;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= 400) {
      return;
    }
  }
}

/** One CLI row: Grove's median, and NotarAI's and the median of the per-run ratios if run. */
interface CliRow {
  name: string;
  grove: number;
  notarai?: number;
  ratio?: number;
}

/** Wall time of one command in `root` (its exit code ignored: check exits 1 on findings). */
async function timedRun(command: string, args: readonly string[], root: string): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('exit', () => resolve());
  });
  return performance.now() - started;
}

const GROVE_BIN = path.resolve(import.meta.dirname, '../bin/grove.js');

/**
 * `grove check` / `grove score` as a user runs them (a new process each, the pinned Node), each
 * run right after NotarAI's same command when a binary is given (interleaved, ratios per pair):
 * with the hash cache the served runs left, repeated, and with no cache (moved aside and back).
 */
async function benchCli(root: string, runs: number, notarai?: string): Promise<CliRow[]> {
  const rows: CliRow[] = [];
  const row = async (
    name: string,
    groveArgs: string[],
    notaraiArgs: string[],
    before?: () => Promise<void>,
  ) => {
    const grove: number[] = [];
    const theirs: number[] = [];
    const ratios: number[] = [];
    for (let run = 0; run < runs; run++) {
      let them: number | undefined;
      if (notarai) {
        await before?.();
        them = await timedRun(notarai, notaraiArgs, root);
        theirs.push(them);
      }
      await before?.();
      const ours = await timedRun(process.execPath, [GROVE_BIN, ...groveArgs], root);
      grove.push(ours);
      if (them !== undefined) ratios.push(ours / them);
    }
    rows.push({
      name,
      grove: medianOf(grove),
      ...(notarai ? { notarai: medianOf(theirs), ratio: medianOf(ratios) } : {}),
    });
  };
  const cache = path.join(root, '.notarai/.cache');
  const aside = `${cache}-aside-${process.pid}`;
  await row(
    'check --format json, hash cache present',
    ['check', '--format', 'json'],
    ['check', '--format', 'json'],
  );
  await row('score --format json', ['score', '--format', 'json'], ['score', '--format', 'json']);
  await row(
    'export-context --all --format json',
    ['export-context', '--all', '--format', 'json'],
    ['export-context', '--all', '--format', 'json'],
  );
  await rm(aside, { recursive: true, force: true });
  await rename(cache, aside);
  try {
    await row(
      'check --format json, no hash cache',
      ['check', '--format', 'json'],
      ['check', '--format', 'json'],
      () => rm(cache, { recursive: true, force: true }),
    );
  } finally {
    await rm(cache, { recursive: true, force: true });
    await rename(aside, cache);
  }
  return rows;
}

/** Where the worktree process served from `dataDir` writes its stage timings. */
function stagesFile(dataDir: string): string {
  return `${dataDir}-stages.jsonl`;
}

/** The stages of one request, as the worktree process traced them (stage-timings.ts). */
type StageMarks = [string, number][];

/** The traces appended since the last read (the file is emptied). */
async function takeStageTraces(file: string): Promise<StageMarks[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  await writeFile(file, '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => (JSON.parse(line) as { marks: StageMarks }).marks);
}

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

interface MarkFigures {
  /** mark_reconciled alone, each run. */
  ms: number[];
  /** clear_cache + mark_reconciled, each run (the figure earlier runs reported as "cold"). */
  withClearMs: number[];
  /** The `b3sum` right before each mark. */
  b3sumMs: number[];
  stages: StageFigures[];
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Makes the worktree process's live index vouch for nothing (see markRuns). */
let ignoreRewrites = 0;
async function dropLiveIndex(root: string): Promise<void> {
  await writeFile(path.join(root, '.gitignore'), `# rewritten ${++ignoreRewrites}\n*.log\n`);
}

/**
 * mark_reconciled of every file through the client, `runs` times, each right after a `b3sum` of
 * the same files. `afterWrite`: the .gitignore is rewritten just before, which the live index
 * cannot apply path by path (it changes what git lists), so it vouches for nothing and every file
 * is read. (A file written elsewhere no longer does that: the index forgets that path only.) Cold
 * either way: clear_cache first, so the mark creates notarai.db.
 */
async function markRuns(
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
    if (afterWrite) await dropLiveIndex(root);
    const cleared = await time(() => callOk(client, 'clear_cache', {}));
    await takeStageTraces(traces);
    const marked = await time(() => callOk(client, 'mark_reconciled', { files }));
    // The mark's write makes the window's state be recomputed: not during the next b3sum.
    await served.settled(performance.now());
    figures.ms.push(marked.ms);
    figures.withClearMs.push(cleared.ms + marked.ms);
    const traced = (await takeStageTraces(traces)).find((marks) =>
      marks.some(([stage]) => stage === 'hashed'),
    );
    const stages = traced ? markStages(traced, marked.ms) : undefined;
    if (stages) figures.stages.push(stages);
    if (process.env.BENCH_MARKS_RAW) console.log(JSON.stringify(traced));
  }
  return figures;
}

/** The median of a mark's ratios to the `b3sum` run right before each. */
function markRatio(figures: MarkFigures): number {
  return medianOf(figures.ms.map((ms, run) => ms / (figures.b3sumMs[run] ?? ms)));
}

/** A table cell: the mark's median time and its median ratio to `b3sum`. */
function markCell(figures: MarkFigures): string {
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
    if (afterWrite) await dropLiveIndex(root);
    const cleared = await time(() => callOk(client, 'clear_cache', {}));
    const marked = await time(() => callOk(client, 'mark_reconciled', { files }));
    figures.ms.push(marked.ms);
    figures.withClearMs.push(cleared.ms + marked.ms);
    traced.push({ marks: undefined, ms: marked.ms });
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

function printMarkFigures(title: string, figures: MarkFigures): void {
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
async function benchMarkOnly(size: number, options: Options): Promise<void> {
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

async function benchSize(size: number, options: Options): Promise<SizeResult> {
  process.stdout.write(`\n== ${size.toLocaleString('en-US')} governed files: generating... `);
  // --check-only --repo DIR: a repository generated before with --keep (its size given by --sizes).
  const reused = options.checkOnly ? options.repo : undefined;
  const generated = await time(async () =>
    reused === undefined
      ? generate(size)
      : {
          dir: path.dirname(path.resolve(reused)),
          root: path.resolve(reused),
          governed: Array.from({ length: size }, (_, index) => fileName(index)),
        },
  );
  const { dir, root, governed } = generated.value;
  console.log(`${fmt(generated.ms)} (${root})`);
  const spec = '.notarai/product.spec.yaml';
  const engine = new ReconcileEngine({ root });
  const runs = size > 50_000 ? options.bigRuns : options.runs;
  try {
    if (options.checkOnly) {
      engine.close();
      const dataDir = path.join(dir, `data-${process.pid}`);
      const served = await mcpClientOf(root, dataDir);
      let check: SizeResult['check'];
      try {
        check = await benchCheck(root, served, governed, runs);
      } finally {
        await served.close();
        await rm(dataDir, { recursive: true, force: true });
      }
      // The CLI rows once the worktree process is gone (nothing else runs in the worktree).
      const cli = await benchCli(root, Math.max(runs, 5), options.notarai);
      return { size, generateMs: generated.ms, check, cli } as SizeResult;
    }
    // Warm the page cache and git's index once, so floor and engine read the same warm disk.
    await gitDiffNames(root);
    await b3sumAll(root, governed);

    const gitDiffMs = await median(runs, () => gitDiffNames(root));
    const b3sumMs = await median(runs, () => b3sumAll(root, governed));
    const floorMs = gitDiffMs + b3sumMs;
    console.log(
      `floor: git diff --name-only ${fmt(gitDiffMs)} + b3sum ${fmt(b3sumMs)} = ${fmt(floorMs)}`,
    );

    const list = await median(runs, () => engine.listAffectedSpecs('main'));
    const cold = await median(runs, async () => {
      await engine.clearCache();
      await engine.getSpecDiff({ spec_path: spec, base_branch: 'main' });
    });
    await engine.clearCache();
    const coldResult = await engine.getSpecDiff({ spec_path: spec, base_branch: 'main' });
    const json = await time(async () => stableStringify(coldResult));
    const mark = await median(runs, async () => {
      await engine.clearCache();
      await engine.markReconciled([...governed, spec]);
    });
    // Nothing changed since mark_reconciled: the stat fast path answers for every file.
    const warmResult = await engine.getSpecDiff({ spec_path: spec, base_branch: 'main' });
    const warm = await median(runs, () =>
      engine.getSpecDiff({ spec_path: spec, base_branch: 'main' }),
    );
    const bypass = await median(runs, () =>
      engine.getSpecDiff({ spec_path: spec, base_branch: 'main', bypass_cache: true }),
    );
    const changedArtifacts = await median(runs, () =>
      engine.getChangedArtifacts({ spec_path: spec }),
    );
    if (warmResult.files.length !== 0) {
      throw new Error(`warm get_spec_diff listed ${warmResult.files.length} files, expected 0`);
    }
    const diffFiles = (coldResult.diff.match(/^diff --git /gm) ?? []).length;

    // The same calls as an agent makes them: a real SDK client, a real worktree process.
    engine.close();
    const served = await mcpClientOf(root, path.join(dir, 'data'));
    let mcp: SizeResult['mcp'];
    let check: SizeResult['check'];
    try {
      const args = { spec_path: spec, base_branch: 'main' };
      const mcpList = await median(runs, () =>
        callOk(served.client, 'list_affected_specs', { base_branch: 'main' }),
      );
      const mcpCold = await median(runs, async () => {
        await callOk(served.client, 'clear_cache', {});
        await callOk(served.client, 'get_spec_diff', args);
      });
      const traces = stagesFile(path.join(dir, 'data'));
      const marked = [...governed, spec];
      const mcpMark = await markRuns(served, root, marked, runs, traces, false);
      await callOk(served.client, 'get_spec_diff', args);
      const mcpWarm = await median(runs, () => callOk(served.client, 'get_spec_diff', args));
      // The same mark once the live index vouches for nothing (.gitignore rewritten just before):
      // every file is read again, after the sync that tells so.
      const mcpMarkChanged = await markRuns(served, root, marked, runs, traces, true);
      check = await benchCheck(root, served, governed, runs);
      mcp = {
        list: mcpList,
        cold: mcpCold,
        warm: mcpWarm,
        mark: mcpMark,
        markChanged: mcpMarkChanged,
      };
    } finally {
      await served.close();
    }
    return {
      size,
      generateMs: generated.ms,
      gitDiffMs,
      b3sumMs,
      floorMs,
      list,
      cold,
      warm,
      bypass,
      changedArtifacts,
      mark,
      coldJsonMs: json.ms,
      coldJsonBytes: json.value.length,
      checks: { files: coldResult.files.length, diffFiles },
      mcp,
      check,
    };
  } finally {
    engine.close();
    if (!options.keep && reused === undefined) {
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  }
}

const verdict = (ratio: number, target: number) =>
  `${ratio.toFixed(2)}x (target <= ${target}x: ${ratio <= target ? 'met' : 'MISSED'})`;

/** Issue 25's rows: check_specs as ratios to `git ls-files`, and the window's update. */
function reportCheck(results: SizeResult[]): void {
  console.log('\ncheck_specs through the MCP client (issue 25), as ratios to `git ls-files`:');
  console.log(
    '\n| files | git ls-files | check_specs cold (x) | after one file written (x) | warm (x) | findings | window update: new file | window update: edit |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const x = (ms: number) => `${fmt(ms)} (${(ms / r.check.lsFiles).toFixed(2)}x)`;
    console.log(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.check.lsFiles)} | ${x(r.check.cold)} | ${x(r.check.afterWrite)} | ${x(r.check.warm)} | ${r.check.findings} | ${fmt(r.check.updateNewFile)} | ${fmt(r.check.updateEdit)} |`,
    );
  }
  console.log(
    '\nIssue 35 (warm: medians of per-run ratios, git ls-files / check_specs / get_drift_score interleaved; CPU: the worktree process, /proc utime+stime, from the write until the window shows it and the process is idle):',
  );
  console.log(
    '\n| files | warm check_specs (x ls-files) | warm get_drift_score (x ls-files) | CPU per edited governed file | CPU per new untracked file |',
  );
  console.log('|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.check.warm)} (${r.check.warmRatio.toFixed(2)}x) | ${fmt(r.check.warmScore)} (${r.check.warmScoreRatio.toFixed(2)}x) | ${fmt(r.check.editCpu)} | ${fmt(r.check.newFileCpu)} |`,
    );
  }
  console.log(
    '\nThe CLI, a new process per run (interleaved with NotarAI when --notarai is given):',
  );
  console.log(
    '\n| files | command | grove | NotarAI 0.7 | grove / NotarAI (median of per-run ratios) |',
  );
  console.log('|---:|---|---:|---:|---:|');
  for (const r of results) {
    for (const row of r.cli ?? []) {
      console.log(
        `| ${r.size.toLocaleString('en-US')} | ${row.name} | ${fmt(row.grove)} | ${row.notarai === undefined ? '-' : fmt(row.notarai)} | ${row.ratio === undefined ? '-' : `${row.ratio.toFixed(2)}x`} |`,
      );
    }
  }
  for (const r of results) {
    const within = (ms: number) => `${fmt(ms)} (target <= 1 s: ${ms <= 1000 ? 'met' : 'MISSED'})`;
    console.log(
      `  ${r.size}: check_specs cold ${verdict(r.check.cold / r.check.lsFiles, 6)}; ` +
        `after a write ${verdict(r.check.afterWrite / r.check.lsFiles, 2)}; ` +
        `warm ${verdict(r.check.warmRatio, 2)}; get_drift_score warm ${verdict(r.check.warmScoreRatio, 2)}; ` +
        `window update after one file change: new file ${within(r.check.updateNewFile)}, ` +
        `edit ${within(r.check.updateEdit)}; CPU per edit ${fmt(r.check.editCpu)} (target <= 50 ms at ` +
        `100,000 files and above: ${r.size < 100_000 ? 'n/a' : r.check.editCpu <= 50 ? 'met' : 'MISSED'})`,
    );
  }
  const small = results.find((r) => r.size === 20_000);
  const big = results.find((r) => r.size === 200_000);
  if (small && big) {
    const keys = [
      'lsFiles',
      'cold',
      'afterWrite',
      'warm',
      'warmScore',
      'updateNewFile',
      'updateEdit',
      'editCpu',
      'newFileCpu',
    ] as const;
    for (const key of keys) {
      const ratio = big.check[key] / small.check[key];
      console.log(
        `  200k/20k ${key}: ${ratio.toFixed(1)}x (linear: <= 12x: ${ratio <= 12 ? 'met' : 'MISSED'})`,
      );
    }
  }
}

function report(results: SizeResult[], options: Options): void {
  if (options.checkOnly) {
    reportCheck(results);
    return;
  }
  console.log(
    '\n| governed files | floor (git diff + b3sum) | list_affected_specs | get_spec_diff cold | warm | bypass_cache | get_changed_artifacts | mark_reconciled |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.floorMs)} (${fmt(r.gitDiffMs)} + ${fmt(r.b3sumMs)}) | ${fmt(r.list)} | ${fmt(r.cold)} | ${fmt(r.warm)} | ${fmt(r.bypass)} | ${fmt(r.changedArtifacts)} | ${fmt(r.mark)} |`,
    );
  }
  console.log(
    '\nThrough a real MCP client (SDK client, modern Streamable HTTP, a real worktree process):',
  );
  console.log(
    '\n| governed files | floor | list_affected_specs (x git diff) | get_spec_diff cold (x floor) | warm (x floor) | mark_reconciled (x b3sum) | mark_reconciled, the live index vouching for nothing (x b3sum) |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const x = (ms: number, floor: number) => `${fmt(ms)} (${(ms / floor).toFixed(2)}x)`;
    console.log(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.floorMs)} | ${x(r.mcp.list, r.gitDiffMs)} | ${x(r.mcp.cold, r.floorMs)} | ${x(r.mcp.warm, r.floorMs)} | ${markCell(r.mcp.mark)} | ${markCell(r.mcp.markChanged)} |`,
    );
  }
  console.log('\nTargets, through the MCP client (issue 19; in-process engine in brackets):');
  for (const r of results) {
    console.log(
      `  ${r.size}: get_spec_diff cold ${verdict(r.mcp.cold / r.floorMs, 3)} [${(r.cold / r.floorMs).toFixed(2)}x]; ` +
        `warm ${verdict(r.mcp.warm / r.floorMs, 0.5)} [${(r.warm / r.floorMs).toFixed(2)}x, no watcher]; ` +
        `list_affected_specs ${verdict(r.mcp.list / r.gitDiffMs, 1.5)} [${(r.list / r.gitDiffMs).toFixed(2)}x]; ` +
        `mark_reconciled ${verdict(markRatio(r.mcp.mark), 1.5)} [${(r.mark / r.b3sumMs).toFixed(2)}x], ` +
        `the live index vouching for nothing ${verdict(markRatio(r.mcp.markChanged), 1.5)}`,
    );
    console.log(
      `  ${r.size}: cold result ${r.checks.files} files, ${r.checks.diffFiles} file diffs, ` +
        `${(r.coldJsonBytes / 1024 / 1024).toFixed(1)} MiB of JSON (serialized in ${fmt(r.coldJsonMs)})`,
    );
  }
  reportCheck(results);
  for (const r of results) {
    printMarkFigures(`${r.size}: mark_reconciled cold`, r.mcp.mark);
    printMarkFigures(
      `${r.size}: mark_reconciled, the live index vouching for nothing`,
      r.mcp.markChanged,
    );
  }
  const small = results.find((r) => r.size === 20_000);
  const big = results.find((r) => r.size === 200_000);
  if (small && big) {
    for (const key of ['list', 'cold', 'warm', 'bypass', 'changedArtifacts', 'mark'] as const) {
      const ratio = big[key] / small[key];
      console.log(
        `  200k/20k ${key}: ${ratio.toFixed(1)}x (target <= 12x: ${ratio <= 12 ? 'met' : 'MISSED'})`,
      );
    }
  }
}

/**
 * --warm-reads (issue 35): get_spec_diff, get_changed_artifacts and export_context through a real
 * client with nothing changed since the last call, each run beside a `git ls-files` (interleaved,
 * ratios per run), and the worktree process's CPU per call (/proc, a batch of calls once idle).
 */
async function benchWarmReads(size: number, options: Options): Promise<void> {
  const reused = options.repo === undefined ? undefined : path.resolve(options.repo);
  const generated = reused === undefined ? await generate(size) : undefined;
  const root = reused ?? generated!.root;
  const dir = path.dirname(root);
  const dataDir = path.join(dir, `data-${process.pid}`);
  const spec = '.notarai/product.spec.yaml';
  console.log(`\n== ${size.toLocaleString('en-US')} governed files, warm reads (${root})`);
  const served = await mcpClientOf(root, dataDir);
  try {
    const pid = served.host.processId(served.host.snapshot().repos[0]!.worktrees[0]!.id);
    if (pid === undefined) throw new Error('no worktree process');
    const files = Array.from({ length: size }, (_, index) => fileName(index));
    await callOk(served.client, 'mark_reconciled', { files: [...files, spec] });
    await served.settled(performance.now());
    const calls: [string, () => Promise<unknown>][] = [
      [
        'get_spec_diff',
        () => callOk(served.client, 'get_spec_diff', { spec_path: spec, base_branch: 'main' }),
      ],
      [
        'get_changed_artifacts',
        () => callOk(served.client, 'get_changed_artifacts', { spec_path: spec }),
      ],
      [
        'export_context',
        () => callOk(served.client, 'export_context', { base_branch: 'main', spec_path: spec }),
      ],
      [
        'export_context (all)',
        () => callOk(served.client, 'export_context', { base_branch: 'main' }),
      ],
    ];
    for (const [, call] of calls) await call();
    const walls = new Map<string, number[]>(calls.map(([name]) => [name, []]));
    const ratios = new Map<string, number[]>(calls.map(([name]) => [name, []]));
    const ls: number[] = [];
    for (let run = 0; run < Math.max(options.runs, 5); run++) {
      const floor = (await time(() => gitLsFiles(root))).ms;
      ls.push(floor);
      for (const [name, call] of calls) {
        const ms = (await time(call)).ms;
        walls.get(name)!.push(ms);
        ratios.get(name)!.push(ms / floor);
      }
    }
    const perBatch = 10;
    const cpu = new Map<string, number[]>(calls.map(([name]) => [name, []]));
    for (let run = 0; run < 3; run++) {
      for (const [name, call] of calls) {
        await idle(pid);
        const before = processCpuMs(pid);
        for (let index = 0; index < perBatch; index++) await call();
        await idle(pid);
        cpu.get(name)!.push((processCpuMs(pid) - before) / perBatch);
      }
    }
    const load = loadavg()
      .map((value) => value.toFixed(1))
      .join(' ');
    console.log(`git ls-files: median ${fmt(medianOf(ls))}; load average ${load} at the end`);
    console.log(
      '| call (warm, nothing changed) | wall, median | x git ls-files (per run) | worktree process CPU per call (median of 3 batches of 10) |',
    );
    console.log('|---|---|---|---|');
    for (const [name] of calls) {
      console.log(
        `| ${name} | ${fmt(medianOf(walls.get(name)!))} | ${medianOf(ratios.get(name)!).toFixed(2)}x | ${medianOf(cpu.get(name)!).toFixed(1)} ms |`,
      );
    }
  } finally {
    await served.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(stagesFile(dataDir), { force: true });
    if (generated && !options.keep) await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  console.log(
    `bench:reconcile on ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown cpu'}), ` +
      `node ${process.version}, tmp ${tmpdir()}, median of ${options.runs} runs per figure ` +
      `(${options.bigRuns} above 50,000 files), load average ${loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')}`,
  );
  if (options.markOnly) {
    for (const size of options.sizes) await benchMarkOnly(size, options);
    return;
  }
  if (options.warmReads) {
    for (const size of options.sizes) await benchWarmReads(size, options);
    return;
  }
  const results: SizeResult[] = [];
  for (const size of options.sizes) {
    results.push(await benchSize(size, options));
    reportCheck(results.slice(-1)); // as soon as measured: a later size may take long
  }
  report(results, options);
}

await main();
