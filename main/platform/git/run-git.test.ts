import { execFileSync } from 'node:child_process';
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { getPriority } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../testing/net.ts';
import { makeTempRepo, type TempRepo } from '../../testing/temp-repo.ts';
import { pauseAtSlices } from '../time-slices.ts';
import {
  BACKGROUND_NICENESS,
  GitCommandError,
  gitStdout,
  runGit,
  splitNul,
  type RunGitOptions,
} from './run-git.ts';

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

  // Linux: a process's nice value is field 19 of /proc/<pid>/stat.
  describe.runIf(process.platform === 'linux')('CPU priority', () => {
    /** Pids of the processes whose command line names `marker`. */
    async function processesNaming(marker: string): Promise<number[]> {
      const pids: number[] = [];
      for (const entry of await readdir('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
        if (cmdline.includes(marker)) pids.push(Number(entry));
      }
      return pids;
    }

    /** Nice value, parent pid and name of a process (/proc/<pid>/stat). */
    async function statOf(pid: number): Promise<{ nice: number; ppid: number; name: string }> {
      const text = await readFile(`/proc/${pid}/stat`, 'utf8');
      const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      // fields[0] is field 3 (state): ppid is field 4, nice field 19.
      return { nice: Number(fields[16]), ppid: Number(fields[1]), name };
    }

    /**
     * Runs a git alias that blocks reading a FIFO (`cat`, started by git through sh), and reports
     * the nice values of git and of what it started while they run; then lets git finish.
     */
    async function nicenessWhileRunning(
      options: Omit<RunGitOptions, 'cwd' | 'ceiling'>,
      beforeStart?: (fifo: string) => Promise<void>,
    ): Promise<{ git: number; started: number[] }> {
      repo = await makeTempRepo({ 'a.txt': 'a\n' });
      const fifo = path.join(repo.dir, 'hold-git-open');
      execFileSync('mkfifo', [fifo]);
      const run = runGit(['-c', `alias.grove-wait=!cat ${fifo}`, 'grove-wait'], {
        cwd: repo.root,
        ceiling: repo.dir,
        ...options,
      });
      await beforeStart?.(fifo);
      await waitFor(async () => (await processesNaming(fifo)).length > 0, 'git running its alias');
      const started = await processesNaming(fifo);
      let git = await statOf(started[0]!);
      while (git.name !== 'git') git = await statOf(git.ppid);
      const niceness = {
        git: git.nice,
        started: await Promise.all(started.map(async (pid) => (await statOf(pid)).nice)),
      };
      // Opening the FIFO for writing and closing it gives `cat` its end of file: git exits 0.
      await (await open(fifo, 'w')).close();
      expect((await run).code).toBe(0);
      return niceness;
    }

    it("runs the window's git (background work) at a lower priority, a client's at ours", async () => {
      const ours = getPriority();
      const client = await nicenessWhileRunning({ signal: new AbortController().signal });
      expect(client).toEqual({ git: ours, started: client.started.map(() => ours) });
      await repo?.cleanup();
      const background = new AbortController().signal;
      pauseAtSlices(background, () => Promise.resolve());
      const window = await nicenessWhileRunning({ signal: background });
      expect(ours).toBeLessThan(BACKGROUND_NICENESS);
      expect(window.git).toBe(BACKGROUND_NICENESS);
      expect(window.started.length).toBeGreaterThan(0);
      for (const nice of window.started) expect(nice).toBe(BACKGROUND_NICENESS);
    });

    it("lets the window's git wait for clients' calls before it starts", async () => {
      const background = new AbortController().signal;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let pauses = 0;
      pauseAtSlices(background, () => {
        pauses += 1;
        return released;
      });
      await nicenessWhileRunning({ signal: background }, async (fifo) => {
        await waitFor(() => pauses === 1, 'the pause asked for');
        // While the pause lasts, git has not been started.
        expect(await processesNaming(fifo)).toEqual([]);
        release();
      });
      expect(pauses).toBe(1);
    });
  });
});
