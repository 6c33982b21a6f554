import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { blake3 } from '@napi-rs/blake-hash';
import { afterEach, describe, expect, it } from 'vitest';
import { worstLoopStall } from '../../testing/event-loop.ts';
import { makeTempDir } from '../../testing/temp-repo.ts';
import {
  confinedOutcomes,
  HASHED,
  HIT,
  KNOWN_STRIDE,
  MISSING,
  READ_CHUNK_BYTES,
  runFileJob,
} from './file-jobs.ts';
import type { ConfinedResult, FileOutcome } from './file-jobs.ts';
import { CHUNK_SIZE, chunkPlan, FileJobRunner } from './file-job-runner.ts';
import { WorkerPool } from '../../platform/worker-pool.ts';

const POOL_WORKER = new URL('../../worktree/pool-worker.ts', import.meta.url);

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** `b3sum` of a file when Debian's b3sum is installed, else null. */
function b3sum(file: string): string | null {
  if (!['/usr/bin/b3sum', '/usr/local/bin/b3sum'].some((bin) => existsSync(bin))) return null;
  return execFileSync('b3sum', ['--no-names', file], { encoding: 'utf8' }).trim();
}

/** BLAKE3 of one file as the engine computes it (a hash-confined job on its directory). */
function hashPath(file: string): string {
  const [outcome] = confinedOutcomes(
    runFileJob({
      kind: 'hash-confined',
      root: path.dirname(file),
      paths: path.basename(file),
    }) as ConfinedResult,
  );
  if (outcome?.code !== 'hashed') throw new Error(`not hashed: ${file} (${outcome?.code})`);
  return outcome.hash;
}

describe('BLAKE3 of files', () => {
  it('matches the official test vectors and b3sum (when installed)', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    // Vectors published with the BLAKE3 reference implementation (empty input, "abc").
    await writeFile(path.join(dir, 'empty'), '');
    await writeFile(path.join(dir, 'abc'), 'abc');
    expect(hashPath(path.join(dir, 'empty'))).toBe(
      'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262',
    );
    expect(hashPath(path.join(dir, 'abc'))).toBe(
      '6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85',
    );
    // A file bigger than one read chunk is streamed; the hash must not change.
    const big = Buffer.alloc(READ_CHUNK_BYTES * 2 + 12345);
    for (let index = 0; index < big.length; index++) big[index] = (index * 7 + 3) & 0xff;
    await writeFile(path.join(dir, 'big'), big);
    const streamed = hashPath(path.join(dir, 'big'));
    expect(streamed).toBe(blake3(big).toString('hex'));
    for (const name of ['empty', 'abc', 'big']) {
      const reference = b3sum(path.join(dir, name));
      if (reference !== null) expect(hashPath(path.join(dir, name))).toBe(reference);
    }
  });

  it('hashes each file of a job by its own bytes, big and small files in any order', async () => {
    // A pool worker reads every file of its jobs into the same buffer: a small file after a big
    // one must not hash the big one's leftover bytes, a file bigger than the buffer must not be
    // cut. The same job on the main thread (a buffer per file) gives the same hashes.
    const dir = await makeTempDir();
    dirs.push(dir);
    const sizes = [300_000, 100_000, 10, 0, 70_000, 1, 65_536, 262_144, 262_145, 5];
    const names = sizes.map((size, index) => `f${index}`);
    const contents = sizes.map((size, index) => {
      const bytes = Buffer.alloc(size);
      for (let at = 0; at < size; at++) bytes[at] = (at * 13 + index * 31 + 1) & 0xff;
      return bytes;
    });
    await Promise.all(
      names.map((name, index) => writeFile(path.join(dir, name), contents[index]!)),
    );
    const pool = new WorkerPool(POOL_WORKER, { size: 1 });
    try {
      const hashes = (result: ConfinedResult): string[] =>
        confinedOutcomes(result).map((outcome) =>
          outcome.code === 'hashed' ? outcome.hash : outcome.code,
        );
      const job = (order: string[]) =>
        ({ kind: 'hash-confined', root: dir, paths: order.join('\0') }) as const;
      const expected = contents.map((bytes) => blake3(bytes).toString('hex'));
      const reversed = [...names].reverse();
      for (let round = 0; round < 2; round++) {
        // Again once the worker's buffer is as big as it gets, and in the reverse order.
        expect(hashes(await pool.run<ConfinedResult>('file-job', job(names)))).toEqual(expected);
        expect(hashes(await pool.run<ConfinedResult>('file-job', job(reversed)))).toEqual(
          [...expected].reverse(),
        );
      }
      expect(hashes(runFileJob(job(names)) as ConfinedResult)).toEqual(expected);
      for (const [index, name] of names.entries()) {
        const reference = b3sum(path.join(dir, name));
        if (reference !== null) expect(reference).toBe(expected[index]);
      }
    } finally {
      await pool.close();
    }
  });
});

describe('file jobs', () => {
  it('hash-confined hashes files, reports directories and refers escapes to the sandbox', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    const root = path.join(dir, 'root');
    await mkdir(path.join(root, 'sub'), { recursive: true });
    await writeFile(path.join(root, 'a.txt'), 'abc');
    await writeFile(path.join(dir, 'outside.txt'), 'secret');
    await symlink(path.join(dir, 'outside.txt'), path.join(root, 'link-out'));
    await symlink('a.txt', path.join(root, 'link-in'));
    const outcomes = confinedOutcomes(
      runFileJob({
        kind: 'hash-confined',
        root,
        paths: ['a.txt', 'sub', 'link-out', 'link-in', 'missing.txt'].join('\0'),
      }) as ConfinedResult,
    );
    expect(outcomes.map((outcome) => outcome.code)).toEqual([
      'hashed',
      'directory',
      'refer',
      'refer',
      'refer',
    ]);
    expect(outcomes[0]).toMatchObject({
      hash: '6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85',
    });
  });

  it('fingerprint trusts a valid stat row instead of reading, and hashes otherwise', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    await writeFile(path.join(dir, 'a'), 'abc');
    const unknown = new Float64Array(KNOWN_STRIDE * 2).fill(Number.NaN);
    const first = runFileJob({ kind: 'fingerprint', root: dir, paths: 'a\0gone', known: unknown });
    expect(first).toMatchObject({ codes: new Uint8Array([HASHED, MISSING]) });
    const [row] = (first as { hashed: { size: number; mtimeMs: number; ino: number }[] }).hashed;
    if (!row) throw new Error('expected a hashed entry');
    // A row recorded well after the mtime: trusted, so the file is not read (HIT).
    const known = new Float64Array([row.size, row.mtimeMs, row.ino, row.mtimeMs + 5_000]);
    expect(runFileJob({ kind: 'fingerprint', root: dir, paths: 'a', known })).toEqual({
      codes: new Uint8Array([HIT]),
      hashed: [],
      linked: [],
    });
    // Recorded in the same second as the last write (racily clean): read again.
    const racy = new Float64Array([row.size, row.mtimeMs, row.ino, row.mtimeMs]);
    const again = runFileJob({ kind: 'fingerprint', root: dir, paths: 'a', known: racy });
    expect((again as { codes: Uint8Array }).codes).toEqual(new Uint8Array([HASHED]));
  });

  it('the worker pool gives the same answers as the in-thread job, in order', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    const paths: string[] = [];
    for (let index = 0; index < 5000; index++) {
      paths.push(`f${index}`);
      await writeFile(path.join(dir, `f${index}`), `content ${index}`);
    }
    const workers = new WorkerPool(POOL_WORKER, { size: 2 });
    const pool = new FileJobRunner(workers);
    try {
      const pooled = await pool.hashConfined(dir, paths);
      const inline = confinedOutcomes(
        runFileJob({
          kind: 'hash-confined',
          root: dir,
          paths: paths.join('\0'),
        }) as ConfinedResult,
      );
      expect(pooled).toEqual(
        inline.map((outcome) =>
          expect.objectContaining({
            code: outcome.code,
            ...('hash' in outcome ? { hash: outcome.hash } : {}),
          }),
        ),
      );
      const known = new Float64Array(paths.length * KNOWN_STRIDE).fill(Number.NaN);
      const printed = await pool.fingerprint(dir, paths, known);
      expect(printed.codes.every((code) => code === HASHED)).toBe(true);
      expect(printed.hashed.map((entry) => entry.index)).toEqual(
        expect.arrayContaining([0, 4095, 4096, 4999]),
      );
      const byIndex = new Map(printed.hashed.map((entry) => [entry.index, entry.hash]));
      expect(byIndex.get(4999)).toBe((inline[4999] as { hash: string }).hash);
    } finally {
      await workers.close();
    }
  });

  it('gives every worker the same share of a job, in chunks of at most CHUNK_SIZE paths', () => {
    for (const [length, workers] of [
      [20_001, 2],
      [200_000, 2],
      [5_000, 4],
      [CHUNK_SIZE * 3, 2],
      [1_500, 1],
    ] as const) {
      const { starts, size } = chunkPlan(length, workers);
      const sizes = starts.map((start) => Math.min(start + size, length) - start);
      expect(sizes.reduce((sum, part) => sum + part, 0)).toBe(length);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(CHUNK_SIZE);
      // Chunks are taken in order by whichever worker is free: each worker's share.
      const shares = new Array<number>(workers).fill(0);
      sizes.forEach((part, index) => (shares[index % workers]! += part));
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(size);
      expect(Math.max(...shares)).toBeLessThanOrEqual(Math.ceil(length / workers) + workers);
    }
  });

  it("runs one job's chunks on the pool's own workers, never on extra ones", async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    await writeFile(path.join(dir, 'a'), 'a');
    // Three chunks of one job: they queue behind each other (one owner), so the pool never starts
    // the extra workers it keeps for callers that would otherwise wait behind others.
    const paths = [
      'a',
      ...Array.from({ length: 3 * CHUNK_SIZE - 1 }, (_, index) => `none${index}`),
    ];
    const workers = new WorkerPool(POOL_WORKER, { size: 1 });
    const pool = new FileJobRunner(workers);
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, workers.workerCount)), 1);
    try {
      const outcomes = await pool.hashConfined(dir, paths);
      expect(outcomes).toHaveLength(paths.length);
      expect(most).toBe(1);
    } finally {
      clearInterval(sampler);
      await workers.close();
    }
  });

  it('ends idle workers, never during a job, and starts them again for the next job', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    await writeFile(path.join(dir, 'a'), 'a');
    await writeFile(path.join(dir, 'b'), 'b');
    // Two full chunks (the other paths do not exist: cheap, referred back to the sandbox).
    const paths = [
      'a',
      'b',
      ...Array.from({ length: 2 * CHUNK_SIZE - 2 }, (_, index) => `none${index}`),
    ];
    const answers = (outcomes: FileOutcome[]) =>
      outcomes.map((outcome) => [outcome.code, 'hash' in outcome ? outcome.hash : null]);
    // One worker, two chunks, and an idle delay far shorter than a chunk: the worker is free for
    // an instant between the chunks and busy with the second one while nothing is queued; it must
    // not be ended then (a cut chunk would never be answered, and this test would time out).
    const workers = new WorkerPool(POOL_WORKER, { size: 1, idleMs: 1 });
    const pool = new FileJobRunner(workers);
    try {
      const first = await pool.hashConfined(dir, paths);
      expect(answers(first).slice(0, 3)).toEqual([
        ['hashed', blake3('a').toString('hex')],
        ['hashed', blake3('b').toString('hex')],
        ['refer', null],
      ]);
      // Still a worker: a worker that died mid-chunk would have sent the pool to the main thread.
      expect(workers.workerCount).toBe(1);
      const deadline = Date.now() + 10_000;
      while (workers.workerCount > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(workers.workerCount).toBe(0);

      const again = await pool.hashConfined(dir, paths);
      expect(answers(again)).toEqual(answers(first));
      expect(workers.workerCount).toBe(1);
    } finally {
      await workers.close();
    }
  });
});

describe('hashing never holds the event loop', () => {
  const valueOf = <T>(result: PromiseSettledResult<T>): T => {
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  };

  it('a 512 MB file in a small job is hashed by a worker, not inline', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    await writeFile(path.join(dir, 'small.txt'), 'small\n');
    await writeFile(path.join(dir, 'big.bin'), '');
    await truncate(path.join(dir, 'big.bin'), 512 * 1024 * 1024); // sparse: zeros
    const workers = new WorkerPool(POOL_WORKER, { size: 2 });
    const pool = new FileJobRunner(workers);
    try {
      const hashed = await worstLoopStall(() =>
        pool.hashConfined(dir, ['small.txt', 'big.bin', 'small.txt']),
      );
      expect(valueOf(hashed.result).map((outcome) => outcome.code)).toEqual([
        'hashed',
        'hashed',
        'hashed',
      ]);
      expect(hashed.stallMs).toBeLessThan(250);
      const fingerprinted = await worstLoopStall(() =>
        pool.fingerprint(
          dir,
          ['small.txt', 'big.bin'],
          new Float64Array(2 * KNOWN_STRIDE).fill(NaN),
        ),
      );
      expect([...valueOf(fingerprinted.result).codes]).toEqual([HASHED, HASHED]);
      expect(
        valueOf(fingerprinted.result)
          .hashed.map((entry) => entry.index)
          .sort(),
      ).toEqual([0, 1]);
      expect(fingerprinted.stallMs).toBeLessThan(250);
      // The same bytes, whichever thread hashed them.
      const big = valueOf(hashed.result)[1] as Extract<FileOutcome, { code: 'hashed' }>;
      const entry = valueOf(fingerprinted.result).hashed.find((candidate) => candidate.index === 1);
      expect(entry?.hash).toBe(big.hash);
    } finally {
      await workers.close();
    }
  });
});
