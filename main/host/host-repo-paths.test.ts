// The host refuses repository paths it must never serve, through the same HostApi error every UI
// shows (UserError): /proc, /sys, /dev (as written or through a symlink), a plain
// directory, a .git directory. A worktree that git lists inside /proc is never started: it shows
// as `error` with the reason. Real repos, real worktree processes.
import { UserError } from '../platform/errors.ts';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { randomFirstPort } from '../testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { runHostCommand } from './host-commands.ts';
import { Host } from './host.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openHost(dataDir?: string): Promise<Host> {
  const host = await Host.open({
    dataDir: dataDir ?? (await makeTempDir()),
    firstPort: randomFirstPort(),
    worktreePollMs: 0,
  });
  cleanups.push(() => host.close());
  return host;
}

async function refusal(host: Host, repoPath: string): Promise<unknown> {
  return runHostCommand(host, 'addRepo', { path: repoPath }).then(
    () => new Error(`${repoPath} was accepted`),
    (error: unknown) => error,
  );
}

describe('adding a repository', () => {
  it.skipIf(process.platform !== 'linux')(
    'refuses /proc, /proc/self/cwd and a symlink to /proc, and remembers none of them',
    async () => {
      const dataDir = await makeTempDir();
      const host = await openHost(dataDir);
      const dir = await makeTempDir();
      await symlink('/proc', path.join(dir, 'proc-link'));
      await symlink('/proc/self', path.join(dir, 'self-link'));
      const cases: [string, string][] = [
        ['/proc', 'the path /proc is inside /proc, a system directory, not a git work tree'],
        ['/proc/self/cwd', 'the path /proc/self/cwd is inside /proc, a system directory'],
        [
          path.join(dir, 'proc-link'),
          `the path ${path.join(dir, 'proc-link')} is inside /proc through the symbolic link ${path.join(dir, 'proc-link')} -> /proc, a system directory`,
        ],
        [
          // Resolves to this test's working directory (a git checkout) by way of /proc.
          path.join(dir, 'self-link', 'cwd'),
          `the path ${path.join(dir, 'self-link', 'cwd')} is inside /proc through the symbolic link ${path.join(dir, 'self-link')} -> /proc/self, a system directory`,
        ],
        ['/sys/kernel', 'the path /sys/kernel is inside /sys, a system directory'],
      ];
      for (const [input, message] of cases) {
        const error = await refusal(host, input);
        expect(error, input).toBeInstanceOf(UserError);
        expect((error as Error).message, input).toContain(message);
      }
      expect(host.snapshot().repos).toEqual([]);
      await host.close();
      const reopened = await openHost(dataDir);
      expect(await reopened.restoreRepos()).toEqual([]); // nothing was recorded
    },
  );

  it('refuses a plain directory and a .git directory, naming the problem', async () => {
    const host = await openHost();
    const plain = await makeTempDir();
    await mkdir(path.join(plain, 'src'));
    const plainError = await refusal(host, path.join(plain, 'src'));
    expect(plainError).toBeInstanceOf(UserError);
    expect((plainError as Error).message).toBe(`not a git repository: ${path.join(plain, 'src')}`);

    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    const gitDir = path.join(repo.root, '.git');
    const gitDirError = await refusal(host, gitDir);
    expect(gitDirError).toBeInstanceOf(UserError);
    expect((gitDirError as Error).message).toBe(
      `${gitDir} is inside a repository's git directory, not its work tree: open the work tree`,
    );
    expect(host.snapshot().repos).toEqual([]);
  });

  it.skipIf(process.platform !== 'linux')(
    'never serves a worktree git lists inside /proc: it shows as error with the reason',
    async () => {
      const repo = await makeTempRepo();
      cleanups.push(repo.cleanup);
      await addWorktree(repo, 'feature');
      await addWorktree(repo, 'evil');
      await writeFile(
        path.join(repo.root, '.git', 'worktrees', 'evil', 'gitdir'),
        '/proc/self/cwd/.git\n',
      );
      const host = await openHost();
      const opened = await host.addRepo(repo.root);
      await host.startAll();
      const [main, ...linked] = host.snapshot().repos[0]!.worktrees;
      const evil = linked.find((worktree) => worktree.path === '/proc/self/cwd')!;
      const feature = linked.find((worktree) => worktree.path !== '/proc/self/cwd')!;
      expect(opened.worktrees).toHaveLength(3);
      expect(main!.status.state).toBe('running');
      expect(feature.status.state).toBe('running');
      const reason =
        'the worktree path /proc/self/cwd is inside /proc, a system directory, not a git work ' +
        'tree: Grove will not serve it';
      expect(evil.status).toEqual({ state: 'error', message: reason });
      expect(host.processId(evil.id)).toBeUndefined();
      await expect(runHostCommand(host, 'startServer', { worktreeId: evil.id })).rejects.toThrow(
        new UserError(reason, { code: 'unavailable' }),
      );
      expect(host.processId(evil.id)).toBeUndefined();
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'stops a served worktree whose directory becomes a symlink into /proc, and says why',
    async () => {
      const repo = await makeTempRepo();
      cleanups.push(repo.cleanup);
      const feature = await addWorktree(repo, 'feature');
      const host = await openHost();
      await host.addRepo(repo.root);
      await host.startAll();
      const served = host.snapshot().repos[0]!.worktrees.find((w) => w.path === feature)!;
      expect(served.status.state).toBe('running');

      // Git still lists it (it finds `.git` through the link, from its own working directory).
      await rm(feature, { recursive: true, force: true });
      await symlink('/proc/self/cwd', feature);
      await host.refreshAll();
      const paths = host.snapshot().repos[0]!.worktrees.map((w) => w.path);
      expect(paths).toEqual([repo.root, feature]); // nothing else was opened in its place
      const after = host.snapshot().repos[0]!.worktrees.find((w) => w.path === feature)!;
      expect(after.status).toEqual({
        state: 'error',
        message:
          `the worktree path ${feature} is inside /proc through the symbolic link ${feature} -> ` +
          '/proc/self/cwd, a system directory, not a git work tree: Grove will not serve it',
      });
      expect(host.processId(after.id)).toBeUndefined();
    },
  );
});
