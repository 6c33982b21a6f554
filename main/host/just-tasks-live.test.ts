// The opt-in just tasks through the whole stack: a real host, real worktree processes, the real
// `just` (the pinned copy, main/testing/just.ts) and real SDK clients. Off by default (not listed);
// turning the setting on or off sends tools/list_changed to connected clients and changes the
// list; runs show in Activity with the client and the task; the setting persists; the host option
// (grove serve --just-tasks) turns it on everywhere.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorktreeState } from '../../shared/model.ts';
import { CLIENT_INFO, connectClient, type Leg } from '../testing/mcp-clients.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { createLogger } from '../platform/log.ts';
import { Host } from './host.ts';
import { putJustOnPath } from '../testing/just.ts';

putJustOnPath();

const JUSTFILE = '# Says hello\nhello name:\n    echo "hello {{name}}"\n';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openHost(dataDir: string, justTasks?: boolean): Promise<Host> {
  const host = await Host.open({
    dataDir,
    firstPort: randomFirstPort(),
    worktreePollMs: 0,
    log: createLogger([]),
    ...(justTasks === undefined ? {} : { justTasks }),
  });
  cleanups.push(() => host.close());
  return host;
}

async function hostWithRepo(justTasks?: boolean) {
  const repo = await makeTempRepo({ justfile: JUSTFILE });
  cleanups.push(repo.cleanup);
  const dataDir = await makeTempDir();
  const host = await openHost(dataDir, justTasks);
  await host.addRepo(repo.root);
  await host.startAll();
  return { repo, host, dataDir };
}

function mainWorktree(host: Host): WorktreeState {
  return host.snapshot().repos[0]!.worktrees[0]!;
}

async function connect(host: Host, leg: Leg) {
  const worktree = mainWorktree(host);
  const { token } = host.getConnectionInfo(worktree.id);
  const { client } = await connectClient(worktree.port, leg, token);
  cleanups.push(() => client.close());
  let changes = 0;
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    changes += 1;
  });
  const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
  return { client, names, changes: () => changes };
}

const JUST_TOOLS = ['list_just_tasks', 'run_just_task'];

describe('just tasks in a served worktree', () => {
  it('are off by default; turning them on and off tells connected clients and changes the list', async () => {
    const { host } = await hostWithRepo();
    const worktree = mainWorktree(host);
    expect(worktree.settings).toMatchObject({ justTasks: false, justTasksByHost: false });
    const sessions = [await connect(host, 'legacy-http'), await connect(host, 'sse')];
    for (const session of sessions) {
      const names = await session.names();
      expect(names).toContain('read_file');
      expect(names.filter((name) => JUST_TOOLS.includes(name))).toEqual([]);
    }
    await expect(
      sessions[0]!.client.callTool({
        name: 'run_just_task',
        arguments: { task: 'hello', args: ['x'] },
      }),
    ).rejects.toThrow(/run_just_task disabled/);

    const state = host.setWorktreeSettings(worktree.id, { justTasks: true });
    expect(state.settings).toMatchObject({ justTasks: true, justTasksByHost: false });
    for (const session of sessions) {
      await waitFor(() => session.changes() === 1, 'tools/list_changed after turning on');
      expect(await session.names()).toEqual(expect.arrayContaining(JUST_TOOLS));
    }
    // A modern (stateless) client sees the new list on its next request.
    const modern = await connect(host, 'modern-http');
    expect(await modern.names()).toEqual(expect.arrayContaining(JUST_TOOLS));

    const listed = await sessions[0]!.client.callTool({ name: 'list_just_tasks', arguments: {} });
    expect(listed.structuredContent).toMatchObject({
      recipes: [{ name: 'hello', doc: 'Says hello' }],
    });
    const ran = await sessions[0]!.client.callTool({
      name: 'run_just_task',
      arguments: { task: 'hello', args: ['grove'] },
    });
    expect(ran.structuredContent).toMatchObject({ exit_code: 0, stdout: 'hello grove\n' });

    // Activity shows the run with who asked and the task.
    await waitFor(
      () =>
        (host.snapshot().activity[worktree.id] ?? []).some(
          (entry) => entry.tool === 'run_just_task',
        ),
      'the run in Activity',
    );
    const entry = host
      .snapshot()
      .activity[worktree.id]!.find((candidate) => candidate.tool === 'run_just_task')!;
    expect(entry).toMatchObject({ clientName: CLIENT_INFO.name, ok: true });
    expect(entry.argumentsSummary).toBe('{"task":"hello","args":["grove"]}');

    host.setWorktreeSettings(worktree.id, { justTasks: false });
    for (const session of sessions) {
      await waitFor(() => session.changes() === 2, 'tools/list_changed after turning off');
      expect((await session.names()).filter((name) => JUST_TOOLS.includes(name))).toEqual([]);
    }
  });

  it('ends a running recipe when the host closes, even one that ignores SIGTERM', async () => {
    const repo = await makeTempRepo({
      justfile:
        'stubborn:\n    sh -c \'trap "" TERM; echo $$ > stubborn.pid; while true; do sleep 1; done\'\n',
    });
    cleanups.push(repo.cleanup);
    const host = await openHost(await makeTempDir(), true);
    await host.addRepo(repo.root);
    await host.startAll();
    const session = await connect(host, 'legacy-http');
    void session.client
      .callTool({ name: 'run_just_task', arguments: { task: 'stubborn' } })
      .catch(() => undefined);
    const pidFile = path.join(repo.root, 'stubborn.pid');
    const readPid = (): number => {
      try {
        return Number(readFileSync(pidFile, 'utf8').trim());
      } catch {
        return 0;
      }
    };
    await waitFor(() => readPid() > 0, 'the recipe to start');
    const pid = readPid();
    const running = (): boolean => {
      try {
        return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    cleanups.push(async () => {
      if (running()) process.kill(pid, 'SIGKILL');
    });
    await host.close();
    await waitFor(() => !running(), 'the recipe to end with the host', 5_000);
  });

  it('leaves none of what a running recipe started once the host closes (sleep &, nohup, setsid)', async () => {
    const repo = await makeTempRepo({
      justfile:
        'linger:\n' +
        '    sleep 611 & echo $! > linger.pids\n' +
        '    nohup sleep 612 > /dev/null 2>&1 & echo $! >> linger.pids\n' +
        "    setsid sh -c 'sleep 613 & echo $! >> linger.pids'\n" +
        '    sleep 614 & echo $! >> linger.pids; wait\n',
    });
    cleanups.push(repo.cleanup);
    const host = await openHost(await makeTempDir(), true);
    await host.addRepo(repo.root);
    await host.startAll();
    const session = await connect(host, 'sse');
    void session.client
      .callTool({ name: 'run_just_task', arguments: { task: 'linger' } })
      .catch(() => undefined);
    const pidFile = path.join(repo.root, 'linger.pids');
    const pids = (): number[] => {
      try {
        return readFileSync(pidFile, 'utf8').trim().split('\n').map(Number);
      } catch {
        return [];
      }
    };
    await waitFor(() => pids().length === 4, 'the recipe to start its four sleeps');
    const alive = (pid: number): boolean => {
      try {
        return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    const started = pids();
    cleanups.push(async () => {
      for (const pid of started.filter(alive)) process.kill(pid, 'SIGKILL');
    });
    expect(started.every(alive)).toBe(true);
    await host.close();
    await waitFor(() => !started.some(alive), 'every sleep to end with the host', 5_000);
  });

  it('lists a running task in the worktree state, and the window can stop it', async () => {
    const repo = await makeTempRepo({
      justfile: "nap seconds:\n    sh -c 'echo $$ > nap.pid; exec sleep {{seconds}}'\n",
    });
    cleanups.push(repo.cleanup);
    const host = await openHost(await makeTempDir(), true);
    await host.addRepo(repo.root);
    await host.startAll();
    const session = await connect(host, 'legacy-http');
    const result = session.client
      .callTool({ name: 'run_just_task', arguments: { task: 'nap', args: ['300'] } })
      .catch((error: unknown) => ({ isError: true, content: [String(error)] }));
    await waitFor(() => (mainWorktree(host).runningTasks ?? []).length === 1, 'the task listed');
    const [task] = mainWorktree(host).runningTasks!;
    expect(task).toMatchObject({ task: 'nap', args: ['300'], clientName: CLIENT_INFO.name });
    const napPid = (): number => {
      try {
        return Number(readFileSync(path.join(repo.root, 'nap.pid'), 'utf8').trim());
      } catch {
        return 0;
      }
    };
    await waitFor(() => napPid() > 0, 'the recipe to start');
    const pid = napPid();
    host.stopTask(mainWorktree(host).id, task!.id);
    const stopped = await result;
    expect(stopped.isError).toBe(true);
    expect(JSON.stringify(stopped.content)).toContain('just nap was stopped from the Grove window');
    await waitFor(() => (mainWorktree(host).runningTasks ?? []).length === 0, 'the list emptied');
    await waitFor(() => {
      try {
        return /^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return true;
      }
    }, 'the recipe to end');
  });

  it('keeps the setting across restarts of the host, and applies it when the server starts', async () => {
    const { host, repo, dataDir } = await hostWithRepo();
    host.setWorktreeSettings(mainWorktree(host).id, { justTasks: true });
    await host.close();
    const again = await openHost(dataDir);
    await again.addRepo(repo.root);
    await again.startAll();
    expect(mainWorktree(again).settings.justTasks).toBe(true);
    const session = await connect(again, 'legacy-http');
    expect(await session.names()).toEqual(expect.arrayContaining(JUST_TOOLS));
  });

  it('are on in every worktree with the host option (grove serve --just-tasks), whatever the setting', async () => {
    const { host } = await hostWithRepo(true);
    const worktree = mainWorktree(host);
    expect(worktree.settings).toMatchObject({ justTasks: true, justTasksByHost: true });
    const session = await connect(host, 'legacy-http');
    expect(await session.names()).toEqual(expect.arrayContaining(JUST_TOOLS));
    const state = host.setWorktreeSettings(worktree.id, { justTasks: false });
    expect(state.settings).toMatchObject({ justTasks: true, justTasksByHost: true });
  });
});
