import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addWorktree,
  git,
  makeTempDir,
  makeTempRepo,
  type TempRepo,
} from '../testing/temp-repo.ts';
import { discoverRepo, parseWorktreeList, RepoPathError } from './worktree-discovery.ts';

describe('parseWorktreeList', () => {
  it('reads main, linked, detached and missing (prunable) worktrees, and skips bare entries', () => {
    const output = [
      'worktree /r/main\0HEAD 1111111111111111111111111111111111111111\0branch refs/heads/main\0',
      'worktree /r/feature x\0HEAD 2222222222222222222222222222222222222222\0branch refs/heads/feat/x\0locked\0',
      'worktree /r/detached\0HEAD 3333333333333333333333333333333333333333\0detached\0',
      'worktree /r/gone\0HEAD 4444444444444444444444444444444444444444\0branch refs/heads/gone\0prunable gitdir file points to non-existent location\0',
      '',
    ].join('\0');
    expect(parseWorktreeList(output)).toEqual([
      { path: '/r/main', branch: 'main', head: '1'.repeat(40), isMain: true, missing: false },
      {
        path: '/r/feature x',
        branch: 'feat/x',
        head: '2'.repeat(40),
        isMain: false,
        missing: false,
      },
      { path: '/r/detached', branch: null, head: '3'.repeat(40), isMain: false, missing: false },
      { path: '/r/gone', branch: 'gone', head: '4'.repeat(40), isMain: false, missing: true },
    ]);
  });

  it('does not call a linked worktree main when the main entry is bare', () => {
    const output =
      'worktree /r/bare.git\0bare\0\0worktree /r/wt\0HEAD ' +
      'a'.repeat(40) +
      '\0branch refs/heads/wt\0\0';
    expect(parseWorktreeList(output)).toEqual([
      { path: '/r/wt', branch: 'wt', head: 'a'.repeat(40), isMain: false, missing: false },
    ]);
  });
});

const byPath = (a: { path: string }, b: { path: string }): number => a.path.localeCompare(b.path);

describe('discoverRepo', () => {
  let repo: TempRepo | undefined;
  afterEach(async () => {
    await repo?.cleanup();
    repo = undefined;
  });

  it('finds the main worktree and two linked ones, from any of them or a subdirectory', async () => {
    repo = await makeTempRepo({ 'src/a.ts': 'export {};\n' });
    const featureA = await addWorktree(repo, 'feature-a');
    const featureB = await addWorktree(repo, 'feature b', 'feature/b');
    const expected = {
      path: repo.root,
      worktrees: [
        { path: repo.root, branch: 'main', isMain: true },
        { path: featureA, branch: 'feature-a', isMain: false },
        { path: featureB, branch: 'feature/b', isMain: false },
      ],
    };
    for (const start of [
      repo.root,
      featureA,
      path.join(repo.root, 'src'),
      path.join(featureB, 'README.md'),
    ]) {
      const found = await discoverRepo(start);
      expect(found.path).toBe(expected.path);
      // Main first; linked worktrees in git's own order (by administrative directory name).
      const summary = found.worktrees.map(({ path, branch, isMain }) => ({ path, branch, isMain }));
      expect(summary[0]).toEqual(expected.worktrees[0]);
      expect(summary.slice(1).sort(byPath)).toEqual(expected.worktrees.slice(1).sort(byPath));
      expect(found.worktrees.every((worktree) => /^[0-9a-f]{40}$/.test(worktree.head ?? ''))).toBe(
        true,
      );
    }
  });

  it('reports a detached worktree with a null branch', async () => {
    repo = await makeTempRepo();
    const detached = path.join(repo.dir, 'detached');
    await git(repo.root, 'worktree', 'add', '-q', '--detach', detached);
    const found = await discoverRepo(repo.root);
    expect(found.worktrees[1]).toMatchObject({ path: detached, branch: null, isMain: false });
  });

  it('refuses a path that does not exist, naming it', async () => {
    const missing = path.join(await makeTempDir(), 'nope');
    await expect(discoverRepo(missing)).rejects.toThrow(
      new RepoPathError(`path does not exist: ${missing}`),
    );
  });

  it('refuses a directory that is not a git repository', async () => {
    const plain = await makeTempDir();
    await mkdir(path.join(plain, 'sub'));
    await writeFile(path.join(plain, 'sub', 'f.txt'), 'x');
    await expect(discoverRepo(path.join(plain, 'sub'))).rejects.toThrow(
      `not a git repository: ${path.join(plain, 'sub')}`,
    );
  });
});
