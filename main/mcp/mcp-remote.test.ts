// mcp-remote (the bridge Claude Desktop uses) as a real child process, configured exactly like the
// generated Claude Desktop snippet: `--transport sse-only --header "Authorization:${AUTH}"` with
// AUTH in its environment. We speak newline-delimited JSON-RPC on its stdin/stdout.
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  expectedEchoText,
  startTestListener,
  TEST_TOKEN,
  waitUntil,
  withTimeout,
} from './mcp-test-support.ts';
import type { TestListener } from './mcp-test-support.ts';

const require = createRequire(import.meta.url);
const MCP_REMOTE = path.join(
  path.dirname(require.resolve('mcp-remote/package.json')),
  'dist',
  'proxy.js',
);

interface JsonRpcResponse {
  id?: number | string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** A running mcp-remote with a line-oriented JSON-RPC conversation over stdio. */
class StdioPeer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly responses = new Map<number | string, JsonRpcResponse>();
  stderr = '';
  #buffer = '';

  constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let newline: number;
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, newline).trim();
        this.#buffer = this.#buffer.slice(newline + 1);
        if (!line) continue;
        const message = JSON.parse(line) as JsonRpcResponse;
        if (message.id !== undefined) this.responses.set(message.id, message);
      }
    });
    child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  async request(
    id: number,
    method: string,
    params: Record<string, unknown>,
    timeoutMs = 20_000,
  ): Promise<JsonRpcResponse> {
    this.send({ jsonrpc: '2.0', id, method, params });
    await waitUntil(
      () => this.responses.has(id) || this.child.exitCode !== null,
      timeoutMs,
      `mcp-remote answer to ${method}; stderr so far:\n${this.stderr}`,
    );
    const response = this.responses.get(id);
    if (!response) throw new Error(`mcp-remote exited (${this.child.exitCode}):\n${this.stderr}`);
    return response;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    await withTimeout(exited, 5_000, 'mcp-remote exit').catch(() => {
      this.child.kill('SIGKILL');
    });
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function startMcpRemote(server: TestListener, token: string): Promise<StdioPeer> {
  const configDir = await mkdtemp(path.join(tmpdir(), 'grove-mcp-remote-'));
  cleanups.push(() => rm(configDir, { recursive: true, force: true }));
  const child = spawn(
    process.execPath,
    [
      MCP_REMOTE,
      `http://127.0.0.1:${server.port}/sse`,
      '--transport',
      'sse-only',
      '--header',
      'Authorization:${AUTH}',
    ],
    {
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: configDir,
        MCP_REMOTE_CONFIG_DIR: configDir,
        AUTH: `Bearer ${token}`,
        NO_PROXY: '127.0.0.1,localhost',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const peer = new StdioPeer(child);
  cleanups.push(() => peer.stop());
  return peer;
}

describe('mcp-remote --transport sse-only (Claude Desktop bridge)', () => {
  it('initializes, lists tools and calls them', async () => {
    const server = await startTestListener();
    cleanups.push(() => server.close());
    const peer = await startMcpRemote(server, TEST_TOKEN);

    const init = await peer.request(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'claude-desktop-test', version: '0.0.1' },
    });
    expect(init.error).toBeUndefined();
    expect(init.result?.['serverInfo']).toMatchObject({ name: 'grove-test-server' });
    peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

    const list = await peer.request(2, 'tools/list', {});
    const tools = (list.result?.['tools'] ?? []) as { name: string; annotations?: unknown }[];
    expect(tools.map((tool) => tool.name)).toEqual(['echo', 'fail', 'crash', 'wait']);
    expect(tools[0]?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });

    const call = await peer.request(3, 'tools/call', {
      name: 'echo',
      arguments: { message: 'via bridge' },
    });
    expect(call.result).toMatchObject({
      content: [{ type: 'text', text: expectedEchoText('via bridge', '/tmp/grove-test-root') }],
      structuredContent: { zeta: 'via bridge' },
    });

    const failed = await peer.request(4, 'tools/call', { name: 'fail', arguments: {} });
    expect(failed.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'path escapes the worktree: ../x' }],
    });

    // The session is listed with the bridge's own name appended to the client's.
    const opened = server.events.filter((event) => event.type === 'session-opened');
    expect(opened.length).toBeGreaterThanOrEqual(1);
    expect(opened.at(-1)).toMatchObject({
      transport: 'sse',
      clientInfo: { name: expect.stringContaining('claude-desktop-test') },
    });
    expect(peer.stderr).not.toContain(TEST_TOKEN);
  });

  it('gets a 403 with a readable reason for a wrong token, never OAuth', async () => {
    const server = await startTestListener();
    cleanups.push(() => server.close());
    const peer = await startMcpRemote(server, 'wrong-token');
    const exited = new Promise<number | null>((resolve) => peer.child.once('exit', resolve));
    peer.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'claude-desktop-test', version: '0.0.1' },
      },
    });
    await withTimeout(exited, 20_000, 'mcp-remote gives up').catch(() => undefined);
    expect(peer.stderr).toContain('403');
    expect(peer.stderr).not.toMatch(/Authentication required|authorization server/i);
    expect(server.events.filter((event) => event.type === 'session-opened')).toEqual([]);
  });
});
