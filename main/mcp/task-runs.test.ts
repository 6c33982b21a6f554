// Just task runs on a real listener, with the real tools and the real `just` (main/testing/just.ts):
// they have their own bound, apart from the call bounds, so a read is never queued behind them
// (48 runs asked for across three sessions: the first MAX_TASKS_RUNNING run, the rest are refused
// at once, and a read_file answers while they run); and a run ends with its client, on every
// legacy leg (modern requests: main/mcp/client-gone.test.ts, the same signal).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { fileTools } from '../tools/index.ts';
import { createJustTasks } from '../tools/just-tasks.ts';
import { putJustOnPath } from '../testing/just.ts';
import {
  connectClient,
  startTestListener,
  waitUntil,
  type Leg,
  type TestListener,
} from '../testing/mcp-clients.ts';
import { makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';
import { MAX_TASKS_RUNNING } from './server-factory.ts';

putJustOnPath();

const JUSTFILE = `
# Sleeps, writing its pid to pids/<name>
nap name:
    mkdir -p pids; sh -c 'echo $$ > pids/{{name}}; exec sleep 60'
`;

let repo: TempRepo;
beforeAll(async () => {
  repo = await makeTempRepo({ justfile: JUSTFILE, 'notes.txt': 'read me\n' });
});
afterAll(async () => {
  await repo.cleanup();
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(): Promise<{
  server: TestListener;
  tasks: ReturnType<typeof createJustTasks>;
}> {
  const tasks = createJustTasks();
  const server = await startTestListener({
    root: repo.root,
    tools: [...fileTools, ...tasks.tools],
  });
  cleanups.push(() => server.close());
  return { server, tasks };
}

async function connect(server: TestListener, leg: Leg) {
  const { client } = await connectClient(server.port, leg);
  cleanups.push(() => client.close().catch(() => undefined));
  return client;
}

function pidOf(name: string): number {
  try {
    return Number(readFileSync(path.join(repo.root, 'pids', name), 'utf8').trim());
  } catch {
    return 0;
  }
}

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

describe('just task runs', () => {
  it('have their own bound: past it they are refused at once, and a read_file is never queued behind them', async () => {
    const { server, tasks } = await listen();
    const sessions = [
      await connect(server, 'sse'),
      await connect(server, 'legacy-http'),
      await connect(server, 'legacy-http'),
    ];
    const settled: CallToolResult[] = [];
    const calls = sessions.flatMap((client, s) =>
      Array.from({ length: 16 }, (_, i) =>
        client
          .callTool(
            { name: 'run_just_task', arguments: { task: 'nap', args: [`s${s}-${i}`] } },
            { timeout: 120_000 },
          )
          .then(
            (result) => {
              settled.push(result as CallToolResult);
            },
            () => undefined, // the runs still going when their clients leave
          ),
      ),
    );
    const refusedCount = 48 - MAX_TASKS_RUNNING;
    await waitUntil(
      () => settled.length === refusedCount && tasks.running().length === MAX_TASKS_RUNNING,
      60_000,
      'the bound to fill and the rest to be refused',
    );
    for (const refused of settled) {
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toBe(
        `too many tasks running at once (${MAX_TASKS_RUNNING}) on this worktree server; wait ` +
          'for one to finish, or stop one (Grove window: Server tab), then try again',
      );
    }
    // A read on every session answers while the tasks run.
    for (const client of sessions) {
      const read = (await client.callTool({
        name: 'read_file',
        arguments: { path: 'notes.txt' },
      })) as CallToolResult;
      expect(read.isError ?? false).toBe(false);
      expect(textOf(read)).toContain('read me');
    }
    expect(settled).toHaveLength(refusedCount);
    expect(tasks.running()).toHaveLength(MAX_TASKS_RUNNING);
    // The clients leave: every run ends with them.
    const running = tasks.running().map((run) => run.args[0]!);
    await waitUntil(() => running.every((name) => pidOf(name) > 0), 30_000, 'every nap to start');
    const pids = running.map(pidOf);
    expect(pids.every(alive)).toBe(true);
    for (const client of sessions) await client.close();
    await waitUntil(() => !pids.some(alive), 15_000, 'every nap to end with its client');
    await waitUntil(() => tasks.running().length === 0, 15_000, 'no run left');
    await Promise.all(calls);
  });

  it.each<Leg>(['sse', 'legacy-http', 'modern-http'])(
    '%s: a run ends when its client closes its transport',
    async (leg) => {
      const { server, tasks } = await listen();
      const client = await connect(server, leg);
      const name = `gone-${leg}`;
      void client
        .callTool({ name: 'run_just_task', arguments: { task: 'nap', args: [name] } })
        .catch(() => undefined);
      await waitUntil(() => alive(pidOf(name)), 30_000, 'the nap to start');
      const pid = pidOf(name);
      await client.close();
      await waitUntil(() => !alive(pid), 15_000, 'the nap to end with its client');
      await waitUntil(() => tasks.running().length === 0, 15_000, 'the run to end');
    },
  );
});
