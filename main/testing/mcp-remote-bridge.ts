// Test fixture: mcp-remote (the stdio bridge Claude Desktop uses) as a real child process,
// configured like the generated Claude Desktop snippet — `URL --transport sse-only --header
// "Authorization:${AUTH}"` with AUTH in its environment and its config dir in a temp folder — and
// a newline-delimited JSON-RPC conversation on its stdin/stdout.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const MCP_REMOTE = path.join(
  path.dirname(require.resolve('mcp-remote/package.json')),
  'dist',
  'proxy.js',
);

export interface JsonRpcMessage {
  id?: number | string;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

export class McpRemoteBridge {
  readonly child: ChildProcessWithoutNullStreams;
  /** Responses by request id (server-to-client requests and notifications are not kept). */
  readonly responses = new Map<number | string, JsonRpcMessage>();
  stderr = '';
  readonly #configDir: string;
  #buffer = '';

  private constructor(child: ChildProcessWithoutNullStreams, configDir: string) {
    this.child = child;
    this.#configDir = configDir;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let newline: number;
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, newline).trim();
        this.#buffer = this.#buffer.slice(newline + 1);
        if (!line) continue;
        const message = JSON.parse(line) as JsonRpcMessage;
        if (message.id !== undefined && message.method === undefined) {
          this.responses.set(message.id, message);
        }
      }
    });
    child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
  }

  /** Starts mcp-remote against `sseUrl`, sending `Authorization: Bearer <token>`. */
  static async start(sseUrl: string, token: string): Promise<McpRemoteBridge> {
    const configDir = await mkdtemp(path.join(tmpdir(), 'grove-mcp-remote-'));
    const child = spawn(
      process.execPath,
      [MCP_REMOTE, sseUrl, '--transport', 'sse-only', '--header', 'Authorization:${AUTH}'],
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
    return new McpRemoteBridge(child, configDir);
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Sends a request; resolves with its response, or undefined if none came in time (or it exited). */
  async request(
    id: number,
    method: string,
    params: Record<string, unknown>,
    timeoutMs = 20_000,
  ): Promise<JsonRpcMessage | undefined> {
    this.send({ jsonrpc: '2.0', id, method, params });
    const deadline = Date.now() + timeoutMs;
    while (!this.responses.has(id) && !this.exited && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.responses.get(id);
  }

  /** Sends `initialize` (and `notifications/initialized` once answered); returns the response. */
  async initialize(clientName = 'claude-desktop-test'): Promise<JsonRpcMessage | undefined> {
    const response = await this.request(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: clientName, version: '0.0.1' },
    });
    if (response?.result) this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return response;
  }

  /** Ends the process (SIGTERM, then SIGKILL after 5 s) and removes its config dir. */
  async stop(): Promise<void> {
    if (!this.exited) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(this.#configDir, { recursive: true, force: true });
  }
}
