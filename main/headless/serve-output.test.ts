// `grove serve --json` whose reader goes away (issue 33): once the program reading its stdout had
// exited, the next event line (a tool call's activity) ended the whole host on an uncaught EPIPE,
// and every worktree server with it. Now the output stops and the host serves on, saying so in
// grove.log; SIGTERM still stops it cleanly.
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connectClient } from '../testing/mcp-clients.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const CLI = fileURLToPath(new URL('../../bin/grove.js', import.meta.url));

const cleanups = cleanupsAfterEach();

interface ReadyLine {
  event: 'ready';
  worktrees: { mcp: string; token: string }[];
}

describe('grove serve --json after its reader is gone', () => {
  it('serves on without writing, and stops cleanly on SIGTERM', { timeout: 90_000 }, async () => {
    const repo = await makeTempRepo({ 'notes.txt': 'hello\n' });
    cleanups.push(repo.cleanup);
    const dataDir = await makeTempDir('grove-serve-output-');
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const child = spawn(
      process.execPath,
      [CLI, 'serve', '--json', '--no-ui', '--data-dir', dataDir, repo.root],
      { stdio: 'pipe', env: { ...process.env, GROVE_FIRST_PORT: String(randomFirstPort()) } },
    );
    cleanups.push(async () => child.kill('SIGKILL'));
    const exit = new Promise<number | null>((resolve) =>
      child.on('close', (code) => resolve(code)),
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ready = await new Promise<ReadyLine>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        const parsed = JSON.parse(line) as { event: string };
        if (parsed.event === 'ready') resolve(parsed as ReadyLine);
      });
      child.on('close', () => reject(new Error(`grove serve exited early: ${stderr}`)));
    });
    // The reader goes away: the pipe's read end is closed.
    child.stdout.destroy();

    const [worktree] = ready.worktrees;
    const port = Number(new URL(worktree!.mcp).port);
    const first = await connectClient(port, 'legacy-http', worktree!.token);
    cleanups.push(() => first.client.close());
    // Each call is an activity event, written to the closed stdout.
    await first.client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    const log = path.join(dataDir, 'grove.log');
    await waitFor(
      async () =>
        child.exitCode !== null ||
        (await readFile(log, 'utf8').catch(() => '')).includes('stdout closed'),
      'grove serve to meet the closed stdout',
      30_000,
    );
    expect(child.exitCode).toBe(null);
    expect(await readFile(log, 'utf8')).toMatch(/stdout closed \(.*EPIPE.*\); serving on/);
    const again = await first.client.callTool({
      name: 'read_file',
      arguments: { path: 'notes.txt' },
    });
    expect(again.isError).toBeFalsy();
    await first.client.close();

    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});
