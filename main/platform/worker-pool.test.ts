// The one worker pool, with the real worker entry (main/worktree/pool-worker.ts) and both job
// kinds: a runaway grep chunk is stopped at its own deadline or by its caller's signal, its worker
// is replaced, and hashing submitted meanwhile by another owner is served at once; low-priority
// jobs run on threads of their own at the lowest CPU priority; long jobs of many owners never hold
// every worker (the reserve).
import { statSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GrepChunkRequest, GrepChunkResult } from '../tools/grep-search.ts';
import { confinedOutcomes, type ConfinedResult } from '../reconcile/floor/file-jobs.ts';
import { waitFor } from '../testing/net.ts';
import { makeTempDir } from '../testing/temp-repo.ts';
import { UserError } from './errors.ts';
import { RESERVE_GREP_BYTES } from '../tools/grep-search.ts';
import { OVERFLOW_WORKERS, WorkerPool } from './worker-pool.ts';

const POOL_WORKER = new URL('../worktree/pool-worker.ts', import.meta.url);
let dir: string;

beforeAll(async () => {
  dir = await makeTempDir();
  await writeFile(path.join(dir, 'slow.txt'), `${'a'.repeat(40)}!\n`);
  await writeFile(path.join(dir, 'hit.txt'), 'a hit\n');
  // More text than a chunk searches on the reserve worker (RESERVE_GREP_BYTES).
  await writeFile(path.join(dir, 'big.txt'), `${'a'.repeat(99)}\n`.repeat(3_000));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const chunk = (pattern: string, file: string): GrepChunkRequest => ({
  root: dir,
  spec: { pattern, fixedString: false, ignoreCase: false, contextLines: 0, maxLineChars: 500 },
  files: [{ path: file }],
  limit: 10,
  maxFileBytes: 1024 * 1024,
});

/** A pattern only the backtracking engine runs (a lookahead), which backtracks badly on slow.txt. */
const RUNAWAY = '(a+)+(?=b)';

/** The nice values of this process's threads (Linux), by thread id. */
async function threadNiceValues(): Promise<number[]> {
  const values: number[] = [];
  for (const task of await readdir('/proc/self/task')) {
    const stat = await readFile(`/proc/self/task/${task}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.length > 16) values.push(Number(fields[16])); // field 19 of proc_pid_stat(5)
  }
  return values;
}

const hashJob = (paths: string[]) => ({
  kind: 'hash-confined',
  root: dir,
  paths: paths.join('\0'),
});

describe('the worker pool', () => {
  it('runs each job kind on a worker and answers like the handler', async () => {
    const pool = new WorkerPool(POOL_WORKER, { size: 1 });
    try {
      const found = await pool.run<GrepChunkResult>('grep-chunk', chunk('hit', 'hit.txt'));
      expect(found.files.map((file) => file.path)).toEqual(['hit.txt']);
      const [hashed] = confinedOutcomes(
        await pool.run<ConfinedResult>('file-job', hashJob(['hit.txt'])),
      );
      expect(hashed).toMatchObject({ code: 'hashed' });
      await expect(pool.run('no-such-kind', {})).rejects.toThrow(/unknown job kind: no-such-kind/);
    } finally {
      await pool.close();
    }
  });

  it('ends the worker of a job that retires it once the job is done, and starts another for the next', async () => {
    const pool = new WorkerPool(POOL_WORKER, { size: 1 });
    try {
      const spec =
        "schema_version: '0.8'\nintent: x\ntier: registered\nartifacts:\n  code:\n    - path: a.ts\n";
      const parsed = await pool.run<{ ok: boolean }>(
        'spec-validate',
        { relative: '.notarai/a.spec.yaml', text: spec },
        { retire: true },
      );
      expect(parsed.ok).toBe(true);
      expect(pool.workerCount).toBe(0); // its heap went with it
      // The next jobs start a worker, which stays for the one after.
      const found = await pool.run<GrepChunkResult>('grep-chunk', chunk('hit', 'hit.txt'));
      expect(found.files.map((file) => file.path)).toEqual(['hit.txt']);
      expect(pool.workerCount).toBe(1);
      await pool.run<GrepChunkResult>('grep-chunk', chunk('hit', 'hit.txt'));
      expect(pool.workerCount).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('stops a job at its deadline, replaces its worker, and serves another owner meanwhile', async () => {
    const pool = new WorkerPool(POOL_WORKER, { size: 1 });
    const controller = new AbortController();
    try {
      // A runaway that never ends by itself holds the only worker (handed over synchronously);
      // only its caller's signal stops it, so "meanwhile" does not depend on how fast this
      // machine is (speed is the benchmarks' business, never a test's).
      const order: string[] = [];
      const held = pool.run('grep-chunk', chunk(RUNAWAY, 'slow.txt'), {
        signal: controller.signal,
      });
      held.then(
        () => order.push('runaway settled'),
        () => order.push('runaway settled'),
      );
      // Another owner's hashing goes to a worker at once (an overflow one), not behind it...
      const hashing = pool.run<ConfinedResult>('file-job', hashJob(['hit.txt']));
      hashing.catch(() => undefined); // if queued, close() rejects it: the line below says why
      expect(pool.queuedCount).toBe(0);
      const [hashed] = confinedOutcomes(await hashing);
      order.push('hashed');
      expect(hashed).toMatchObject({ code: 'hashed' });
      // ...and answers while the runaway still runs.
      expect(order).toEqual(['hashed']);
      controller.abort();
      await held.catch(() => undefined);
      expect(order).toEqual(['hashed', 'runaway settled']);

      // A runaway with a deadline is stopped there, with an error that says so.
      const error = await pool
        .run('grep-chunk', chunk(RUNAWAY, 'slow.txt'), { deadlineMs: 500 })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(UserError);
      expect(error).toMatchObject({ code: 'timed-out' });
      expect((error as Error).message).toMatch(/a grep-chunk job did not finish within 0.5 s/);
      // The pool recovers: the next job runs on a new worker, on at most `size` once idle again.
      const again = await pool.run<GrepChunkResult>('grep-chunk', chunk('hit', 'hit.txt'));
      expect(again.files).toHaveLength(1);
      expect(pool.workerCount).toBeLessThanOrEqual(1);
    } finally {
      controller.abort();
      await pool.close();
    }
  });

  it('keeps a worker for short jobs of new owners however many long jobs hold the others', async () => {
    const pool = new WorkerPool(POOL_WORKER, { size: 1 });
    const controller = new AbortController();
    try {
      // Long jobs of 1 + OVERFLOW_WORKERS owners (four hostile grep calls are four owners) hold
      // every ordinary worker; they never end by themselves.
      const settled: string[] = [];
      const long = Array.from({ length: 1 + OVERFLOW_WORKERS + 1 }, (_, index) => {
        const job = pool.run('grep-chunk', chunk(RUNAWAY, 'slow.txt'), {
          signal: controller.signal,
        });
        job.then(
          () => settled.push(`long ${index}`),
          () => settled.push(`long ${index}`),
        );
        return job;
      });
      // One more long job, of another owner, that accepts the reserve: there it searches a
      // bounded share (nothing of big.txt) and says where it stopped, instead of holding it.
      expect(statSync(path.join(dir, 'big.txt')).size).toBeGreaterThan(RESERVE_GREP_BYTES);
      const yielded = await pool.run<GrepChunkResult>('grep-chunk', chunk('b', 'big.txt'), {
        reserve: true,
      });
      expect(yielded).toMatchObject({ unfinished: 0, lines: 0, files: [] });
      // A short job of a new owner is served while every long job still runs.
      const found = await pool.run<GrepChunkResult>('grep-chunk', chunk('hit', 'hit.txt'), {
        reserve: true,
      });
      expect(found.files.map((file) => file.path)).toEqual(['hit.txt']);
      expect(found.unfinished).toBeUndefined();
      expect(settled).toEqual([]);
      // The ordinary workers and the reserve: the last long job waits, it never took the reserve.
      expect(pool.workerCount).toBe(1 + OVERFLOW_WORKERS + 1);
      expect(pool.queuedCount).toBe(1);
      controller.abort(new UserError('done', { code: 'cancelled' }));
      await Promise.allSettled(long);
      expect(settled).toHaveLength(long.length);
    } finally {
      controller.abort();
      await pool.close();
    }
  });

  it("ends a job when its caller's signal aborts, with the caller's reason", async () => {
    const pool = new WorkerPool(POOL_WORKER, { size: 1 });
    try {
      const controller = new AbortController();
      const runaway = pool.run('grep-chunk', chunk(RUNAWAY, 'slow.txt'), {
        signal: controller.signal,
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const abortedAt = Date.now();
      controller.abort(new UserError('the client cancelled', { code: 'cancelled' }));
      await expect(runaway).rejects.toThrow('the client cancelled');
      expect(Date.now() - abortedAt).toBeLessThan(1_000);
      expect(pool.workerCount).toBe(0); // its worker was terminated
    } finally {
      await pool.close();
    }
  });

  it.runIf(process.platform === 'linux')(
    'runs low-priority jobs on threads of their own at the lowest priority, apart from the others',
    async () => {
      const pool = new WorkerPool(POOL_WORKER, { size: 1 });
      const controller = new AbortController();
      try {
        const before = await threadNiceValues();
        expect(before).not.toContain(19);
        const runaway = pool.run('grep-chunk', chunk(RUNAWAY, 'slow.txt'), {
          lowPriority: true,
          signal: controller.signal,
        });
        runaway.catch(() => undefined);
        // The runaway's thread runs at nice 19 (bounded wait for the worker to start).
        for (let tries = 0; tries < 100 && !(await threadNiceValues()).includes(19); tries++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(await threadNiceValues()).toContain(19);
        expect(pool.workerCount).toBe(1);
        // Another job does not wait for it, nor share its worker: it gets the pool's own worker.
        const found = await pool.run<GrepChunkResult>('grep-chunk', chunk('hit', 'hit.txt'));
        expect(found.files.map((file) => file.path)).toEqual(['hit.txt']);
        expect(pool.workerCount).toBe(2);
        controller.abort(new UserError('done', { code: 'cancelled' }));
        await expect(runaway).rejects.toThrow('done');
        expect(pool.workerCount).toBe(1);
        // A low-priority job that finishes keeps its worker for the next low-priority one.
        const low = await pool.run<GrepChunkResult>('grep-chunk', chunk('hit', 'hit.txt'), {
          lowPriority: true,
        });
        expect(low.files).toHaveLength(1);
        expect(pool.workerCount).toBe(2);
      } finally {
        controller.abort();
        await pool.close();
      }
    },
  );
});

describe('workers started ahead of work (prestart)', () => {
  it('starts the normal workers once, serves the next jobs on them, and ends them when unused', async () => {
    const pool = new WorkerPool(POOL_WORKER, { size: 2, idleMs: 100 });
    try {
      expect(pool.workerCount).toBe(0);
      pool.prestart();
      expect(pool.workerCount).toBe(2);
      pool.prestart(); // already running: none more
      expect(pool.workerCount).toBe(2);
      // Two owners' hashing at once runs on the two started workers (no third).
      const outcomes = await Promise.all(
        ['hit.txt', 'slow.txt'].map(async (file) =>
          confinedOutcomes(await pool.run<ConfinedResult>('file-job', hashJob([file]))),
        ),
      );
      expect(outcomes.map(([outcome]) => outcome?.code)).toEqual(['hashed', 'hashed']);
      expect(pool.workerCount).toBe(2);
      // Unused, they end as any idle worker does (a process at rest keeps no worker).
      await waitFor(() => pool.workerCount === 0, 'the idle workers ended');
      pool.prestart({ forHashing: true }); // each loads BLAKE3 while it waits
      expect(pool.workerCount).toBe(2);
      await waitFor(() => pool.workerCount === 0, 'the prestarted, never used workers ended');
    } finally {
      await pool.close();
    }
  });
});
