// The host while it runs: clients and activity reported by the worktree processes, token rotation
// and requirement, hung processes, worktrees added and removed with git, repos removed.
import Database from 'better-sqlite3';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorktreeState } from '../../shared/model.ts';
import { CLIENT_INFO, connectClient, initializeBody } from '../testing/mcp-clients.ts';
import { lockSqliteFromAnotherProcess } from '../testing/event-loop.ts';
import { isPortOpen, randomFirstPort, waitFor } from '../testing/net.ts';
import { addWorktree, git, makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { createLogger, formatLogLine } from '../platform/log.ts';
import { putJustOnPath } from '../testing/just.ts';
import { Host, type HostOptions } from './host.ts';

putJustOnPath();

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hostWithRepo(
  options: {
    worktreePollMs?: number;
    supervision?: HostOptions['supervision'];
    justfile?: string;
  } = {},
) {
  const repo = await makeTempRepo({
    'notes.txt': 'hello from the worktree\n',
    ...(options.justfile === undefined ? {} : { justfile: options.justfile }),
  });
  cleanups.push(repo.cleanup);
  const logged: string[] = [];
  const host = await Host.open({
    dataDir: await makeTempDir(),
    firstPort: randomFirstPort(),
    worktreePollMs: options.worktreePollMs ?? 0,
    log: createLogger([(record) => logged.push(formatLogLine(record))]),
    ...(options.supervision ? { supervision: options.supervision } : {}),
    ...(options.justfile === undefined ? {} : { justTasks: true }),
  });
  cleanups.push(() => host.close());
  await host.addRepo(repo.root);
  await host.startAll();
  return { repo, host, logged };
}

function worktrees(host: Host): WorktreeState[] {
  return host.snapshot().repos.flatMap((repo) => repo.worktrees);
}

/** The HTTP status of an `initialize` POST to /mcp with `token` (or none). */
async function status(port: number, token?: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(initializeBody()),
  });
  await response.body?.cancel();
  return response.status;
}

describe('Host clients and activity', () => {
  it('lists a connected client with its name, transport and calls, and logs its tool calls', async () => {
    const { host } = await hostWithRepo();
    const [main] = worktrees(host);
    const { token } = host.getConnectionInfo(main!.id);
    const { client } = await connectClient(main!.port, 'sse', token);
    cleanups.push(() => client.close());
    await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    await client.callTool({ name: 'read_file', arguments: { path: '../escape.txt' } });

    await waitFor(
      () => (host.snapshot().activity[main!.id]?.length ?? 0) === 2,
      'two calls logged',
    );
    const [first, second] = host.snapshot().activity[main!.id]!;
    expect(first).toMatchObject({
      clientName: CLIENT_INFO.name,
      tool: 'read_file',
      argumentsSummary: '{"path":"notes.txt"}',
      ok: true,
      error: null,
    });
    expect(first!.resultBytes).toBeGreaterThan('hello from the worktree'.length);
    expect(second).toMatchObject({ tool: 'read_file', ok: false });
    expect(second!.error).toMatch(/escape|outside/i);

    await waitFor(
      () => worktrees(host)[0]!.clients[0]?.calls === 2,
      'the client list to count calls',
    );
    expect(worktrees(host)[0]!.clients).toEqual([
      expect.objectContaining({
        name: CLIENT_INFO.name,
        version: CLIENT_INFO.version,
        transport: 'sse',
        era: 'legacy',
        connection: 'open',
        calls: 2,
      }),
    ]);

    await client.close();
    await waitFor(
      () => worktrees(host)[0]!.clients[0]?.connection === 'closed',
      'the client to show as closed',
    );
  });

  it("lists a client's calls that fail their argument check, with the message, on every leg", async () => {
    const { host } = await hostWithRepo();
    const [main] = worktrees(host);
    const { token } = host.getConnectionInfo(main!.id);
    const legs = ['sse', 'legacy-http', 'modern-http'] as const;
    for (const leg of legs) {
      const { client } = await connectClient(main!.port, leg, token);
      cleanups.push(() => client.close());
      // A required argument missing, and a key the schema does not know.
      const missing = await client.callTool({ name: 'list_affected_specs', arguments: {} });
      expect(missing.isError).toBe(true);
      expect(JSON.stringify(missing.content)).toContain(
        'Input validation error: Invalid arguments for tool list_affected_specs: base_branch',
      );
      const wrongKey = await client.callTool({
        name: 'get_spec_diff',
        arguments: { spec: '.notarai/app.spec.yaml', base_branch: 'main' },
      });
      expect(wrongKey.isError).toBe(true);
    }
    await waitFor(
      () => (host.snapshot().activity[main!.id]?.length ?? 0) === 2 * legs.length,
      'every refused call in Activity',
    );
    const activity = host.snapshot().activity[main!.id]!;
    expect(activity.map((entry) => [entry.tool, entry.ok])).toEqual(
      legs.flatMap(() => [
        ['list_affected_specs', false],
        ['get_spec_diff', false],
      ]),
    );
    expect(activity[0]).toMatchObject({ clientName: CLIENT_INFO.name, argumentsSummary: '{}' });
    expect(activity[0]!.error).toMatch(/^Input validation error: .*base_branch/);
    expect(activity[1]!.argumentsSummary).toContain('"spec"');
    expect(activity[1]!.error).toMatch(/spec_path/);
    // The Clients table counts them as the client's calls.
    await waitFor(
      () => worktrees(host)[0]!.clients.reduce((sum, client) => sum + client.calls, 0) === 6,
      'the clients to count the refused calls',
    );
  });

  it('shows a modern (stateless) client as recently seen', async () => {
    const { host } = await hostWithRepo();
    const [main] = worktrees(host);
    const { client } = await connectClient(
      main!.port,
      'modern-http',
      host.getConnectionInfo(main!.id).token,
    );
    cleanups.push(() => client.close());
    await client.callTool({ name: 'list_directory', arguments: {} });
    await waitFor(
      () => worktrees(host)[0]!.clients.some((c) => c.calls === 1),
      'the modern client',
    );
    expect(worktrees(host)[0]!.clients).toEqual([
      expect.objectContaining({ name: CLIENT_INFO.name, era: 'modern', connection: 'stateless' }),
    ]);
  });
});

describe('Host tokens', () => {
  it('refuses a rotated-out token at once and accepts the new one', async () => {
    const { host } = await hostWithRepo();
    const [main] = worktrees(host);
    const before = host.getConnectionInfo(main!.id).token;
    expect(await status(main!.port, before)).toBe(200);
    const after = host.rotateToken(main!.id).token;
    expect(after).not.toBe(before);
    await waitFor(
      async () => (await status(main!.port, before)) === 403,
      'the old token refused',
      2000,
    );
    expect(await status(main!.port, after)).toBe(200);
  });

  it('serves without a token when the requirement is turned off, and requires it again when on', async () => {
    const { host } = await hostWithRepo();
    const [main] = worktrees(host);
    expect(await status(main!.port)).toBe(403);
    const state = host.setWorktreeSettings(main!.id, { requireToken: false });
    expect(state.settings).toEqual({
      autostart: true,
      requireToken: false,
      justTasks: false,
      justTasksByHost: false,
    });
    await waitFor(async () => (await status(main!.port)) === 200, 'tokenless access', 2000);
    host.setWorktreeSettings(main!.id, { requireToken: true });
    await waitFor(async () => (await status(main!.port)) === 403, 'the token required again', 2000);
  });
});

describe('Host faults', () => {
  it('shows a process whose event loop is held for a while as busy, and does not kill it', async () => {
    const { host, logged } = await hostWithRepo({ supervision: { hangAfterMs: 10_000 } });
    const [main] = worktrees(host);
    const pid = host.processId(main!.id)!;
    const busy: (number | undefined)[] = [];
    host.onEvent((event) => {
      if (event.type === 'worktree-changed' && event.worktree.status.state === 'running') {
        busy.push(event.worktree.status.busySinceMs);
      }
    });
    process.kill(pid, 'SIGSTOP'); // as a long synchronous call would hold its loop
    cleanups.push(async () => {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    });
    await waitFor(() => busy.some((since) => since !== undefined), 'busy to be shown', 3000);
    process.kill(pid, 'SIGCONT');
    await waitFor(() => busy.at(-1) === undefined, 'busy to clear', 3000);
    expect(host.processId(main!.id)).toBe(pid); // reported, not punished
    expect(logged).toEqual([]);
    expect(await status(main!.port, host.getConnectionInfo(main!.id).token)).toBe(200);
  });

  it('replaces a worktree process that stays silent past the hang limit (SIGSTOP) on the same port', async () => {
    const { host, logged } = await hostWithRepo({ supervision: { hangAfterMs: 1500 } });
    const [main] = worktrees(host);
    const pid = host.processId(main!.id)!;
    const states: string[] = [];
    host.onEvent((event) => {
      if (event.type === 'worktree-changed') states.push(event.worktree.status.state);
    });
    const stoppedAt = Date.now();
    process.kill(pid, 'SIGSTOP');
    cleanups.push(async () => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone: the supervisor killed it
      }
    });
    await waitFor(() => states.includes('error'), 'the hang to be noticed', 4000);
    const noticedAfter = Date.now() - stoppedAt;
    expect(noticedAfter).toBeGreaterThanOrEqual(1500);
    expect(worktrees(host)[0]!.status.state).not.toBe('stopped');
    await waitFor(() => worktrees(host)[0]!.status.state === 'running', 'a new process', 5000);
    expect(host.processId(main!.id)).not.toBe(pid);
    expect(worktrees(host)[0]!.port).toBe(main!.port);
    expect(await status(main!.port, host.getConnectionInfo(main!.id).token)).toBe(200);
    expect(logged.join('\n')).toMatch(
      /stopped answering its health check for \d+ s; restarting it/,
    );
  });

  it('never gives up: killed ten times in a row, it comes back every time on its port', async () => {
    const { host, logged } = await hostWithRepo({
      supervision: { restartDelaysMs: [50, 100, 200, 400] },
    });
    const [main] = worktrees(host);
    const errors: { message: string; restartAt?: number }[] = [];
    host.onEvent((event) => {
      if (event.type === 'worktree-changed' && event.worktree.status.state === 'error') {
        errors.push(event.worktree.status);
      }
    });
    let pid = host.processId(main!.id)!;
    for (let kill = 1; kill <= 10; kill++) {
      process.kill(pid, 'SIGKILL');
      await waitFor(
        () => host.processId(main!.id) !== pid && worktrees(host)[0]!.status.state === 'running',
        `restart ${kill}`,
        5000,
      );
      pid = host.processId(main!.id)!;
      expect(worktrees(host)[0]!.port).toBe(main!.port);
      expect(await status(main!.port, host.getConnectionInfo(main!.id).token)).toBe(200);
    }
    expect(errors).toHaveLength(10);
    // Each error said when the server would be back (the window counts down to it).
    for (const error of errors) {
      expect(error.message).toMatch(/exited unexpectedly \(signal SIGKILL\)/);
      expect(error.restartAt).toBeGreaterThan(0);
    }
    expect(logged.filter((line) => line.includes('restarting in'))).toHaveLength(10);
  });

  it('lists a running tool call with its client, and cancels it from the window', async () => {
    // A call that stays in flight until someone ends it, whatever the machine's speed: a just
    // recipe that sleeps for an hour (its run is stopped at its deadline, RUN_TIMEOUT_MS, long
    // after the test would have timed out).
    const { host } = await hostWithRepo({ justfile: 'hold:\n    sleep 3600\n' });
    const [main] = worktrees(host);
    const { client } = await connectClient(
      main!.port,
      'modern-http',
      host.getConnectionInfo(main!.id).token,
    );
    cleanups.push(() => client.close());
    const call = client.callTool({ name: 'run_just_task', arguments: { task: 'hold' } });
    await waitFor(() => worktrees(host)[0]!.runningCalls.length === 1, 'the call to show', 10_000);
    const running = worktrees(host)[0]!.runningCalls[0]!;
    expect(running).toMatchObject({ tool: 'run_just_task', clientName: CLIENT_INFO.name });
    expect(running.argumentsSummary).toContain('hold');
    host.cancelToolCall(main!.id, running.id);
    // Only the cancel can end it: the recipe would sleep for an hour.
    const result = await call;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('cancelled from the Grove window');
    await waitFor(() => worktrees(host)[0]!.runningCalls.length === 0, 'the call to end', 10_000);
  });

  it('a hash cache locked by another process: calls wait or say so, other clients answer at once, no restart', async () => {
    const { host, repo } = await hostWithRepo();
    const [main] = worktrees(host);
    await mkdir(path.join(repo.root, '.notarai'), { recursive: true });
    await writeFile(
      path.join(repo.root, '.notarai/app.spec.yaml'),
      "schema_version: '0.8'\nintent: App.\ntier: registered\nartifacts:\n  code:\n    - path: src/**\n",
    );
    await mkdir(path.join(repo.root, 'src'));
    await writeFile(path.join(repo.root, 'src/a.ts'), 'a\n');
    const token = host.getConnectionInfo(main!.id).token;
    const pid = host.processId(main!.id);
    const { client: agent } = await connectClient(main!.port, 'modern-http', token);
    const { client: observer } = await connectClient(main!.port, 'sse', token);
    cleanups.push(
      () => agent.close(),
      () => observer.close(),
    );
    await agent.callTool({ name: 'mark_reconciled', arguments: { files: ['src/a.ts'] } });

    const lock = await lockSqliteFromAnotherProcess(
      path.join(repo.root, '.notarai/.cache/notarai.db'),
      3_000,
    );
    const calls = Promise.all([
      agent.callTool({
        name: 'get_spec_diff',
        arguments: { spec_path: '.notarai/app.spec.yaml', base_branch: 'main' },
      }),
      agent.callTool({ name: 'mark_reconciled', arguments: { files: ['src/a.ts'] } }),
    ]);
    // Meanwhile another client's reads answer at once.
    let worstMs = 0;
    for (let read = 0; read < 20; read++) {
      const started = performance.now();
      const result = await observer.callTool({
        name: 'read_file',
        arguments: { path: 'notes.txt' },
      });
      worstMs = Math.max(worstMs, performance.now() - started);
      expect(result.isError).not.toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(worstMs).toBeLessThan(1_000);
    for (const result of await calls) {
      // Done after the lock was released (10 s budget), or a clear error: never a hang.
      if (result.isError)
        expect(JSON.stringify(result.content)).toMatch(/locked by another process/);
    }
    await lock.exited;
    expect(host.processId(main!.id)).toBe(pid); // never restarted
    expect(worktrees(host)[0]!.status.state).toBe('running');
  });

  it("writes what a worktree process logs to the host's log file, under that worktree", async () => {
    const repo = await makeTempRepo({
      '.notarai/app.spec.yaml':
        "schema_version: '0.8'\nintent: App.\ntier: registered\nartifacts:\n  code:\n    - path: src/**\n",
      'src/a.ts': 'a\n',
    });
    cleanups.push(repo.cleanup);
    // A cache that is not a database: the worktree process recreates it and says so.
    await mkdir(path.join(repo.root, '.notarai/.cache'), { recursive: true });
    await writeFile(
      path.join(repo.root, '.notarai/.cache/notarai.db'),
      'not a database '.repeat(100),
    );
    const dataDir = await makeTempDir();
    const host = await Host.open({ dataDir, firstPort: randomFirstPort(), worktreePollMs: 0 });
    cleanups.push(() => host.close());
    await host.addRepo(repo.root);
    await host.startAll();
    const logFile = path.join(dataDir, 'grove.log');
    const records = async () =>
      (await readFile(logFile, 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { level: string; scope: string; message: string });
    await waitFor(
      async () => (await records()).some((record) => record.message.includes('recreated empty')),
      'the warning in grove.log',
      10_000,
    );
    const warning = (await records()).find((record) => record.message.includes('recreated empty'));
    expect(warning).toMatchObject({ level: 'warn', scope: `grove: worktree ${repo.root}` });
    expect((await stat(logFile)).mode & 0o777).toBe(0o600);
  });

  it('reports a locked app database with a clear message', async () => {
    const dataDir = await makeTempDir();
    const first = await Host.open({ dataDir, worktreePollMs: 0 });
    await first.close();
    const locker = new Database(path.join(dataDir, 'grove.db'));
    locker.exec('BEGIN EXCLUSIVE');
    try {
      await expect(Host.open({ dataDir })).rejects.toThrow(
        `cannot open the app database ${path.join(dataDir, 'grove.db')}: database is locked`,
      );
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
  });
});

describe('Host worktrees while running', () => {
  it('opens a worktree added with git worktree add, and drops one removed with git worktree remove', async () => {
    const { repo, host } = await hostWithRepo({ worktreePollMs: 200 });
    const linked = await addWorktree(repo, 'late-feature');
    await waitFor(
      () => worktrees(host).some((w) => w.path === linked && w.status.state === 'running'),
      'the new worktree to run',
      5000,
    );
    const added = worktrees(host).find((w) => w.path === linked)!;
    expect(added.branch).toBe('late-feature');
    expect(await isPortOpen(added.port)).toBe(true);

    await git(repo.root, 'worktree', 'remove', linked);
    await waitFor(() => worktrees(host).length === 1, 'the removed worktree to disappear', 5000);
    expect(await isPortOpen(added.port)).toBe(false);
  });

  it('puts a worktree whose directory is deleted while running into error, others unaffected', async () => {
    const { repo, host } = await hostWithRepo({ worktreePollMs: 200 });
    const linked = await addWorktree(repo, 'doomed');
    await host.refreshAll();
    await waitFor(
      () => worktrees(host)[1]?.status.state === 'running',
      'the worktree to run',
      5000,
    );
    const { rm } = await import('node:fs/promises');
    await rm(linked, { recursive: true, force: true });
    // While rm runs, a poll can find the directory still there without its .git file ("not a git
    // work tree of this repository"); the next poll, once it is gone, says so.
    const gone = { state: 'error', message: `worktree directory not found: ${linked}` };
    await waitFor(
      () => isDeepStrictEqual(worktrees(host)[1]!.status, gone),
      'the error state naming the missing directory',
      5000,
    );
    expect(worktrees(host)[0]!.status.state).toBe('running');
    await expect(host.startServer(worktrees(host)[1]!.id)).rejects.toThrow(
      'worktree directory not found',
    );
  });

  it('removes a repo: stops its servers and forgets it', async () => {
    const { host } = await hostWithRepo();
    const [main] = worktrees(host);
    await host.removeRepo(main!.repoId);
    expect(host.snapshot().repos).toEqual([]);
    expect(await isPortOpen(main!.port)).toBe(false);
    expect(await host.restoreRepos()).toEqual([]);
    expect(host.snapshot().repos).toEqual([]);
  });

  it('moves a running server to a port the user picks', async () => {
    const { host } = await hostWithRepo();
    const [main] = worktrees(host);
    const target = main!.port + 7;
    const moved = await host.setWorktreePort(main!.id, target);
    expect(moved.port).toBe(target);
    expect(worktrees(host)[0]!.status).toEqual({ state: 'running', port: target });
    expect(await isPortOpen(main!.port)).toBe(false);
  });
});
