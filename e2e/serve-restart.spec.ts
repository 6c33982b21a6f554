// Restarting `grove serve` the way people do (issue 24): a repository with two linked worktrees and
// a justfile, `just` on PATH as a wrapper script that runs the real binary (as the rust-just npm
// package installs it), the host in a process group of its own (as a shell runs `npm run serve`).
// Each round: a Streamable HTTP client lists tools and leaves without ending its session, a
// `grove bridge` stdio client lists tools and reads a file, then SIGTERM goes to the host's process
// group and — as soon as the signal is sent, without waiting for the old host to finish stopping
// (npm exits at once) — a compose.yaml appears, a stand-in `docker` goes first on PATH, and the host
// starts again with --just-tasks. Every restart must be ready within 10 s, on the same ports.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, test } from 'vitest';
import { JUST_DIR } from '../scripts/install-just.mjs';
import { putJustOnPath } from '../main/testing/just.ts';
import { connectClient } from '../main/testing/mcp-clients.ts';
import { randomFirstPort } from '../main/testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo } from '../main/testing/temp-repo.ts';
import { PROJECT_ROOT } from './support/grove-serve.ts';

const ROUNDS = 10;
const READY_WITHIN_MS = 10_000;
const CLI = path.join('bin', 'grove.js');
const GROVE = path.join(PROJECT_ROOT, 'bin', 'grove.js');

interface ReadyLine {
  ui: string;
  worktrees: { path: string; branch: string | null; mcp: string; token: string }[];
}

interface RunningHost {
  child: ChildProcess;
  /** The process group: the host and its worktree processes. */
  pgid: number;
  ready: Promise<ReadyLine>;
  /** Lines before the ready line (what a slow start waited for) and stderr. */
  said(): string;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

function startHost(args: string[], env: NodeJS.ProcessEnv, readyWithinMs: number): RunningHost {
  const child = spawn(process.execPath, [CLI, 'serve', '--json', ...args], {
    cwd: PROJECT_ROOT,
    detached: true, // a process group of its own, as a shell gives a foreground job
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const pgid = child.pid!;
  cleanups.push(async () => {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  const said: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => said.push(chunk.toString()));
  const ready = new Promise<ReadyLine>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not ready within ${readyWithinMs} ms:\n${said.join('\n')}`)),
      readyWithinMs,
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const event = JSON.parse(line) as { event: string };
      if (event.event !== 'ready') return void said.push(line);
      clearTimeout(timer);
      resolve(event as unknown as ReadyLine);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`grove serve exited (${code}) before it was ready:\n${said.join('\n')}`));
    });
  });
  ready.catch(() => undefined);
  return { child, pgid, ready, said: () => said.join('\n') };
}

function ports(ready: ReadyLine): number[] {
  return ready.worktrees.map((worktree) => Number(new URL(worktree.mcp).port));
}

describe('grove serve restarted as people restart it', () => {
  test(
    `is ready within ${READY_WITHIN_MS / 1000} s, on the same ports, ${ROUNDS} times in a row`,
    {
      timeout: 300_000,
    },
    async () => {
      putJustOnPath();
      const repo = await makeTempRepo({
        justfile: 'hello:\n    echo hi\n',
        'notes.txt': 'read me\n',
      });
      cleanups.push(repo.cleanup);
      await addWorktree(repo, 'feature-a');
      await addWorktree(repo, 'feature-b');
      const dataDir = await makeTempDir('grove-restart-');
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));

      // `just` as an npm package installs it: a Node script in another folder running the binary.
      const justWrapper = path.join(repo.dir, 'just-wrapper');
      await mkdir(justWrapper);
      await writeFile(
        path.join(justWrapper, 'just'),
        `#!${process.execPath}\n` +
          `const r = require('node:child_process').spawnSync(${JSON.stringify(path.join(JUST_DIR, 'just'))}, ` +
          `process.argv.slice(2), { stdio: 'inherit' });\nprocess.exit(r.status ?? 1);\n`,
      );
      await chmod(path.join(justWrapper, 'just'), 0o755);
      // A stand-in `docker` that prints one `compose ps` line.
      const dockerDir = path.join(repo.dir, 'docker-bin');
      await mkdir(dockerDir);
      await writeFile(
        path.join(dockerDir, 'docker'),
        `#!/bin/sh\necho '{"Name":"repo-db-1","Service":"db","State":"running","Status":"Up 1 minute"}'\n`,
      );
      await chmod(path.join(dockerDir, 'docker'), 0o755);

      const firstPort = randomFirstPort();
      const uiPort = firstPort + 49; // a fixed UI port, as the default is: the old host holds it
      const env = (withDocker: boolean): NodeJS.ProcessEnv => ({
        ...process.env,
        GROVE_FIRST_PORT: String(firstPort),
        PATH: [...(withDocker ? [dockerDir] : []), justWrapper, process.env.PATH].join(
          path.delimiter,
        ),
      });
      const args = ['--data-dir', dataDir, '--ui-port', String(uiPort)];

      // The first start is a cold one (compile caches empty): it has longer.
      let host = startHost([...args, repo.root], env(false), 30_000);
      let ready = await host.ready;
      const stablePorts = ports(ready);
      const timings: number[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const main = ready.worktrees.find((worktree) => worktree.branch === 'main')!;
        // A direct client that lists tools and leaves without ending its session.
        const direct = await connectClient(
          Number(new URL(main.mcp).port),
          'legacy-http',
          main.token,
        );
        expect((await direct.client.listTools()).tools.length).toBeGreaterThan(0);
        // A bridge client in host mode: lists tools, reads a file, exits.
        const bridge = new Client({ name: 'restart-bridge', version: '1.0.0' });
        await bridge.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [GROVE, 'bridge', '--data-dir', dataDir, repo.root],
            stderr: 'ignore',
          }),
        );
        expect((await bridge.listTools()).tools.length).toBeGreaterThan(0);
        const read = await bridge.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
        expect(JSON.stringify(read.structuredContent)).toContain('read me');
        await bridge.close();

        process.kill(-host.pgid, 'SIGTERM');
        const restartedAt = Date.now();
        await writeFile(path.join(repo.root, 'compose.yaml'), 'services:\n  db:\n    image: x\n');
        host = startHost(['--just-tasks', ...args, repo.root], env(true), READY_WITHIN_MS);
        ready = await host.ready;
        timings.push(Date.now() - restartedAt);
        expect(ports(ready), host.said()).toEqual(stablePorts);
        expect(ready.ui).toContain(`:${uiPort}/`);
        if (host.said()) console.log(`round ${round}: before ready:\n${host.said()}`);
      }
      console.log(`restart to ready, ms: ${timings.join(', ')}`);

      process.kill(-host.pgid, 'SIGTERM');
      await new Promise((resolve) => host.child.once('exit', resolve));
    },
  );
});
