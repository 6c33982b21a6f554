import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempRepo, type TempRepo } from '../../testing/temp-repo.ts';
import { GitCommandError, gitStdout, runGit, splitNul } from './run-git.ts';

let repo: TempRepo | undefined;
afterEach(async () => {
  await repo?.cleanup();
  repo = undefined;
});

describe('the git runner', () => {
  it('ignores the GIT_* variables of whoever started Grove', async () => {
    repo = await makeTempRepo({ 'a.txt': 'a\n' });
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = path.join(repo.dir, 'somewhere-else');
    try {
      const top = await gitStdout(['rev-parse', '--show-toplevel'], {
        cwd: repo.root,
        ceiling: repo.dir,
      });
      expect(top.trim()).toBe(repo.root);
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    }
  });

  it('never finds a repository at or above the ceiling; without one it looks upward', async () => {
    repo = await makeTempRepo({ 'a.txt': 'a\n' });
    const sub = path.join(repo.root, 'sub');
    await mkdir(sub);
    const bounded = await runGit(['rev-parse', '--show-toplevel'], {
      cwd: sub,
      ceiling: repo.root,
    });
    expect(bounded.code).not.toBe(0);
    const open = await gitStdout(['rev-parse', '--show-toplevel'], {
      cwd: sub,
      ceiling: undefined,
    });
    expect(open.trim()).toBe(repo.root);
  });

  it('rejects a failing command with an error naming it and git’s own reason', async () => {
    repo = await makeTempRepo({ 'a.txt': 'a\n' });
    const failure = gitStdout(['rev-parse', '--verify', 'no-such-branch'], {
      cwd: repo.root,
      ceiling: repo.dir,
    });
    await expect(failure).rejects.toBeInstanceOf(GitCommandError);
    await expect(failure).rejects.toThrow(/^git rev-parse exited 128: fatal: \S/);
  });

  it('stops git at the output cap and when the caller aborts, reporting code null', async () => {
    repo = await makeTempRepo({ 'a.txt': 'a\n'.repeat(10_000) });
    const capped = await runGit(['show', 'HEAD:a.txt'], {
      cwd: repo.root,
      ceiling: repo.dir,
      maxOutputBytes: 100,
    });
    expect(capped.code).toBeNull();
    const aborted = await runGit(['show', 'HEAD:a.txt'], {
      cwd: repo.root,
      ceiling: repo.dir,
      signal: AbortSignal.abort(),
    });
    expect(aborted.code).toBeNull();
  });

  it('keeps paths as bytes, split on NUL', async () => {
    const records = splitNul(Buffer.from('a\0b\xffc\0', 'latin1'));
    expect(records.map((record) => record.toString('latin1'))).toEqual(['a', 'b\xffc']);
  });
});
