// mcp-remote (the stdio bridge Claude Desktop uses, run here as a real child process configured like
// the README's Claude Desktop snippet) stays usable across a restart of the whole `grove serve`
// host: the host is stopped with SIGTERM and started again with the same data directory, the
// worktree comes back on the same port with the same token, and a tools/call sent through the
// same mcp-remote process afterwards succeeds.
//
// What mcp-remote does (0.15.x, `--transport sse-only`): when the host stops, the worktree server
// ends its SSE stream; mcp-remote's EventSource reconnects after the `retry:` the server sent
// (500 ms) and keeps retrying while the port is closed. Once the new server answers, the new stream
// brings a new `endpoint` (a new session id) and mcp-remote posts there. We allow a few bounded
// retries of the call (a call sent while the port is still closed fails), as a user would.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { randomFirstPort } from '../main/testing/net.ts';
import { McpRemoteBridge, type JsonRpcMessage } from '../main/testing/mcp-remote-bridge.ts';
import { makeTempDir, makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { startGroveServe, type GroveServe } from './support/grove-serve.ts';
import { isAlive, pidListeningOn, sleep } from './support/mcp-load.ts';

const FILE = 'notes.txt';
const CONTENT = 'hello through the bridge\n';
const CALL_ATTEMPTS = 10;
const ATTEMPT_TIMEOUT_MS = 5_000;

function readFileCall(id: number): [number, string, Record<string, unknown>] {
  return [id, 'tools/call', { name: 'read_file', arguments: { path: FILE } }];
}

function fileContent(response: JsonRpcMessage | undefined): unknown {
  return (response?.result?.['structuredContent'] as { content?: unknown } | undefined)?.content;
}

describe('mcp-remote through a grove serve restart', () => {
  let repo: TempRepo | undefined;
  let dataDir: string | undefined;
  let serve: GroveServe | undefined;
  let bridge: McpRemoteBridge | undefined;
  const workerPids = new Set<number>();

  beforeAll(async () => {
    repo = await makeTempRepo({ [FILE]: CONTENT });
    dataDir = await makeTempDir('grove-reconnect-data-');
  });

  afterAll(async () => {
    await bridge?.stop();
    await serve?.stop();
    await repo?.cleanup();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    for (const pid of workerPids) expect(isAlive(pid)).toBe(false);
  });

  async function startHost(): Promise<GroveServe> {
    const started = await startGroveServe({
      repos: [repo!.root],
      dataDir: dataDir!,
      // Only used the first time: afterwards the port comes from the app database.
      env: { GROVE_FIRST_PORT: String(randomFirstPort()) },
    });
    const pid = await pidListeningOn(started.port('main'));
    if (pid !== undefined) workerPids.add(pid);
    return started;
  }

  test('a tools/call through the same mcp-remote succeeds after the host restarts (same port, same token)', async () => {
    serve = await startHost();
    const { sse, token } = serve.worktree('main');
    bridge = await McpRemoteBridge.start(sse, token);
    const init = await bridge.initialize();
    expect(init?.error, bridge.stderr).toBeUndefined();
    expect(init?.result).toBeDefined();
    expect(fileContent(await bridge.request(...readFileCall(2), 10_000))).toBe(CONTENT);

    await serve.stop();
    const stoppedAt = Date.now();
    serve = await startHost();
    expect(serve.worktree('main').sse).toBe(sse); // same port
    expect(serve.worktree('main').token).toBe(token);
    const hostBackMs = Date.now() - stoppedAt;

    // The same mcp-remote process, with no help from us: retry the call a bounded number of times.
    let id = 100;
    let answered: JsonRpcMessage | undefined;
    const attempts: string[] = [];
    for (let attempt = 0; attempt < CALL_ATTEMPTS && !bridge.exited; attempt++) {
      const response = await bridge.request(...readFileCall(++id), ATTEMPT_TIMEOUT_MS);
      if (fileContent(response) === CONTENT) {
        answered = response;
        break;
      }
      attempts.push(response ? JSON.stringify(response.error ?? response.result) : 'no answer');
      await sleep(500);
    }
    const recoveredMs = Date.now() - stoppedAt;
    console.log(
      `mcp-remote: host back after ${hostBackMs} ms; call answered ${recoveredMs} ms after the stop, ` +
        `after ${attempts.length} failed attempt(s): ${JSON.stringify(attempts)}`,
    );
    expect(bridge.exited, `mcp-remote exited:\n${bridge.stderr}`).toBe(false);
    expect(answered, `no successful call; mcp-remote stderr:\n${bridge.stderr}`).toBeDefined();
    expect(bridge.stderr).not.toContain(token);
  });
});
