// Benchmark of the grep tool against `git grep` (`npm run bench:grep`): a script that prints
// figures, not a timed test. It generates a git repository of --files text files (100,000 by
// default, 100 per directory) plus untracked, ignored and binary files, then for each search runs
// `git grep --untracked -I` and Grove's grep (the tool's own code path: listing, glob filter,
// worker pool) alternately, after one warm-up each, and prints the medians. The listing alone
// (`git ls-files` and Grove's listing) is measured the same way. Then hostile patterns through
// real MCP clients of a real worktree process (issue 26): two clients each grep `(a+)+$` and
// `(a|aa)+$` over 2,000 lines of 32 a's and a '!' while a third client's plain grep runs; and the
// same with a pattern only the backtracking engine runs (stopped by its clients after a while);
// and the first with a 4 MiB file, where each of the four calls is linear but heavy (seconds).
// Usage:
//   npm run bench:grep [-- --files 100000 --runs 5 --repo DIR --keep --hostile-only]
// --repo reuses DIR if it holds a repository, or generates it there (and keeps it).
import { spawn } from 'node:child_process';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg } from 'node:os';
import path from 'node:path';
import { runGit, splitNul } from '../main/platform/git/run-git.ts';
import { git, makeTempDir } from '../main/testing/temp-repo.ts';
import { workerPool } from '../main/platform/worker-pool.ts';
import { runGrep, type GrepResult } from '../main/tools/grep.ts';
import { listWorktreeFiles } from '../main/tools/worktree-files.ts';
import { Host } from '../main/host/host.ts';
import { connectClient } from '../main/testing/mcp-clients.ts';
import { randomFirstPort } from '../main/testing/net.ts';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';

interface Options {
  files: number;
  runs: number;
  repo: string | undefined;
  keep: boolean;
  hostileOnly: boolean;
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    files: 100_000,
    runs: 5,
    repo: undefined,
    keep: false,
    hostileOnly: false,
  };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--files') options.files = Number(argv[++index]);
    else if (arg === '--runs') options.runs = Number(argv[++index]);
    else if (arg === '--repo') options.repo = argv[++index];
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--hostile-only') options.hostileOnly = true;
  }
  return options;
}

const FILES_PER_DIR = 100;
const WORDS = (
  'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho ' +
  'sigma tau upsilon phi chi psi omega function const return import export async await'
).split(' ');

/** A deterministic pseudo-random generator, so every run builds the same repository. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

function textFile(next: () => number, needle: boolean): string {
  const lines = 20 + Math.floor(next() * 80);
  let text = '';
  for (let line = 0; line < lines; line++) {
    const words = 3 + Math.floor(next() * 10);
    for (let word = 0; word < words; word++) text += `${WORDS[Math.floor(next() * WORDS.length)]} `;
    if (needle && line === 5) text += 'NEEDLE_TOKEN_42 ';
    text += '\n';
  }
  return text;
}

async function writeAll(entries: [string, string | Buffer][]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < entries.length) {
        const [file, content] = entries[next++]!;
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, content);
      }
    }),
  );
}

/** Builds the repository: tracked text files, then untracked, ignored and binary ones. */
async function generate(root: string, count: number): Promise<void> {
  const next = random(42);
  await mkdir(root, { recursive: true });
  await git(root, 'init', '-q', '-b', 'main');
  const tracked: [string, string | Buffer][] = [[path.join(root, '.gitignore'), 'build/\n*.log\n']];
  for (let index = 0; index < count; index++) {
    const directory = Math.floor(index / FILES_PER_DIR);
    const file = path.join(
      root,
      `pkg-${directory % 50}`,
      `mod-${directory}`,
      `file-${index}.${index % 10 === 0 ? 'md' : 'ts'}`,
    );
    tracked.push([file, textFile(next, index % 997 === 0)]);
  }
  for (let index = 0; index < 200; index++) {
    const bytes = Buffer.alloc(4096, 0);
    bytes.write('NEEDLE_TOKEN_42', 100);
    tracked.push([path.join(root, 'assets', `blob-${index}.bin`), bytes]);
  }
  await writeAll(tracked);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'generated');
  const untracked: [string, string | Buffer][] = [];
  for (let index = 0; index < 1000; index++) {
    untracked.push([
      path.join(root, 'scratch', `note-${index}.txt`),
      textFile(next, index % 97 === 0),
    ]);
    untracked.push([path.join(root, 'build', `out-${index}.js`), textFile(next, true)]);
    untracked.push([path.join(root, 'logs', `run-${index}.log`), textFile(next, true)]);
  }
  await writeAll(untracked);
}

interface GitGrepOutcome {
  lines: number;
  files: number;
}

/** `git grep` over tracked and untracked files, binary files skipped, output counted. */
function gitGrep(root: string, args: string[]): Promise<GitGrepOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'git',
      ['-c', 'core.quotepath=false', 'grep', '--untracked', '-I', '-n', '--column', '-z', ...args],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const files = new Set<string>();
    let lines = 0;
    let rest = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const text = rest + chunk;
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        lines += 1;
        files.add(line.slice(0, line.indexOf('\0')));
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && code !== 1) reject(new Error(`git grep exited with ${code}`));
      else resolve({ lines, files: files.size });
    });
  });
}

interface Case {
  name: string;
  git: string[];
  grove: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    name: 'literal, rare (-F NEEDLE_TOKEN_42)',
    git: ['-F', '-e', 'NEEDLE_TOKEN_42'],
    grove: { pattern: 'NEEDLE_TOKEN_42', fixed_string: true, max_results: 2000 },
  },
  {
    name: 'regex, rare (NEEDLE_[A-Z]+_4[0-9])',
    git: ['-E', '-e', 'NEEDLE_[A-Z]+_4[0-9]'],
    grove: { pattern: 'NEEDLE_[A-Z]+_4[0-9]', max_results: 2000 },
  },
  {
    name: 'ignore case (-i needle_token)',
    git: ['-i', '-F', '-e', 'needle_token'],
    grove: { pattern: 'needle_token', ignore_case: true, fixed_string: true, max_results: 2000 },
  },
  {
    name: 'no match (literal)',
    git: ['-F', '-e', 'ZZZ_NOT_THERE'],
    grove: { pattern: 'ZZZ_NOT_THERE', fixed_string: true },
  },
  {
    name: 'regex, no match (\\bzz+top\\b)',
    git: ['-E', '-e', '\\bzz+top\\b'],
    grove: { pattern: '\\bzz+top\\b' },
  },
  {
    name: 'common words, capped at 100 lines',
    git: ['-F', '-e', 'omega function'],
    grove: { pattern: 'omega function', fixed_string: true, max_results: 100 },
  },
  {
    name: 'glob filter (**/*.md, 10% of files)',
    git: ['-F', '-e', 'NEEDLE_TOKEN_42', '--', '*.md'],
    grove: { pattern: 'NEEDLE_TOKEN_42', fixed_string: true, include: ['**/*.md'] },
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function time<T>(run: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const value = await run();
  return [performance.now() - started, value];
}

/** A grep call through an MCP client: its time, its structured result, or its error text. */
async function clientGrep(
  client: Client,
  args: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<{ ms: number; engine: string; error?: string }> {
  const started = performance.now();
  try {
    const result = (await client.callTool(
      { name: 'grep', arguments: args },
      { timeout: 120_000, signal },
    )) as CallToolResult;
    const ms = performance.now() - started;
    const structured = result.structuredContent as { regex_engine?: string } | undefined;
    if (result.isError) return { ms, engine: '-', error: JSON.stringify(result.content) };
    return { ms, engine: structured?.regex_engine ?? '?' };
  } catch (error) {
    const ms = performance.now() - started;
    return { ms, engine: '-', error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Issue 26's scenario through real clients of a real worktree process (`grove serve`'s host): a
 * small worktree with a README and a file of 2,000 lines of 32 a's and a '!'.
 */
async function hostileScenario(): Promise<void> {
  const dir = await makeTempDir('grove-bench-hostile-');
  const root = path.join(dir, 'repo');
  await mkdir(root);
  await git(root, 'init', '-q', '-b', 'main');
  const files: [string, string][] = [
    [path.join(root, 'README.md'), '# Demo\n\nHello from the readme.\n'],
    [path.join(root, 'hostile.txt'), `${'a'.repeat(32)}!\n`.repeat(2000)],
    // The same lines, 4 MiB of them: the linear engine takes seconds for each call.
    [path.join(root, 'hostile-big.txt'), `${'a'.repeat(32)}!\n`.repeat(127_100)],
  ];
  const next = random(7);
  for (let index = 0; index < 1000; index++) {
    files.push([path.join(root, 'src', `m-${index % 20}`, `f-${index}.ts`), textFile(next, false)]);
  }
  await writeAll(files);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'hostile');
  const host = await Host.open({
    dataDir: path.join(dir, 'data'),
    firstPort: randomFirstPort(),
    worktreePollMs: 0,
  });
  try {
    const repo = await host.addRepo(root);
    const id = repo.worktrees[0]!.id;
    await host.startServer(id);
    const { token, urls } = host.getConnectionInfo(id);
    const port = Number(new URL(urls.mcp).port);
    const clients = await Promise.all(
      [0, 1, 2].map(async () => (await connectClient(port, 'modern-http', token)).client),
    );
    const [first, second, other] = clients as [Client, Client, Client];
    const plain = { pattern: 'Hello', include: ['README.md'] };
    await clientGrep(other, plain); // the pool's workers are started
    const alone = await clientGrep(other, plain);
    console.log(
      `\nHostile patterns through MCP clients (a worktree of 1,002 files; hostile.txt: 2,000 ` +
        `lines of 32 a's and '!'); another client's grep "Hello" include README.md alone: ` +
        `${alone.ms.toFixed(0)} ms\n`,
    );
    console.log(
      "| scenario | hostile calls (engine: ms each) | all hostile done | other client's grep meanwhile | goals |",
    );
    console.log('| --- | --- | ---: | ---: | --- |');
    for (const [name, patterns, goals, file] of [
      ['two clients: (a+)+$ and (a|aa)+$ each', ['(a+)+$', '(a|aa)+$'], true, 'hostile.txt'],
      [
        'two clients: (a+)+(?=b) (backtracking only), stopped by the clients after 3 s',
        ['(a+)+(?=b)'],
        false,
        'hostile.txt',
      ],
      [
        'two clients: (a+)+$ and (a|aa)+$ each over 4 MiB (linear but heavy)',
        ['(a+)+$', '(a|aa)+$'],
        false,
        'hostile-big.txt',
      ],
    ] as const) {
      const stop = new AbortController();
      const started = performance.now();
      const hostile = [first, second].flatMap((client) =>
        patterns.map((pattern) => clientGrep(client, { pattern, path: file }, stop.signal)),
      );
      await new Promise((resolve) => setTimeout(resolve, 100)); // the hostile calls are running
      const meanwhile = await clientGrep(other, plain);
      if (!goals && file === 'hostile.txt')
        setTimeout(() => stop.abort(), Math.max(0, 3_000 - (performance.now() - started)));
      const outcomes = await Promise.all(hostile);
      const allMs = performance.now() - started;
      const calls = outcomes
        .map((outcome) => `${outcome.error ? 'stopped' : outcome.engine}: ${outcome.ms.toFixed(0)}`)
        .join(', ');
      const verdict = goals
        ? `all < 2 s: ${allMs < 2_000 ? 'met' : 'MISSED'}; other < 1 s: ${meanwhile.ms < 1_000 ? 'met' : 'MISSED'}`
        : `other < 1 s: ${meanwhile.ms < 1_000 ? 'met' : 'MISSED'}`;
      console.log(
        `| ${name} | ${calls} | ${allMs.toFixed(0)} ms | ${meanwhile.ms.toFixed(0)} ms${meanwhile.error ? ` (${meanwhile.error})` : ''} | ${verdict} |`,
      );
    }
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  } finally {
    await host.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (options.hostileOnly) {
    await hostileScenario();
    return;
  }
  let temp: string | undefined;
  let root = options.repo;
  if (root === undefined) {
    temp = await makeTempDir('grove-bench-grep-');
    root = path.join(temp, 'repo');
  }
  if (!(await stat(path.join(root, '.git')).catch(() => undefined))) {
    const [ms] = await time(() => generate(root!, options.files));
    console.log(`generated ${options.files} tracked files in ${(ms / 1000).toFixed(1)} s: ${root}`);
  }
  const signal = new AbortController().signal;
  const grove = (args: Record<string, unknown>): Promise<GrepResult> =>
    runGrep(args as never, { root: root!, signal });

  console.log(
    `node ${process.version}, ${(await git(root, '--version')).trim()}, ` +
      `${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), grep workers: ` +
      `${workerPool().size}, load average ${loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')}, ${options.runs} runs (median)\n`,
  );
  console.log(
    '| search | git grep (ms) | Grove grep (ms) | Grove / git | lines: git, Grove | files: git, Grove |',
  );
  console.log('| --- | ---: | ---: | ---: | --- | --- |');

  const listing = async (): Promise<number> =>
    (
      await listWorktreeFiles(
        root!,
        { realPath: root!, relativePath: '.' },
        { includeDeleted: true },
      )
    ).files.length;
  const gitListing = async (): Promise<GitGrepOutcome> => {
    const output = await runGit(['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root!,
      ceiling: path.dirname(root!),
    });
    return { lines: splitNul(output.stdout).length, files: 0 };
  };
  await listing();
  await gitListing();
  const listTimes: [number[], number[]] = [[], []];
  let listed: [number, number] = [0, 0];
  for (let run = 0; run < options.runs; run++) {
    const [gitMs, gitOut] = await time(gitListing);
    const [groveMs, groveOut] = await time(listing);
    listTimes[0].push(gitMs);
    listTimes[1].push(groveMs);
    listed = [gitOut.lines, groveOut];
  }
  console.log(
    `| listing only (git ls-files -co --exclude-standard vs Grove's listing) | ` +
      `${median(listTimes[0]).toFixed(0)} | ${median(listTimes[1]).toFixed(0)} | ` +
      `${(median(listTimes[1]) / median(listTimes[0])).toFixed(2)} | ${listed[0]}, ${listed[1]} files | |`,
  );

  for (const search of CASES) {
    await gitGrep(root, search.git);
    await grove(search.grove);
    const gitTimes: number[] = [];
    const groveTimes: number[] = [];
    let gitOut: GitGrepOutcome = { lines: 0, files: 0 };
    let groveOut: GrepResult | undefined;
    for (let run = 0; run < options.runs; run++) {
      let ms: number;
      [ms, gitOut] = await time(() => gitGrep(root!, search.git));
      gitTimes.push(ms);
      [ms, groveOut] = await time(() => grove(search.grove));
      groveTimes.push(ms);
    }
    const gitMs = median(gitTimes);
    const groveMs = median(groveTimes);
    const groveLines = `${groveOut!.match_count}${groveOut!.truncated ? '+' : ''}`;
    console.log(
      `| ${search.name} | ${gitMs.toFixed(0)} | ${groveMs.toFixed(0)} | ` +
        `${(groveMs / gitMs).toFixed(2)} | ${gitOut.lines}, ${groveLines} | ` +
        `${gitOut.files}, ${groveOut!.files.length} |`,
    );
  }
  await workerPool().close();
  await hostileScenario();
  if (temp !== undefined && !options.keep) await rm(temp, { recursive: true, force: true });
  else if (temp !== undefined) console.log(`\nkept ${root}`);
}

await main();
