// get_spec_diff's Grove additions for the window's review: `review` (each listed file's status vs
// the base, renames with their old path, the files never reconciled, the other specs governing a
// file) and `with_snapshot` (the committed snapshot counts where the cache has no row), on a real
// repository with every kind of change.
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { git, makeTempRepo } from '../testing/temp-repo.ts';
import { ReconcileEngine } from './reconcile-engine.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const behaviors = [{ name: 'b', given: 'g', then: 't' }];
const spec = (globs: string[]): string =>
  stringify({
    schema_version: '0.7',
    intent: 'x',
    behaviors,
    artifacts: { code: globs.map((glob) => ({ path: glob })) },
  });
const API = '.notarai/api.spec.yaml';

async function repo(): Promise<{ root: string; engine: ReconcileEngine }> {
  const made = await makeTempRepo({
    [API]: spec(['src/**', 'Cargo.toml']),
    '.notarai/build.spec.yaml': spec(['Cargo.toml']),
    'src/kept.ts': 'kept\n',
    'src/edited.ts': 'before\n',
    'src/gone.ts': 'gone\n',
    'src/old-name.ts': 'a file long enough for git to see the rename\n'.repeat(5),
    'Cargo.toml': '[package]\n',
  });
  cleanups.push(() => made.cleanup());
  const engine = new ReconcileEngine({ root: made.root });
  cleanups.push(() => engine.close());
  return { root: made.root, engine };
}

describe('get_spec_diff review', () => {
  it('tells added, modified, deleted, renamed, untracked and same-as-base files apart', async () => {
    const { root, engine } = await repo();
    await writeFile(path.join(root, 'src/edited.ts'), 'after\n');
    await rm(path.join(root, 'src/gone.ts'));
    await rename(path.join(root, 'src/old-name.ts'), path.join(root, 'src/new-name.ts'));
    await git(root, 'add', '-A', 'src/old-name.ts', 'src/new-name.ts');
    await writeFile(path.join(root, 'src/staged.ts'), 'staged\n');
    await git(root, 'add', 'src/staged.ts');
    await writeFile(path.join(root, 'src/untracked.ts'), 'new\n');
    // kept.ts is marked, then edited back and forth: changed since reconciled, same as the base.
    await engine.markReconciled(['src/kept.ts']);
    await writeFile(path.join(root, 'src/kept.ts'), 'other\n');
    await engine.markReconciled(['src/kept.ts']);
    await writeFile(path.join(root, 'src/kept.ts'), 'kept\n');

    const result = await engine.getSpecDiff({ spec_path: API, base_branch: 'main', review: true });
    expect(result.review?.status).toEqual({
      'Cargo.toml': 'unchanged',
      'src/edited.ts': 'modified',
      'src/gone.ts': 'deleted',
      'src/kept.ts': 'unchanged',
      'src/new-name.ts': 'renamed',
      'src/staged.ts': 'added',
      'src/untracked.ts': 'untracked',
    });
    expect(result.review?.renamed_from).toEqual({ 'src/new-name.ts': 'src/old-name.ts' });
    // Every listed file but kept.ts was never reconciled.
    expect(result.review?.never_reconciled).toEqual([
      'Cargo.toml',
      'src/edited.ts',
      'src/new-name.ts',
      'src/staged.ts',
      'src/untracked.ts',
    ]);
    // Cargo.toml is governed by the build spec too.
    expect(result.review?.other_specs).toEqual({ 'Cargo.toml': ['.notarai/build.spec.yaml'] });
    // Without `review`, NotarAI's keys only.
    const plain = await engine.getSpecDiff({ spec_path: API, base_branch: 'main' });
    expect(plain.review).toBeUndefined();
  });

  it('with_snapshot judges files the cache has no row for by the committed snapshot', async () => {
    const { root, engine } = await repo();
    await engine.markReconciled(['src/kept.ts', 'src/edited.ts', 'Cargo.toml']);
    await engine.snapshotState();
    await engine.clearCache();
    await writeFile(path.join(root, 'src/edited.ts'), 'after\n');

    const cacheOnly = await engine.getSpecDiff({ spec_path: API, base_branch: 'main' });
    expect(cacheOnly.files).toContain('src/kept.ts');
    const grove = await engine.getSpecDiff({
      spec_path: API,
      base_branch: 'main',
      with_snapshot: true,
      review: true,
    });
    // kept.ts and Cargo.toml are as the snapshot fingerprinted them; edited.ts changed since.
    expect(grove.files).toEqual(['src/edited.ts', 'src/gone.ts', 'src/old-name.ts']);
    expect(grove.review?.never_reconciled).toEqual(['src/gone.ts', 'src/old-name.ts']);
  });
});
