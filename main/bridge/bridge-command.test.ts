// `grove bridge --data-dir DIR` where no host ever ran (a mistyped directory, say `grove` for
// `Grove`): the bridge serves the worktree itself, and says so in one line on stderr, so its user
// knows why the window does not list the client. Run as a client runs it: the real command.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AppDatabase } from '../host/app-database.ts';
import { makeTempDir, makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';

const GROVE = fileURLToPath(new URL('../../bin/grove.js', import.meta.url));

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bridge-command-test', version: '1.0.0' },
  },
};

/** Starts the bridge, waits for its answer to `initialize`, closes stdin; its stderr and exit. */
function bridgeOnce(...args: string[]): Promise<{
  answer: { result?: { serverInfo?: { name: string } } };
  stderr: string;
  code: number | null;
}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [GROVE, 'bridge', ...args], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    let answer: { result?: { serverInfo?: { name: string } } } | undefined;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (answer === undefined && stdout.includes('\n')) {
        answer = JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as typeof answer;
        child.stdin.end();
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (answer === undefined) reject(new Error(`the bridge ended unanswered: ${stderr}`));
      else resolve({ answer, stderr, code });
    });
    child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
  });
}

const repos: TempRepo[] = [];
afterAll(async () => {
  await Promise.all(repos.map((repo) => repo.cleanup()));
});

describe('grove bridge --data-dir', () => {
  it('says in one line that no host uses a data directory without an app database, and serves', async () => {
    const repo = await makeTempRepo();
    repos.push(repo);
    const dataDir = await makeTempDir('grove-bridge-wrong-data-');
    const { answer, stderr, code } = await bridgeOnce('--data-dir', dataDir, repo.root);
    expect(answer.result?.serverInfo?.name).toMatch(/grove/i);
    expect(code).toBe(0);
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^grove: warn: bridge: no Grove host uses /);
    expect(lines[0]).toContain(`${dataDir} (no app database there)`);
    expect(lines[0]).toContain('no Grove window lists this client');
  });

  it('says nothing of it with --local, or when a host has used the directory', async () => {
    const repo = await makeTempRepo();
    repos.push(repo);
    const empty = await makeTempDir('grove-bridge-wrong-data-');
    const hosted = await makeTempDir('grove-bridge-data-');
    (await AppDatabase.open(hosted)).close();
    for (const args of [
      ['--local', '--data-dir', empty],
      ['--data-dir', hosted],
    ]) {
      const { answer, stderr, code } = await bridgeOnce(...args, repo.root);
      expect(answer.result?.serverInfo?.name).toMatch(/grove/i);
      expect({ stderr, code }).toEqual({ stderr: '', code: 0 });
    }
  });
});
