// One host per data directory, with the real `grove serve` as child processes: a second host on
// the same data directory is refused and names the first, touching none of its ports; a host
// killed with SIGKILL leaves nothing that blocks the next start, which gets the same ports; a host
// stopped (SIGTERM) while it starts lets go of the lock only once its worktree processes exited.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isPortOpen, randomFirstPort } from '../testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';

const CLI = fileURLToPath(new URL('../../bin/grove.js', import.meta.url));

interface ReadyLine {
  event: 'ready';
  ui: string;
  worktrees: { path: string; sse: string }[];
}

interface Serve {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line, parsed. */
  lines: Record<string, unknown>[];
  stderr(): string;
  exit: Promise<number | null>;
}

const children: ChildProcessWithoutNullStreams[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const firstPort = randomFirstPort();

function serve(dataDir: string, repo: string, env: NodeJS.ProcessEnv = {}): Serve {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--json', '--ui-port', '0', '--data-dir', dataDir, repo],
    { stdio: 'pipe', env: { ...process.env, GROVE_FIRST_PORT: String(firstPort), ...env } },
  );
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line)));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, lines, stderr: () => stderr, exit };
}

async function ready(run: Serve, timeoutMs = 25_000): Promise<ReadyLine> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const line = run.lines.find((candidate) => candidate.event === 'ready');
    if (line) return line as unknown as ReadyLine;
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no ready line; stdout: ${JSON.stringify(run.lines)}; stderr: ${run.stderr()}`);
}

function ports(line: ReadyLine): number[] {
  return line.worktrees.map((worktree) => Number(new URL(worktree.sse).port));
}

async function setUp(worktrees = ['feature-a']): Promise<{ dataDir: string; repo: string }> {
  const repo = await makeTempRepo();
  cleanups.push(repo.cleanup);
  for (const name of worktrees) await addWorktree(repo, name);
  const dataDir = await makeTempDir('grove-one-host-');
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  return { dataDir, repo: repo.root };
}

describe('one grove serve per data directory', () => {
  // Three hosts start one after the other: far longer than a unit test on a loaded machine.
  it(
    'refuses a second host, naming the first; the first keeps its ports across restarts',
    { timeout: 120_000 },
    async () => {
      const { dataDir, repo } = await setUp();
      const first = serve(dataDir, repo);
      const firstReady = await ready(first);
      const firstPorts = ports(firstReady);

      const second = serve(dataDir, repo);
      expect(await second.exit).toBe(1);
      const named = `Grove is already running for ${dataDir} (pid ${first.child.pid}): ${firstReady.ui}`;
      expect(second.stderr()).toBe(`grove: ${named}\n`);
      expect(second.lines).toEqual([
        { event: 'error', message: named, code: 'busy', pid: first.child.pid, ui: firstReady.ui },
      ]);
      // The first host's servers are where they were, and answer.
      for (const port of firstPorts) expect(await isPortOpen(port)).toBe(true);

      first.child.kill('SIGTERM');
      expect(await first.exit).toBe(0);
      for (const port of firstPorts) expect(await isPortOpen(port)).toBe(false);
      const third = serve(dataDir, repo);
      expect(ports(await ready(third))).toEqual(firstPorts);
      third.child.kill('SIGTERM');
      expect(await third.exit).toBe(0);
    },
  );

  it(
    'is not blocked by a host killed with SIGKILL: the next one starts, on the same ports',
    { timeout: 90_000 },
    async () => {
      const { dataDir, repo } = await setUp();
      const killed = serve(dataDir, repo);
      const killedPorts = ports(await ready(killed));
      killed.child.kill('SIGKILL');
      await killed.exit;
      // Its worktree processes see their host gone and stop on their own, maybe not yet.
      const next = serve(dataDir, repo);
      expect(ports(await ready(next))).toEqual(killedPorts);
      expect(next.stderr()).toBe('');
      next.child.kill('SIGTERM');
      expect(await next.exit).toBe(0);
    },
  );
});

/** Pids of the live worktree processes whose environment carries `mark` (Linux: /proc). */
async function worktreeProcesses(mark: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [cmdline, environ] = await Promise.all([
        readFile(`/proc/${entry}/cmdline`, 'utf8'),
        readFile(`/proc/${entry}/environ`, 'utf8'),
      ]);
      if (cmdline.includes('worktree-process') && environ.split('\0').includes(mark)) {
        found.push(Number(entry));
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

describe('a host stopped while it starts', () => {
  it.skipIf(process.platform !== 'linux')(
    // (Linux only: the test finds the worktree processes in /proc.)
    'releases the lock only after every worktree process exited, and starts none after the signal',
    { timeout: 120_000 },
    async () => {
      // Worktrees enough that their start is still going on (a few at a time) at the signal.
      const { dataDir, repo } = await setUp(['a', 'b', 'c', 'd', 'e']);
      const mark = `GROVE_TEST_MARK=${randomUUID()}`;
      const run = serve(dataDir, repo, { GROVE_TEST_MARK: mark.split('=')[1] });
      // The signal as soon as the first worktree process exists: the start is under way.
      for (let i = 0; (await worktreeProcesses(mark)).length === 0; i++) {
        if (i > 1_000 || run.child.exitCode !== null)
          throw new Error(`no worktree process: ${run.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Its exit itself ('exit', not 'close': a leftover worktree process would hold its stdio).
      const exited = new Promise((resolve) => run.child.once('exit', resolve));
      run.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // The lock went with the host's exit at the latest: nothing of it may be left by then.
      expect(await worktreeProcesses(mark)).toEqual([]);
      expect(run.lines).toContainEqual({ event: 'stopped' });
      expect(run.lines.some((line) => line.event === 'ready')).toBe(false);
      // And the next host starts at once.
      const next = serve(dataDir, repo);
      await ready(next);
      next.child.kill('SIGTERM');
      expect(await next.exit).toBe(0);
    },
  );
});
