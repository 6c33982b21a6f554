// grep on real repositories, through the worker pool and in the main thread: matches, order,
// options, caps and truncation, .gitignore, binary files, odd names, symlinks never followed (also
// a tracked directory swapped for a symlink out, which `git grep` would follow), cancellation and
// the timeout that stops a runaway regular expression.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';
import { OVERFLOW_WORKERS, WorkerPool } from '../platform/worker-pool.ts';
import { MAX_LINE_CHARS, grepTool, runGrep, type GrepResult, type GrepOptions } from './grep.ts';
import { UserError } from '../platform/errors.ts';
import { expectNoLeak, makeToolFixture, type ToolFixture } from '../testing/tool-calls.ts';

let fixture: ToolFixture;
const POOL_WORKER = new URL('../worktree/pool-worker.ts', import.meta.url);
let pool: WorkerPool;

const modes: [string, () => GrepOptions][] = [
  ['worker pool', () => ({ pool })],
  ['main thread', () => ({ pool: null })],
];

async function grep(
  args: Record<string, unknown>,
  options: GrepOptions = { pool },
  root = fixture.root,
): Promise<GrepResult> {
  const result = await runGrep(
    args as never,
    { root, signal: options.timeoutMs === -1 ? AbortSignal.abort() : new AbortController().signal },
    options,
  );
  expectNoLeak(result);
  return grepTool.outputSchema.parse(result) as GrepResult;
}

const paths = (result: GrepResult): string[] => result.files.map((file) => file.path);

beforeAll(async () => {
  fixture = await makeToolFixture();
  pool = new WorkerPool(POOL_WORKER, { size: 2 });
});

afterAll(async () => {
  await pool.close();
  await fixture.cleanup();
});

describe.each(modes)('grep (%s)', (_mode, options) => {
  it('finds matching lines in tracked and untracked files, not in ignored ones', async () => {
    const result = await grep({ pattern: 'needle' }, options());
    expect(paths(result)).toEqual([
      '.github/ci.yml',
      'bytes/f\ufffd.txt',
      'docs/guide.md',
      'nested/inner.txt',
      'notes/todo.txt',
      'src/app.test.ts',
      'src/deep/nested/x.ts',
      'src/index.ts',
      'src/util.ts',
      'ünïcode/файл.txt',
    ]);
    expect(result.files.find((file) => file.path === 'src/index.ts')?.matches).toEqual([
      { line: 1, column: 14, text: 'export const needle = 1;' },
    ]);
    expect(result.files.find((file) => file.path === 'ünïcode/файл.txt')?.matches).toEqual([
      { line: 1, column: 8, text: 'юникод needle' },
    ]);
    expect(result).toMatchObject({ path: '.', match_count: 10, truncated: false });
    // data/blob.bin holds "needle" but is binary; link-file, link-out, link-in and swap are
    // symlinks (never opened); gone.txt is deleted; swap/inner.txt is behind a symlink out.
    expect(result.skipped).toEqual({ binary: 1, too_large: 0, symlinks: 4, unreadable: 0 });
  });

  it('reads a regular expression, a fixed string, and ignores case on request', async () => {
    const regex = await grep({ pattern: '^(export|deep) \\w+' }, options());
    expect(paths(regex)).toEqual(['src/deep/nested/x.ts', 'src/index.ts', 'src/util.ts']);
    const caps = await grep({ pattern: 'Needle' }, options());
    expect(caps.files).toEqual([
      { path: 'src/index.ts', matches: [{ line: 3, column: 4, text: '// Needle in caps' }] },
    ]);
    const folded = await grep({ pattern: 'NEEDLE', ignore_case: true, path: 'src' }, options());
    expect(folded.match_count).toBe(5);
    const fixed = await grep({ pattern: 'helper()', fixed_string: true }, options());
    expect(fixed.files).toEqual([
      {
        path: 'src/util.ts',
        matches: [{ line: 1, column: 17, text: 'export function helper() {' }],
      },
    ]);
    const fixedFolded = await grep(
      { pattern: 'HELPER()', fixed_string: true, ignore_case: true },
      options(),
    );
    expect(fixedFolded.match_count).toBe(1);
  });

  it('returns context lines, clipped at the start and end of a file', async () => {
    const result = await grep({ pattern: 'other', context_lines: 2 }, options());
    expect(result.files).toEqual([
      {
        path: 'src/index.ts',
        matches: [
          {
            line: 2,
            column: 7,
            text: 'const other = 2;',
            before: ['export const needle = 1;'],
            after: ['// Needle in caps'],
          },
        ],
      },
    ]);
  });

  it('filters with include and exclude globs and narrows to a path or one file', async () => {
    const ts = await grep({ pattern: 'needle', include: ['**/*.ts'] }, options());
    expect(paths(ts)).toEqual([
      'src/app.test.ts',
      'src/deep/nested/x.ts',
      'src/index.ts',
      'src/util.ts',
    ]);
    const noTests = await grep(
      { pattern: 'needle', include: ['**/*.ts'], exclude: ['**/*.test.ts'] },
      options(),
    );
    expect(paths(noTests)).not.toContain('src/app.test.ts');
    const under = await grep({ pattern: 'needle', path: 'src/deep' }, options());
    expect(paths(under)).toEqual(['src/deep/nested/x.ts']);
    const file = await grep({ pattern: 'needle', path: 'docs/guide.md' }, options());
    expect(file).toMatchObject({ path: 'docs/guide.md', match_count: 1 });
    const viaLink = await grep({ pattern: 'helper', path: 'link-in' }, options());
    expect(viaLink.path).toBe('src');
    const ignoredDirectory = await grep({ pattern: 'needle', path: 'build' }, options());
    expect(paths(ignoredDirectory)).toEqual(['build/out.js']);
  });

  it('caps the matching lines and says it truncated', async () => {
    const capped = await grep({ pattern: 'needle', max_results: 3 }, options());
    expect(capped.match_count).toBe(3);
    expect(capped.truncated).toBe(true);
    expect(paths(capped)).toEqual(['.github/ci.yml', 'bytes/f\ufffd.txt', 'docs/guide.md']);
    const exact = await grep({ pattern: 'needle', max_results: 10 }, options());
    expect(exact.truncated).toBe(false);
  });

  it('refuses an invalid regular expression, pointing at fixed_string', async () => {
    await expect(grep({ pattern: 'a(b' }, options())).rejects.toThrow(
      /invalid regular expression "a\(b".*fixed_string: true/,
    );
    await expect(grep({ pattern: '' }, options())).rejects.toThrow(/invalid arguments/);
  });

  it('stops when cancelled', async () => {
    await expect(grep({ pattern: 'needle' }, { ...options(), timeoutMs: -1 })).rejects.toThrow(
      /cancelled/,
    );
  });
});

describe('grep on many files', () => {
  let repo: TempRepo;
  beforeAll(async () => {
    const files: Record<string, string> = {};
    for (let index = 0; index < 700; index++) {
      const name = `many/f-${String(index).padStart(4, '0')}.txt`;
      files[name] = index % 100 === 7 ? 'zzz\nhit here\n' : 'nothing\n';
    }
    files['long.txt'] = `${'x'.repeat(2000)}hit${'y'.repeat(2000)}\n`;
    files['crlf.txt'] = 'first\r\nhit crlf\r\nlast\r\n';
    files['slow.txt'] = `${'a'.repeat(40)}!\n`;
    // Issue 26's file: 2,000 lines of 32 a's and a '!', where (a+)+$ backtracks 2^32 times a line.
    files['hostile.txt'] = `${'a'.repeat(32)}!\n`.repeat(2000);
    files['doubled.txt'] = 'no repeat\nbookkeeper\n';
    // More text than a chunk searches on the pool's reserve worker (RESERVE_GREP_BYTES).
    files['big.txt'] = `${'a'.repeat(99)}\n`.repeat(3_000) + 'last line\n';
    repo = await makeTempRepo(files);
  });
  afterAll(async () => {
    await repo.cleanup();
  });

  it('keeps path order across chunks and workers, same as the main thread', async () => {
    const viaPool = await grep({ pattern: 'hit' }, { pool }, repo.root);
    const inThread = await grep({ pattern: 'hit' }, { pool: null }, repo.root);
    expect(viaPool).toEqual(inThread);
    expect(paths(viaPool)).toEqual([
      'crlf.txt',
      'long.txt',
      ...[7, 107, 207, 307, 407, 507, 607].map((n) => `many/f-${String(n).padStart(4, '0')}.txt`),
    ]);
    expect(viaPool.files_searched).toBe(707);
    const capped = await grep({ pattern: 'hit', max_results: 4 }, { pool }, repo.root);
    expect(paths(capped)).toEqual(['crlf.txt', 'long.txt', 'many/f-0007.txt', 'many/f-0107.txt']);
    expect(capped.truncated).toBe(true);
  });

  it('strips CR from CRLF lines and cuts long lines around the match', async () => {
    const result = await grep(
      { pattern: 'hit', path: 'crlf.txt', context_lines: 1 },
      { pool },
      repo.root,
    );
    expect(result.files[0]?.matches).toEqual([
      { line: 2, column: 1, text: 'hit crlf', before: ['first'], after: ['last'] },
    ]);
    const long = await grep({ pattern: 'hit', path: 'long.txt' }, { pool }, repo.root);
    const match = long.files[0]!.matches[0]!;
    expect(match).toMatchObject({ line: 1, column: 2001, text_truncated: true });
    expect(match.text).toHaveLength(MAX_LINE_CHARS);
    expect(match.text).toContain('hit');
  });

  // A lookahead keeps a pattern on the backtracking engine, where (a+)+ blows up.
  const RUNAWAY = '(a+)+(?=b)';

  it('runs catastrophic patterns on the linear engine: done, not stopped at the deadline', async () => {
    for (const [pattern, ignoreCase] of [
      ['(a+)+$', false],
      ['(a|aa)+$', false],
      ['(A+)+$', true],
    ] as const) {
      // The default 60 s deadline: on the backtracking engine this would outlast the test.
      const result = await grep(
        { pattern, ignore_case: ignoreCase, path: 'hostile.txt' },
        { pool },
        repo.root,
      );
      expect(result).toMatchObject({ match_count: 0, files_searched: 1, regex_engine: 'linear' });
      expect(result.regex_engine_note).toBeUndefined();
    }
    const matching = await grep({ pattern: '(a|aa)+!$', path: 'hostile.txt' }, { pool }, repo.root);
    expect(matching).toMatchObject({ match_count: 100, truncated: true, regex_engine: 'linear' });
  });

  it('runs a backreference on the backtracking engine and says so', async () => {
    const result = await grep({ pattern: '(\\w)\\1', path: 'doubled.txt' }, { pool }, repo.root);
    expect(result.files).toEqual([
      { path: 'doubled.txt', matches: [{ line: 2, column: 2, text: 'bookkeeper' }] },
    ]);
    expect(result.regex_engine).toBe('backtracking');
    expect(result.regex_engine_note).toMatch(/^the pattern uses a backreference, which only/);
    const inThread = await grep(
      { pattern: '(\\w)\\1', path: 'doubled.txt' },
      { pool: null },
      repo.root,
    );
    expect(inThread).toEqual(result);
  });

  it('stops a runaway regular expression at the deadline, and the pool recovers', async () => {
    const started = Date.now();
    await expect(
      grep({ pattern: RUNAWAY, path: 'slow.txt' }, { pool, timeoutMs: 300 }, repo.root),
    ).rejects.toThrow(/took longer than 0.3 s and was stopped/);
    expect(Date.now() - started).toBeLessThan(5_000);
    const after = await grep({ pattern: 'hit', path: 'crlf.txt' }, { pool }, repo.root);
    expect(after.match_count).toBe(1);
  });

  it('serves another call while runaway expressions run, on low-priority workers of their own', async () => {
    const single = new WorkerPool(POOL_WORKER, { size: 1 });
    const stop = new AbortController();
    try {
      const runaway = () =>
        runGrep(
          { pattern: RUNAWAY, path: 'slow.txt' },
          { root: repo.root, signal: stop.signal },
          { pool: single },
        );
      const runaways = [runaway(), runaway()];
      let settled = 0;
      for (const call of runaways) call.then(null, () => undefined).finally(() => (settled += 1));
      await new Promise((resolve) => setTimeout(resolve, 200)); // both are running now
      const other = await grep({ pattern: 'hit', path: 'crlf.txt' }, { pool: single }, repo.root);
      expect(other.match_count).toBe(1);
      // Answered while both runaways still ran (they would for their 60 s deadline).
      expect(settled).toBe(0);
      expect(single.workerCount).toBe(3); // the pool's own worker and two low-priority ones
      stop.abort();
      for (const call of runaways) await expect(call).rejects.toThrow('grep was cancelled');
    } finally {
      stop.abort();
      await single.close();
    }
  });

  it('keeps a worker for another call while heavy calls hold the others, and finishes those that yield there', async () => {
    const single = new WorkerPool(POOL_WORKER, { size: 1 });
    const stop = new AbortController();
    try {
      // Heavy searches of other callers hold the ordinary workers (the pool's own and the overflow
      // one); as far as the pool can tell, they never end.
      const heavy = Array.from({ length: 1 + OVERFLOW_WORKERS }, () =>
        single.run(
          'grep-chunk',
          {
            root: repo.root,
            spec: {
              pattern: RUNAWAY,
              fixedString: false,
              ignoreCase: false,
              contextLines: 0,
              maxLineChars: MAX_LINE_CHARS,
            },
            files: [{ path: 'slow.txt' }],
            limit: 10,
            maxFileBytes: 1024 * 1024,
          },
          { signal: stop.signal },
        ),
      );
      for (const job of heavy) job.catch(() => undefined);
      // A grep of a big file gets the reserve, searches a bounded share there (none of big.txt)
      // and waits for an ordinary worker for the rest: it holds no worker while it waits.
      let bigDone = false;
      const big = grep({ pattern: 'last line', path: 'big.txt' }, { pool: single }, repo.root);
      big.then(
        () => (bigDone = true),
        () => (bigDone = true),
      );
      for (let tries = 0; tries < 400 && single.queuedCount === 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(single.queuedCount).toBe(1); // big.txt's rest
      // Another call is served at once, on the reserve, while all of them still run.
      const other = await grep({ pattern: 'hit', path: 'crlf.txt' }, { pool: single }, repo.root);
      expect(other.match_count).toBe(1);
      expect(bigDone).toBe(false);
      // Once a worker is free, the big file's search goes on and finds its line.
      stop.abort();
      const found = await big;
      expect(found.files).toEqual([
        { path: 'big.txt', matches: [{ line: 3_001, column: 1, text: 'last line' }] },
      ]);
      expect(found.files_searched).toBe(1);
    } finally {
      stop.abort();
      await single.close();
    }
  });

  it('falls back to the main thread when workers cannot start', async () => {
    const broken = new WorkerPool(new URL('./no-such-worker.ts', import.meta.url), { size: 1 });
    try {
      const logged: string[] = [];
      const result = await runGrep(
        { pattern: 'hit' },
        {
          root: repo.root,
          signal: new AbortController().signal,
          log: (level, message) => logged.push(`${level}: ${message}`),
        },
        { pool: broken },
      );
      expect(result.match_count).toBe(9);
      expect(broken.unavailable).toBeDefined();
      // The client hears about it (ToolContext.log), and later calls skip the pool at once.
      expect(logged).toEqual([
        expect.stringMatching(
          /^warning: worker threads cannot start: .*searching in the main thread/,
        ),
      ]);
      expect((await grep({ pattern: 'hit' }, { pool: broken }, repo.root)).match_count).toBe(9);
    } finally {
      await broken.close();
    }
  });
});

describe('grep refusals', () => {
  it('refuses a path that is a FIFO', async () => {
    const { execFile } = await import('node:child_process');
    await mkdir(path.join(fixture.root, 'special'), { recursive: true });
    await new Promise<void>((resolve, reject) =>
      execFile('mkfifo', [path.join(fixture.root, 'special', 'pipe')], (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    await expect(grep({ pattern: 'x', path: 'special/pipe' })).rejects.toThrow(UserError);
    await writeFile(path.join(fixture.root, 'special', 'ok.txt'), 'x\n');
    expect((await grep({ pattern: 'x', path: 'special' })).match_count).toBe(1);
  });
});
