// The benchmark's repositories and floors: a generated git repository of N governed files
// (1% changed vs the base), b3sum and git listings to compare with, medians, a process's CPU.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { mapLimit } from '../../main/platform/concurrency.ts';
import { git, makeTempDir } from '../../main/testing/temp-repo.ts';

const execFileAsync = promisify(execFile);

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

export function fileName(index: number): string {
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

export async function generate(
  size: number,
): Promise<{ dir: string; root: string; governed: string[] }> {
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

export async function time<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

export async function median(runs: number, work: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let run = 0; run < runs; run++) samples.push((await time(work)).ms);
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? 0;
}

/** `b3sum` over every file, fed through xargs -0 (no path on our command line). */
export function b3sumAll(root: string, files: readonly string[]): Promise<void> {
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

export async function gitDiffNames(root: string): Promise<void> {
  await execFileAsync('git', ['diff', '--name-only', 'main'], {
    cwd: root,
    maxBuffer: 256 * 1024 * 1024,
  });
}

export function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

/** The floor of check_specs: git's listing of the worktree, as Grove takes it. */
export async function gitLsFiles(root: string): Promise<void> {
  // (200,000 paths are ~4 MiB: more than execFile's default buffer.)
  const options = { cwd: root, maxBuffer: 256 * 1024 * 1024 };
  await Promise.all([
    execFileAsync('git', ['ls-files', '-z', '--cached'], options),
    execFileAsync('git', ['ls-files', '-z', '--others', '--exclude-standard'], options),
  ]);
}

/** The median of what `work` resolves to, over `runs` runs. */
export async function medianOfRuns(runs: number, work: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let run = 0; run < runs; run++) values.push(await work());
  values.sort((x, y) => x - y);
  return values[Math.floor(values.length / 2)] as number;
}

/** utime + stime of a process, in ms (its threads included, its children not). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** Changes measured together (the CPU figure is their mean). */
export const CHANGES_PER_BATCH = 5;

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;

/** Resolves once the process used no CPU for 400 ms (at most 60 s). */
export async function idle(pid: number): Promise<void> {
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

export function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
