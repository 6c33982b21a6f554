// `grove bridge` as a stdio client meets it: the SDK's StdioClientTransport launches the real
// command (bin/grove.js) against a running `grove serve` and against no host at all.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient } from '../testing/mcp-clients.ts';
import { isPortOpen, randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo, SRC_SPEC, type TempRepo } from '../testing/temp-repo.ts';
import { specResourceUri } from '../tools/reconcile-mcp.ts';
import { putJustOnPath } from '../testing/just.ts';

// The just-task tests run the real `just` (grove serve finds it on the PATH it inherits).
putJustOnPath();

const GROVE = fileURLToPath(new URL('../../bin/grove.js', import.meta.url));
const BRIDGE_CLIENT = { name: 'bridge-test-client', version: '4.5.6' };

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Bridged {
  client: Client;
  stderr: () => string;
}

/** Launches `grove bridge` the way Claude Desktop does: a command, args, MCP over its stdio. */
async function connectBridge(
  worktree: string,
  dataDir: string,
  options: { local?: boolean; modern?: boolean; quiet?: boolean } = {},
): Promise<Bridged> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      GROVE,
      'bridge',
      '--data-dir',
      dataDir,
      ...(options.local ? ['--local'] : []),
      // The tests read where it serves from: an informational line, said with --verbose.
      ...(options.quiet ? [] : ['--verbose']),
      worktree,
    ],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client(
    BRIDGE_CLIENT,
    options.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, stderr: () => stderr };
}

interface Serve {
  child: ChildProcessWithoutNullStreams;
  port: number;
  token: string;
  /** The UI's URL with its token, when started with the UI. */
  ui: string | null;
  /** Host events printed after `ready` (one JSON object per line). */
  events: { event: string; entries?: { clientName: string; tool: string; ok: boolean }[] }[];
}

/** Runs the real `grove serve --json` for one repository until its ready line. */
async function startServe(
  repo: TempRepo,
  dataDir: string,
  extra: string[] = ['--no-ui'],
): Promise<Serve> {
  const child = spawn(
    process.execPath,
    [GROVE, 'serve', '--json', ...extra, '--data-dir', dataDir, repo.root],
    { stdio: 'pipe', env: { ...process.env, GROVE_FIRST_PORT: String(randomFirstPort()) } },
  );
  cleanups.push(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const events: Serve['events'] = [];
  const lines = createInterface({ input: child.stdout });
  const ready = await new Promise<{
    ui: string | null;
    worktrees: { mcp: string; token: string }[];
  }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve not ready: ${stderr}`)), 30_000);
    lines.on('line', (line) => {
      const parsed = JSON.parse(line) as Serve['events'][number];
      if (parsed.event !== 'ready') return void events.push(parsed);
      clearTimeout(timer);
      resolve(
        parsed as unknown as { ui: string | null; worktrees: { mcp: string; token: string }[] },
      );
    });
    child.on('exit', () => reject(new Error(`serve exited: ${stderr}`)));
  });
  const worktree = ready.worktrees[0]!;
  return {
    child,
    port: Number(new URL(worktree.mcp).port),
    token: worktree.token,
    events,
    ui: ready.ui,
  };
}

/** Stops `grove serve` (SIGTERM: as Ctrl+C; SIGKILL: a crash) and waits until its server is gone. */
async function stopServe(serve: Serve, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  serve.child.kill(signal);
  await waitFor(async () => !(await isPortOpen(serve.port)), 'the worktree server to stop');
}

/** The HostApi of a `grove serve` started with its UI, as the window calls it. */
function hostApi(serve: Serve): (command: string, body: unknown) => Promise<unknown> {
  const ui = new URL(serve.ui!);
  return async (command, body) => {
    const response = await fetch(new URL(`/api/${command}`, ui), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${ui.searchParams.get('token')}`,
      },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return response.json();
  };
}

async function firstWorktreeId(api: ReturnType<typeof hostApi>): Promise<string> {
  const snapshot = (await api('getSnapshot', {})) as { repos: { worktrees: { id: string }[] }[] };
  return snapshot.repos[0]!.worktrees[0]!.id;
}

async function governedRepo(): Promise<TempRepo> {
  const repo = await makeTempRepo({
    'README.md': '# bridged\n',
    'src/app.ts': 'export const answer = 42;\n',
    '.notarai/app.spec.yaml': SRC_SPEC,
  });
  cleanups.push(() => repo.cleanup());
  return repo;
}

const readFileText = async (client: Client, file: string): Promise<unknown> =>
  (await client.callTool({ name: 'read_file', arguments: { path: file } })).structuredContent;

/**
 * A governed repository served by `grove serve` (its flags: `serveFlags`), and a bridge client
 * forwarding to it that has made one call.
 */
async function bridgedThroughServe(serveFlags?: string[]) {
  const repo = await governedRepo();
  const dataDir = await makeTempDir('grove-bridge-data-');
  const serve = await startServe(repo, dataDir, serveFlags);
  const bridged = await connectBridge(repo.root, dataDir);
  expect(await readFileText(bridged.client, 'README.md')).toMatchObject({
    content: '# bridged\n',
  });
  return { repo, dataDir, serve, bridged };
}

describe('grove bridge', () => {
  it('forwards to the running host: same tools and answers as its HTTP server, calls in its Activity', async () => {
    const repo = await governedRepo();
    const dataDir = await makeTempDir('grove-bridge-data-');
    const serve = await startServe(repo, dataDir);
    const http = await connectClient(serve.port, 'legacy-http', serve.token);
    cleanups.push(() => http.client.close());

    const bridged = await connectBridge(repo.root, dataDir);
    expect(bridged.stderr()).toContain('through the Grove host');
    expect((await bridged.client.listTools()).tools).toEqual((await http.client.listTools()).tools);
    expect(await readFileText(bridged.client, 'src/app.ts')).toEqual(
      await readFileText(http.client, 'src/app.ts'),
    );
    // The host saw the bridge's client by its own name, as for any client.
    await waitFor(
      () =>
        serve.events
          .flatMap((event) => (event.event === 'activity' ? (event.entries ?? []) : []))
          .some((entry) => entry.clientName === BRIDGE_CLIENT.name && entry.tool === 'read_file'),
      'the call in the host Activity',
    );
  });

  it('serves the worktree itself without a host, with the tools and answers of the host server', async () => {
    const repo = await governedRepo();
    const dataDir = await makeTempDir('grove-bridge-data-');
    const local = await connectBridge(
      path.join(repo.root, 'src'),
      await makeTempDir('grove-none-'),
    );
    expect(local.stderr()).toContain('through this process');

    const serve = await startServe(repo, dataDir);
    const http = await connectClient(serve.port, 'legacy-http', serve.token);
    cleanups.push(() => http.client.close());
    expect((await local.client.listTools()).tools).toEqual((await http.client.listTools()).tools);
    expect(await readFileText(local.client, 'README.md')).toEqual(
      await readFileText(http.client, 'README.md'),
    );
    // The sandbox holds over stdio too.
    const escape = await local.client.callTool({
      name: 'read_file',
      arguments: { path: '../../../etc/passwd' },
    });
    expect(escape.isError).toBe(true);
  });

  it('serves a modern (2026-07-28) client in both modes', async () => {
    const repo = await governedRepo();
    const dataDir = await makeTempDir('grove-bridge-data-');
    const local = await connectBridge(repo.root, dataDir, { modern: true });
    expect(await readFileText(local.client, 'README.md')).toMatchObject({ content: '# bridged\n' });
    await startServe(repo, dataDir);
    const forwarded = await connectBridge(repo.root, dataDir, { modern: true });
    expect(await readFileText(forwarded.client, 'README.md')).toMatchObject({
      content: '# bridged\n',
    });
    expect(forwarded.stderr()).toContain('through the Grove host');
  });

  it('keeps the session when the host is killed: the next call works, served by the bridge', async () => {
    const { repo, serve, bridged } = await bridgedThroughServe();

    await stopServe(serve, 'SIGKILL');
    await writeFile(path.join(repo.root, 'README.md'), '# changed after the host\n');
    expect(await readFileText(bridged.client, 'README.md')).toMatchObject({
      content: '# changed after the host\n',
    });
    expect(bridged.stderr()).toContain('now serving');
    expect(bridged.stderr()).toContain('through this process');
  });

  it('goes back to the host when it comes back, in the same client session', async () => {
    const { repo, dataDir, serve: first, bridged } = await bridgedThroughServe();

    // Stopped: the bridge serves the worktree itself meanwhile.
    await stopServe(first, 'SIGTERM');
    expect(await readFileText(bridged.client, 'README.md')).toMatchObject({
      content: '# bridged\n',
    });
    expect(bridged.stderr()).toContain('through this process');

    // Started again (same data directory: same port and token): the next call after the bridge's
    // next look (every 2 s) goes to the host, in a session the bridge opened with the client's
    // own initialize.
    const second = await startServe(repo, dataDir);
    expect(second.port).toBe(first.port);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(await readFileText(bridged.client, 'src/app.ts')).toMatchObject({
      content: 'export const answer = 42;\n',
    });
    expect(bridged.stderr()).toMatch(/now serving .* through the Grove host/);
    await waitFor(
      () =>
        second.events
          .flatMap((event) => (event.event === 'activity' ? (event.entries ?? []) : []))
          .some((entry) => entry.clientName === BRIDGE_CLIENT.name && entry.tool === 'read_file'),
      'the call in the new host Activity',
    );
  });

  it("keeps working when the window rotates the worktree's token", async () => {
    const { serve, bridged } = await bridgedThroughServe(['--ui-port', '0']);

    // What the Server tab's "Rotate token" does: the old token is refused from the next request.
    const api = hostApi(serve);
    const rotated = (await api('rotateToken', { worktreeId: await firstWorktreeId(api) })) as {
      token: string;
    };
    expect(rotated.token).not.toBe(serve.token);

    expect(await readFileText(bridged.client, 'src/app.ts')).toMatchObject({
      content: 'export const answer = 42;\n',
    });
    expect(bridged.stderr()).toMatch(/now serving .* through the Grove host/);
  });

  it("serving itself, honours the worktree's just-tasks setting from the app database", async () => {
    const repo = await governedRepo();
    await writeFile(path.join(repo.root, 'justfile'), 'hello:\n    echo hi\n');
    const dataDir = await makeTempDir('grove-bridge-data-');
    const before = await connectBridge(repo.root, dataDir, { local: true });
    expect((await before.client.listTools()).tools.map((t) => t.name)).not.toContain(
      'run_just_task',
    );
    const serve = await startServe(repo, dataDir, ['--ui-port', '0']);
    const api = hostApi(serve);
    await api('setWorktreeSettings', { worktreeId: await firstWorktreeId(api), justTasks: true });
    await stopServe(serve, 'SIGTERM');

    const after = await connectBridge(repo.root, dataDir);
    expect(after.stderr()).toContain('through this process');
    expect((await after.client.listTools()).tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['list_just_tasks', 'run_just_task']),
    );
  });

  it("passes a call's log messages and progress through to the client", async () => {
    const repo = await governedRepo();
    await writeFile(path.join(repo.root, 'justfile'), 'hello name:\n    echo "hello {{name}}"\n');
    const dataDir = await makeTempDir('grove-bridge-data-');
    await startServe(repo, dataDir, ['--no-ui', '--just-tasks']);
    const bridged = await connectBridge(repo.root, dataDir);
    const logged: string[] = [];
    bridged.client.setNotificationHandler('notifications/message', (note) => {
      logged.push(JSON.stringify(note.params));
    });
    await bridged.client.setLoggingLevel('info');
    const progress: unknown[] = [];
    const result = await bridged.client.callTool(
      { name: 'run_just_task', arguments: { task: 'hello', args: ['bridge'] } },
      { onprogress: (update) => progress.push(update) },
    );
    expect(result.structuredContent).toMatchObject({ exit_code: 0 });
    expect(logged.some((line) => line.includes('hello bridge'))).toBe(true);
    expect(progress.length).toBeGreaterThan(0);
  });

  it("passes a client's cancellation through: the host ends the call", async () => {
    const repo = await governedRepo();
    // The recipe says when it runs (a file), then naps far longer than the test may take.
    await writeFile(
      path.join(repo.root, 'justfile'),
      'nap:\n    touch nap.started\n    sleep 30\n',
    );
    const dataDir = await makeTempDir('grove-bridge-data-');
    const serve = await startServe(repo, dataDir, ['--no-ui', '--just-tasks']);
    const bridged = await connectBridge(repo.root, dataDir);
    const cancel = new AbortController();
    const call = bridged.client.callTool(
      { name: 'run_just_task', arguments: { task: 'nap', args: [] } },
      { signal: cancel.signal },
    );
    await waitFor(
      () =>
        stat(path.join(repo.root, 'nap.started')).then(
          () => true,
          () => false,
        ),
      'the run to start',
      20_000,
    );
    cancel.abort('the user pressed Stop');
    await expect(call).rejects.toThrow();
    // The host got notifications/cancelled and ended the run long before the recipe would.
    await waitFor(
      () =>
        serve.events
          .flatMap((event) => (event.event === 'activity' ? (event.entries ?? []) : []))
          .some((entry) => entry.tool === 'run_just_task' && !entry.ok),
      'the cancelled run in the host Activity',
      10_000,
    );
  });

  it('passes spec change notifications through, before and after the host goes away', async () => {
    const repo = await governedRepo();
    const dataDir = await makeTempDir('grove-bridge-data-');
    const serve = await startServe(repo, dataDir);
    const bridged = await connectBridge(repo.root, dataDir);
    const updated: string[] = [];
    bridged.client.setNotificationHandler('notifications/resources/updated', (note) => {
      updated.push((note.params as { uri: string }).uri);
    });
    const uri = specResourceUri('.notarai/app.spec.yaml');
    await bridged.client.subscribeResource({ uri });
    // The host's watcher may take a moment to start after the server is ready.
    await waitFor(
      async () => {
        await writeFile(
          path.join(repo.root, '.notarai/app.spec.yaml'),
          `${SRC_SPEC}# ${Date.now()}\n`,
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        return updated.length > 0;
      },
      'resources/updated from the host',
      15_000,
    );
    expect(updated[0]).toBe(uri);

    // The host goes; the bridge serves the worktree and re-subscribed the client's resource.
    await stopServe(serve, 'SIGKILL');
    expect((await bridged.client.listResources()).resources.map((r) => r.uri)).toContain(uri);
    updated.length = 0;
    await waitFor(
      async () => {
        await writeFile(
          path.join(repo.root, '.notarai/app.spec.yaml'),
          `${SRC_SPEC}# ${Date.now()}\n`,
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        return updated.length > 0;
      },
      'resources/updated from the bridge itself',
      15_000,
    );
    expect(updated[0]).toBe(uri);
    expect(bridged.stderr()).toContain('through this process');
  });

  it('serves the worktree itself when the app database cannot be read, saying so on stderr', async () => {
    const repo = await governedRepo();
    const dataDir = await makeTempDir('grove-bridge-data-');
    await writeFile(path.join(dataDir, 'grove.db'), 'not a database at all, '.repeat(400), {
      mode: 0o600,
    });
    const bridged = await connectBridge(repo.root, dataDir);
    expect(await readFileText(bridged.client, 'README.md')).toMatchObject({
      content: '# bridged\n',
    });
    expect(bridged.stderr()).toContain('through this process');
    expect(bridged.stderr()).toMatch(/cannot read the app database/);
  });

  it('keeps the session when the host goes away and the app database cannot be read', async () => {
    const { dataDir, serve, bridged } = await bridgedThroughServe();
    serve.child.kill('SIGKILL');
    for (const suffix of ['', '-wal', '-shm']) {
      await writeFile(path.join(dataDir, `grove.db${suffix}`), 'garbage '.repeat(1000));
    }
    await waitFor(async () => !(await isPortOpen(serve.port)), 'the worktree server to stop');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await readFileText(bridged.client, 'README.md')).toMatchObject({
      content: '# bridged\n',
    });
    expect(bridged.stderr()).toContain('through this process');
  });

  it('tells the client the tool list changed when it moves from the host to serving itself', async () => {
    const repo = await governedRepo();
    await writeFile(path.join(repo.root, 'justfile'), 'hello:\n    echo hello\n');
    const dataDir = await makeTempDir('grove-bridge-data-');
    const serve = await startServe(repo, dataDir, ['--just-tasks']);
    const bridged = await connectBridge(repo.root, dataDir);
    let changes = 0;
    bridged.client.setNotificationHandler('notifications/tools/list_changed', () => {
      changes += 1;
    });
    const names = async () => (await bridged.client.listTools()).tools.map((tool) => tool.name);
    expect(await names()).toContain('run_just_task');

    await stopServe(serve, 'SIGKILL');
    expect(await readFileText(bridged.client, 'README.md')).toMatchObject({
      content: '# bridged\n',
    });
    await waitFor(() => changes > 0, 'tools/list_changed after the move');
    expect(await names()).not.toContain('run_just_task');
  });

  it('refuses a path outside any git worktree with a clear message on stderr', async () => {
    const plain = await makeTempDir('grove-not-a-repo-');
    const child = spawn(process.execPath, [GROVE, 'bridge', plain], { stdio: 'pipe' });
    cleanups.push(() => void child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/not inside a git work tree|not a git/i);
    expect(stdout).toBe('');
  });
});

/** A `grove bridge` spoken to line by line, as a raw stdio client (which may never read). */
interface RawBridge {
  child: ChildProcessWithoutNullStreams;
  /** Writes messages (objects) or raw lines (strings), one per line. */
  write(lines: (object | string)[]): void;
  /** Starts reading stdout: every answer by id (null: answers to lines without an id). */
  read(): void;
  answers: Map<
    string | number | null,
    { result?: unknown; error?: { code: number; message: string } }[]
  >;
  /** Lines read from stdout. */
  count(): number;
  stderr(): string;
  /** The bridge process's resident memory now, in MB (VmRSS). */
  rssMb(): Promise<number>;
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw-bridge-client', version: '1.0.0' },
  },
};

function rawBridge(worktree: string, dataDir: string, flags: string[] = []): RawBridge {
  const child = spawn(
    process.execPath,
    [GROVE, 'bridge', '--data-dir', dataDir, ...flags, worktree],
    { stdio: 'pipe' },
  );
  cleanups.push(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const answers: RawBridge['answers'] = new Map();
  let lines = 0;
  return {
    child,
    write: (messages) =>
      void child.stdin.write(
        messages.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join('\n') + '\n',
      ),
    read() {
      createInterface({ input: child.stdout }).on('line', (line) => {
        lines++;
        const message = JSON.parse(line) as { id?: string | number | null; result?: unknown };
        if (!('id' in message)) return;
        const id = message.id ?? null;
        answers.set(id, [...(answers.get(id) ?? []), message as never]);
      });
    },
    answers,
    count: () => lines,
    stderr: () => stderr,
    async rssMb() {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
      const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      return kb / 1024;
    },
  };
}

const toolsList = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

/** Samples the bridge's RSS while `until` is false; the highest seen, in MB. */
async function peakRss(
  bridge: RawBridge,
  until: () => boolean,
  description: string,
  timeoutMs: number,
): Promise<number> {
  let peak = 0;
  await waitFor(
    async () => {
      peak = Math.max(peak, await bridge.rssMb());
      return until();
    },
    description,
    timeoutMs,
    200,
  );
  return peak;
}

describe('grove bridge bounds', () => {
  it('answers each bad line with a JSON-RPC error instead of dropping it', async () => {
    const repo = await governedRepo();
    const bridge = rawBridge(repo.root, await makeTempDir('grove-none-'), ['--local']);
    bridge.read();
    bridge.write([
      INITIALIZE,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      '{"jsonrpc":"2.0","id":2,"method":"ping","params":"str"}',
      '[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"tools/list"}]',
      '{"jsonrpc":"2.0","id":5,"method":"ping","__proto__":{"polluted":true}}',
      '{"jsonrpc":"2.0","id":6,"method":"ping","extra":1}',
      'this is not json',
      '{"jsonrpc":"1.0","id":7,"method":"ping"}',
      { jsonrpc: '2.0', id: 8, method: 'ping' },
    ]);
    await waitFor(() => bridge.answers.has(8) && bridge.answers.has(null), 'the answers', 30_000);
    const errorOf = (id: number | null) => bridge.answers.get(id)?.[0]?.error;
    expect(errorOf(2)).toMatchObject({ code: -32602, message: expect.stringMatching(/params/) });
    expect(errorOf(3)).toMatchObject({ code: -32600, message: expect.stringMatching(/batch/) });
    expect(errorOf(4)).toMatchObject({ code: -32600, message: expect.stringMatching(/batch/) });
    expect(errorOf(5)).toMatchObject({
      code: -32600,
      message: expect.stringContaining('__proto__'),
    });
    expect(errorOf(6)).toMatchObject({ code: -32600, message: expect.stringContaining('extra') });
    expect(errorOf(null)).toMatchObject({ code: -32700 });
    expect(errorOf(7)).toMatchObject({ code: -32600, message: expect.stringContaining('2.0') });
    // The session goes on: the good request after them is answered.
    expect(bridge.answers.get(8)).toEqual([{ jsonrpc: '2.0', id: 8, result: {} }]);
  });

  it('stops reading a client that floods bad lines and never reads: their answers are bounded too', async () => {
    const repo = await governedRepo();
    const bridge = rawBridge(repo.root, await makeTempDir('grove-none-'), ['--local', '--verbose']);
    await waitFor(() => bridge.stderr().includes('through this process'), 'the bridge', 60_000);
    // 2 bytes in, ~90 bytes of error answer out: 300,000 lines would be ~27 MB of answers, past
    // the 8 MiB of unread output at which the bridge stops reading.
    const BAD_LINES = 300_000;
    // In writes of 1,000 lines: what the bridge has not read shows as the writes not done.
    bridge.child.stdin.on('error', () => undefined); // EPIPE when the bridge is killed at the end
    for (let index = 0; index < BAD_LINES / 1000; index++) bridge.write(Array(1000).fill('x'));
    let last = -1;
    let still = 0;
    await waitFor(
      () => {
        const unread = bridge.child.stdin.writableLength;
        still = unread > 0 && unread < BAD_LINES * 2 && unread === last ? still + 1 : 0;
        last = unread;
        return still >= 10;
      },
      'the bridge to stop reading',
      120_000,
      200,
    );
    // It read some and stopped with lines left in the client's pipe (before: it read them all,
    // their answers piling up in its memory).
    expect(bridge.child.stdin.writableLength).toBeGreaterThan(0);
    // Reading at last, the client gets an answer for every line (counted here: RawBridge.read
    // keeps answers by id, a list per id, too slow for 300,000 answers without one).
    let answers = 0;
    let parseErrors = 0;
    createInterface({ input: bridge.child.stdout }).on('line', (line) => {
      answers++;
      if ((JSON.parse(line) as { error?: { code?: number } }).error?.code === -32700) parseErrors++;
    });
    await waitFor(() => answers === BAD_LINES, 'every answer', 240_000, 200);
    expect(parseErrors).toBe(BAD_LINES);
    expect(bridge.stderr()).not.toMatch(/error|warn/i);
  }, 600_000);

  it('writes nothing to stderr on a normal start; --verbose says where it serves from', async () => {
    const repo = await governedRepo();
    const dataDir = await makeTempDir('grove-bridge-data-');
    await startServe(repo, dataDir);
    for (const flags of [[], ['--local']]) {
      const quiet = await connectBridge(repo.root, dataDir, {
        quiet: true,
        local: flags.length > 0,
      });
      expect((await quiet.client.listTools()).tools.length).toBeGreaterThan(0);
      expect(quiet.stderr()).toBe('');
    }
    const verbose = await connectBridge(repo.root, dataDir);
    await verbose.client.listTools();
    expect(verbose.stderr()).toContain('through the Grove host');
  });

  for (const mode of ['host', 'local'] as const) {
    it(`stops reading a client that floods and never reads (${mode}): memory stays flat`, async () => {
      const repo = await governedRepo();
      const dataDir = await makeTempDir('grove-bridge-data-');
      if (mode === 'host') await startServe(repo, dataDir);
      const bridge = rawBridge(repo.root, dataDir, ['--verbose']);
      const FLOOD = 12_000;
      bridge.write([
        INITIALIZE,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        ...Array.from({ length: FLOOD }, (_, index) => toolsList(index)),
      ]);
      // The bridge reads until its output backs up, then stops: what it has not read stays in
      // the client's pipe, and its memory stops growing.
      let last = -1;
      let still = 0;
      const peak = await peakRss(
        bridge,
        () => {
          const unread = bridge.child.stdin.writableLength;
          still = unread > 0 && unread === last ? still + 1 : 0;
          last = unread;
          return still >= 10;
        },
        'the bridge to stop reading',
        180_000,
      );
      expect(bridge.child.stdin.writableLength).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(300);
      // Reading at last, the client gets every answer.
      bridge.read();
      await waitFor(() => bridge.answers.size === FLOOD + 1, 'every answer', 240_000, 200);
      expect(
        [...bridge.answers.values()].every((list) => list.length === 1 && list[0]!.result),
      ).toBe(true);
      if (mode === 'host') expect(bridge.stderr()).toContain('through the Grove host');
      expect(bridge.stderr()).not.toMatch(/now serving|aborted|stopped answering/);
    }, 600_000);

    it(`answers 10,000 requests of a client that reads (${mode}) with memory bounded`, async () => {
      const repo = await governedRepo();
      const dataDir = await makeTempDir('grove-bridge-data-');
      if (mode === 'host') await startServe(repo, dataDir);
      const bridge = rawBridge(repo.root, dataDir, ['--verbose']);
      bridge.read();
      bridge.write([INITIALIZE, { jsonrpc: '2.0', method: 'notifications/initialized' }]);
      await waitFor(() => bridge.answers.has('init'), 'the initialize answer', 60_000);
      const REQUESTS = 10_000;
      bridge.write(Array.from({ length: REQUESTS }, (_, index) => toolsList(index)));
      const peak = await peakRss(
        bridge,
        () => bridge.answers.size === REQUESTS + 1,
        'every answer',
        480_000,
      );
      // Serving itself, the bridge is a whole worktree server (the engine's worker threads are
      // isolates of their own) and V8 sizes its young generation for this 24 GiB machine: it
      // peaks at 340-345 MB here whether 10,000 or 25,000 requests come (docs/security.md). What
      // is asserted is the bound, not growth with the number of requests. Through the host it
      // peaked at 280-314 MB over five CI runs of issue 32's stop (the proof of the host on each
      // connection loads node:crypto; V8's heap sizing varies): one bound of 400 MB for both.
      expect(peak).toBeLessThanOrEqual(400);
      const failed = [...bridge.answers.values()].filter(
        (list) => list.length !== 1 || !list[0]!.result,
      );
      expect(failed).toEqual([]);
      // The host's bounds were never taken for its death: the bridge stayed with it.
      if (mode === 'host') expect(bridge.stderr()).toContain('through the Grove host');
      expect(bridge.stderr()).not.toMatch(/now serving|aborted|stopped answering/);
    }, 600_000);
  }
});
