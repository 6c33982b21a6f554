// The CLI rows: `grove check` / `score` / `export-context` as new processes, each right after
// NotarAI's same command when a binary is given (interleaved, ratios per pair).
import { spawn } from 'node:child_process';
import { appendFile, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { medianOf } from './bench-repo.ts';

/** One CLI row: Grove's median, and NotarAI's and the median of the per-run ratios if run. */
export interface CliRow {
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

const GROVE_BIN = path.resolve(import.meta.dirname, '../../bin/grove.js');

/**
 * `grove check` / `grove score` as a user runs them (a new process each, the pinned Node), each
 * run right after NotarAI's same command when a binary is given (interleaved, ratios per pair):
 * with the hash cache the served runs left, repeated, and with no cache (moved aside and back).
 */
export async function benchCli(root: string, runs: number, notarai?: string): Promise<CliRow[]> {
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
  // What a user does between two checks: edit a governed file (src/d0/f0.ts: every bench
  // repository has it, under the product spec's src/**/*.ts), then check again.
  const edited = path.join(root, 'src/d0/f0.ts');
  const original = await readFile(edited);
  let edits = 0;
  try {
    await row(
      'check --format json, one governed file edited before each run',
      ['check', '--format', 'json'],
      ['check', '--format', 'json'],
      () => appendFile(edited, `// edit ${++edits}\n`),
    );
  } finally {
    await writeFile(edited, original);
  }
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
