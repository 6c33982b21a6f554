// The stat pass a CLI check sends before it reads the cache rows (FileJobRunner.statAll, compared
// in classifyAgainstCache): the same classification as the workers' fingerprint, file for file,
// on a real repository with a real hash cache — unchanged files answered by their stat rows
// without a read, edited, touched, deleted, new and symlinked files as the fingerprint says.
import { execFileSync } from 'node:child_process';
import { rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../platform/worker-pool.ts';
import { makeTempRepo, writeFiles, type TempRepo } from '../../testing/temp-repo.ts';
import type { Classification } from './classification-memo.ts';
import { classifyAgainstCache, type EngineParts } from './classify.ts';
import { FileJobRunner, MAIN_THREAD_MAX_PATHS } from './file-job-runner.ts';
import { HashCache } from './hash-cache.ts';
import { ReconcileEngine } from '../reconcile-engine.ts';

const POOL_WORKER = new URL('../../worktree/pool-worker.ts', import.meta.url);

const repos: TempRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
});

/** The classification as plain sorted values, to compare two of them. */
function plain(classification: Classification) {
  const sorted = (values: Iterable<string>) => [...values].sort();
  return {
    changed: sorted(classification.changed),
    unchanged: sorted(classification.unchanged),
    missing: sorted(classification.missing),
    hashes: [...classification.hashes].sort(([a], [b]) => (a < b ? -1 : 1)),
    read: sorted(classification.read.keys()),
    stats: sorted(classification.stats.map((row) => row.path)),
  };
}

describe('the stat pass sent before the rows are read', () => {
  it.each([
    ['on the workers', MAIN_THREAD_MAX_PATHS + 200, undefined],
    ['on the main thread (a small worktree)', 40, undefined],
    ['on the main thread (the CLI, below its limit)', MAIN_THREAD_MAX_PATHS + 200, 5_000],
  ])('classifies %s as the fingerprint does', async (_where, count, statOnMainThreadUpTo) => {
    const files: Record<string, string> = {};
    for (let index = 0; index < count; index++) {
      files[`src/d${index % 7}/f${index}.ts`] = `export const v = ${index};\n`;
    }
    files['outside.txt'] = 'not in the worktree\n';
    const repo = await makeTempRepo(files);
    repos.push(repo);
    const { root } = repo;
    // Old mtimes: the stat rows recorded now hold (git's racy-timestamp rule passes).
    const old = new Date(Date.now() - 3_600_000);
    const paths = Object.keys(files)
      .filter((file) => file.startsWith('src/'))
      .sort();
    for (const file of paths) await utimes(path.join(root, file), old, old);
    const engine = new ReconcileEngine({ root });
    try {
      await engine.markReconciled(paths);
      await engine.cache.flush(); // its stat rows, written after it answered
    } finally {
      engine.close();
    }
    const [edited, touched, deleted, linked, special] = paths.slice(1, 6) as [
      string,
      string,
      string,
      string,
      string,
    ];
    await writeFile(path.join(root, edited), 'export const v = -1;\n'); // new content
    await utimes(path.join(root, touched), new Date(), new Date()); // same content, new mtime
    await unlink(path.join(root, deleted));
    await rm(path.join(root, linked));
    await symlink(path.join(repo.dir, 'repo', 'outside.txt'), path.join(root, linked));
    await rm(path.join(root, special));
    execFileSync('mkfifo', [path.join(root, special)]);
    await writeFiles(root, { 'src/new.ts': 'export const fresh = 1;\n' });
    const all = [...paths, 'src/new.ts'].sort();

    const pool = new WorkerPool(POOL_WORKER, { size: 2 });
    const cache = new HashCache(root);
    const options = statOnMainThreadUpTo === undefined ? {} : { statOnMainThreadUpTo };
    const runner = new FileJobRunner(pool, options);
    const parts: EngineParts = { root, cache, files: runner, now: Date.now };
    try {
      const rows = await cache.readReconciled();
      const statedAlone =
        statOnMainThreadUpTo === undefined
          ? undefined
          : plain(
              await classifyAgainstCache(
                parts,
                all,
                rows,
                undefined,
                undefined,
                runner.statAll(root, all),
              ),
            );
      // The CLI's main-thread stat pass, and the two files it then reads, started no worker.
      if (statedAlone) expect(pool.workerCount).toBe(0);
      const fingerprinted = plain(await classifyAgainstCache(parts, all, rows));
      if (statedAlone) expect(statedAlone).toEqual(fingerprinted);
      const stated = plain(
        await classifyAgainstCache(
          parts,
          all,
          rows,
          undefined,
          undefined,
          parts.files.statAll(root, all),
        ),
      );
      expect(stated).toEqual(fingerprinted);
      expect(stated.changed).toEqual([edited, 'src/new.ts'].sort());
      expect(stated.missing).toEqual([deleted, linked, special].sort());
      // Only the edited and the touched file were read; the others' stat rows answered.
      expect(stated.read).toEqual([edited, touched].sort());
      expect(stated.unchanged).toContain(touched);
      expect(stated.unchanged).toHaveLength(all.length - 5);
    } finally {
      cache.close();
      await pool.close();
    }
  });
});
