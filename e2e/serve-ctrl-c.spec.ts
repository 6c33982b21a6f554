// Ctrl-C on `npm run serve` as a terminal sends it: SIGINT to the whole foreground process group
// (npm, its `sh -c`, the host and every worktree process). Everything of that group must be gone
// within a few seconds, leaving no worktree process (nor a zombie) behind.
import { execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import {
  addWorktree,
  makeTempDir,
  makeTempRepo,
  type TempRepo,
} from '../main/testing/temp-repo.ts';
import { PROJECT_ROOT } from './support/grove-serve.ts';

/** Pids (and states) of every process in a process group, from ps. */
async function processGroup(pgid: number): Promise<{ pid: number; stat: string; cmd: string }[]> {
  const { stdout } = await promisify(execFile)('ps', ['-eo', 'pid=,pgid=,stat=,args=']);
  return stdout
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/))
    .filter((match): match is RegExpMatchArray => match !== null && Number(match[2]) === pgid)
    .map((match) => ({ pid: Number(match[1]), stat: match[3]!, cmd: match[4]! }));
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

describe('npm run serve and Ctrl-C', () => {
  test(
    'SIGINT to the process group stops the host and every worktree process within seconds',
    {
      timeout: 120_000,
    },
    async () => {
      const repo: TempRepo = await makeTempRepo({ 'notes.txt': 'hello\n' });
      cleanups.push(repo.cleanup);
      await addWorktree(repo, 'feature-a');
      const dataDir = await makeTempDir('grove-ctrl-c-');
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      // detached: a process group of its own, as a shell gives a foreground job.
      const npm = spawn(
        'npm',
        ['run', 'serve', '--', repo.root, '--data-dir', dataDir, '--ui-port', '0'],
        { cwd: PROJECT_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const pgid = npm.pid!;
      cleanups.push(async () => {
        try {
          process.kill(-pgid, 'SIGKILL');
        } catch {
          // already gone
        }
      });
      const lines: string[] = [];
      npm.stderr.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
      await new Promise<void>((resolve, reject) => {
        const reader = createInterface({ input: npm.stdout });
        reader.on('line', (line) => {
          lines.push(line);
          if (line.startsWith('Press Ctrl+C')) resolve();
        });
        npm.once('exit', (code) =>
          reject(new Error(`serve exited early (${code}): ${lines.join('\n')}`)),
        );
      });
      expect(lines.join('\n')).toMatch(/Connect tab/);
      const running = await processGroup(pgid);
      const servers = running.filter((entry) => entry.cmd.includes('worktree-process'));
      // Two worktrees, two servers (a third showed once in CI: print the group if so).
      if (servers.length !== 2) {
        console.log(`processes of the group:\n${running.map((entry) => entry.cmd).join('\n')}`);
      }
      expect(servers.length).toBeGreaterThanOrEqual(2);

      const stoppedAt = Date.now();
      process.kill(-pgid, 'SIGINT');
      let left = running;
      while (Date.now() - stoppedAt < 10_000) {
        left = await processGroup(pgid);
        if (left.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      console.log(`Ctrl-C: every process of the group gone after ${Date.now() - stoppedAt} ms`);
      expect(left).toEqual([]);
    },
  );
});
