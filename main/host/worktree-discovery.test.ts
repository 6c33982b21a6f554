import { UserError } from '../platform/errors.ts';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addWorktree,
  git,
  makeTempDir,
  makeTempRepo,
  type TempRepo,
} from '../testing/temp-repo.ts';
import { discoverRepo } from './worktree-discovery.ts';
import { parseWorktreeList } from '../platform/git/worktree-list.ts';

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

let repo: TempRepo | undefined;
afterEach(async () => {
  await repo?.cleanup();
  repo = undefined;
});

describe('discoverRepo', () => {
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
      new UserError(`path does not exist: ${missing}`, { code: 'not-found' }),
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

  it('refuses a linked worktree whose path git lists inside /proc, or outside any work tree', async () => {
    repo = await makeTempRepo();
    const good = await addWorktree(repo, 'good');
    await addWorktree(repo, 'proc');
    await addWorktree(repo, 'via-link');
    await addWorktree(repo, 'plain');
    // What a tampered administrative directory can make git list (git only checks that the
    // listed `.git` exists, from its own working directory).
    const admin = path.join(repo.root, '.git', 'worktrees');
    await writeFile(path.join(admin, 'proc', 'gitdir'), '/proc/self/cwd/.git\n');
    await symlink('/proc/self', path.join(repo.dir, 'link'));
    await writeFile(path.join(admin, 'via-link', 'gitdir'), `${repo.dir}/link/cwd/.git\n`);
    await mkdir(path.join(repo.dir, 'not-a-worktree'));
    await writeFile(path.join(repo.dir, 'not-a-worktree', '.git'), 'not a gitfile\n');
    await writeFile(path.join(admin, 'plain', 'gitdir'), `${repo.dir}/not-a-worktree/.git\n`);

    const found = await discoverRepo(repo.root);
    const refusals = Object.fromEntries(found.worktrees.map((w) => [w.path, w.refusal]));
    expect(refusals).toEqual({
      [repo.root]: null,
      [good]: null,
      '/proc/self/cwd':
        'the worktree path /proc/self/cwd is inside /proc, a system directory, not a git work ' +
        'tree: Grove will not serve it',
      [`${repo.dir}/link/cwd`]:
        `the worktree path ${repo.dir}/link/cwd is inside /proc through the symbolic link ` +
        `${repo.dir}/link -> /proc/self, a system directory, not a git work tree: Grove will not ` +
        'serve it',
      [path.join(repo.dir, 'not-a-worktree')]:
        `the worktree path ${path.join(repo.dir, 'not-a-worktree')} is not a git work tree of ` +
        'this repository: Grove will not serve it',
    });
  });
});

describe('discoverRepo refuses system directories and what is not a work tree', () => {
  it.skipIf(process.platform === 'win32')(
    'refuses /proc, /sys and /dev and paths under them, naming the directory',
    async () => {
      for (const [input, dir] of [
        ['/proc', '/proc'],
        ['/proc/self/cwd', '/proc'], // resolves to this process's working directory, a repo
        ['/sys', '/sys'],
        ['/dev', '/dev'],
        ['/dev/shm', '/dev'],
      ] as const) {
        await expect(discoverRepo(input), input).rejects.toThrow(
          new UserError(
            `the path ${input} is inside ${dir}, a system directory, not a git work tree: ` +
              'Grove will not serve it',
            { code: 'refused' },
          ),
        );
      }
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'refuses a symlink into /proc, even when the path resolves back out of it',
    async () => {
      const dir = await makeTempDir();
      await symlink('/proc', path.join(dir, 'proc-link'));
      await symlink('/proc/self', path.join(dir, 'self-link'));
      // realpath follows the kernel's magic link to this process's working directory (a checkout).
      await symlink('/proc/self/cwd', path.join(dir, 'cwd-link'));
      await symlink('self-link', path.join(dir, 'sub-link')); // relative
      for (const [input, link, target] of [
        ['proc-link', 'proc-link', '/proc'],
        ['self-link/cwd', 'self-link', '/proc/self'],
        ['cwd-link', 'cwd-link', '/proc/self/cwd'],
        ['nested/../sub-link/cwd', 'self-link', '/proc/self'],
      ]) {
        await mkdir(path.join(dir, 'nested'), { recursive: true });
        const given = path.join(dir, input!);
        await expect(discoverRepo(given), input).rejects.toThrow(
          new UserError(
            `the path ${given} is inside /proc through the symbolic link ` +
              `${path.join(dir, link!)} -> ${target}, a system directory, not a git work tree: ` +
              'Grove will not serve it',
            { code: 'refused' },
          ),
        );
      }
    },
  );

  it('refuses a .git directory and a bare repository, saying which', async () => {
    repo = await makeTempRepo();
    const gitDir = path.join(repo.root, '.git');
    await expect(discoverRepo(gitDir)).rejects.toThrow(
      new UserError(
        `${gitDir} is inside a repository's git directory, not its work tree: open the work tree`,
      ),
    );
    await expect(discoverRepo(path.join(gitDir, 'objects'))).rejects.toThrow(
      "is inside a repository's git directory",
    );
    const bare = path.join(repo.dir, 'bare.git');
    await git(repo.dir, 'clone', '-q', '--bare', repo.root, bare);
    await expect(discoverRepo(bare)).rejects.toThrow(
      new UserError(
        `${bare} is a bare git repository, which has no work tree: open one of its worktrees`,
      ),
    );
  });
});
