// The tool console: the host's own MCP client of each worktree's server, so the UI (which cannot
// speak MCP itself: CSP connect-src 'self') can list and call tools. One SDK client per worktree,
// over Streamable HTTP to its /mcp with the worktree's Bearer token, created on the first request
// and closed when that server stops, its token or port changes, or the host closes (every server
// stops then). It shows in the worktree's Clients list as "Grove tool console".
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { HostEvent, ToolCallResult, ToolInfo } from '../../shared/host-api.ts';
import type { ConnectionInfo, HostSnapshot } from '../../shared/model.ts';
import { GROVE_VERSION } from '../version.ts';
import { HostCommandError } from './host.ts';

export const TOOL_CONSOLE_CLIENT_NAME = 'Grove tool console';
const CONNECT_TIMEOUT_MS = 10_000;
const CALL_TIMEOUT_MS = 12_000;

/** What the console needs from the host (Host satisfies it). */
export interface ToolConsoleHost {
  getConnectionInfo(worktreeId: string): ConnectionInfo;
  snapshot(): HostSnapshot;
  onEvent(listener: (event: HostEvent) => void): () => void;
}

interface Connection {
  url: string;
  token: string;
  transport: StreamableHTTPClientTransport;
  client: Promise<Client>;
}

export class ToolConsole {
  readonly #host: ToolConsoleHost;
  readonly #connections = new Map<string, Connection>();
  readonly #unsubscribe: () => void;
  #closed = false;

  constructor(host: ToolConsoleHost) {
    this.#host = host;
    this.#unsubscribe = host.onEvent((event) => this.#onEvent(event));
  }

  async listTools(worktreeId: string): Promise<ToolInfo[]> {
    const { tools } = await this.#withClient(worktreeId, (client) =>
      client.listTools(undefined, { timeout: CALL_TIMEOUT_MS }),
    );
    return tools.map((tool) => ({
      name: tool.name,
      ...(tool.title === undefined ? {} : { title: tool.title }),
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: tool.inputSchema as Record<string, unknown>,
      ...(tool.outputSchema === undefined
        ? {}
        : { outputSchema: tool.outputSchema as Record<string, unknown> }),
      ...(tool.annotations === undefined
        ? {}
        : { annotations: tool.annotations as Record<string, unknown> }),
    }));
  }

  async callTool(
    worktreeId: string,
    name: string,
    args: Record<string, unknown>,
  ): Promise<ToolCallResult> {
    const started = performance.now();
    const result = await this.#withClient(worktreeId, (client) =>
      client.callTool({ name, arguments: args }, { timeout: CALL_TIMEOUT_MS }),
    );
    return {
      isError: result.isError === true,
      content: (result.content ?? []) as Record<string, unknown>[],
      ...(result.structuredContent === undefined
        ? {}
        : { structuredContent: result.structuredContent as Record<string, unknown> }),
      durationMs: Math.round(performance.now() - started),
    };
  }

  /** Closes every client and stops following the host. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    await Promise.all([...this.#connections.keys()].map((id) => this.#drop(id)));
  }

  /**
   * Runs `use` with a connected client. A cached client that fails (its server restarted and
   * forgot the session) is replaced once; a fresh client's failure is reported as it is.
   */
  async #withClient<T>(worktreeId: string, use: (client: Client) => Promise<T>): Promise<T> {
    if (this.#closed) throw new HostCommandError('the tool console is closed');
    const worktree = this.#host
      .snapshot()
      .repos.flatMap((repo) => repo.worktrees)
      .find((w) => w.id === worktreeId);
    if (!worktree) throw new HostCommandError(`unknown worktree id: ${worktreeId}`);
    if (worktree.status.state !== 'running') {
      throw new HostCommandError(
        `the server of ${worktree.branch ?? worktree.path} is not running; start it first`,
      );
    }
    const info = this.#host.getConnectionInfo(worktreeId);
    let connection = this.#connections.get(worktreeId);
    if (connection && (connection.url !== info.urls.mcp || connection.token !== info.token)) {
      await this.#drop(worktreeId);
      connection = undefined;
    }
    const reused = connection !== undefined;
    try {
      return await use(await (connection ?? this.#connect(worktreeId, info)).client);
    } catch (error) {
      await this.#drop(worktreeId);
      if (!reused) throw consoleError(error);
    }
    try {
      return await use(await this.#connect(worktreeId, info).client);
    } catch (error) {
      await this.#drop(worktreeId);
      throw consoleError(error);
    }
  }

  #connect(worktreeId: string, info: ConnectionInfo): Connection {
    const client = new Client({ name: TOOL_CONSOLE_CLIENT_NAME, version: GROVE_VERSION });
    const transport = new StreamableHTTPClientTransport(new URL(info.urls.mcp), {
      requestInit: { headers: { Authorization: `Bearer ${info.token}` } },
    });
    const connection: Connection = {
      url: info.urls.mcp,
      token: info.token,
      transport,
      client: client.connect(transport, { timeout: CONNECT_TIMEOUT_MS }).then(() => client),
    };
    connection.client.catch(() => undefined); // reported to whoever awaits it
    this.#connections.set(worktreeId, connection);
    return connection;
  }

  async #drop(worktreeId: string): Promise<void> {
    const connection = this.#connections.get(worktreeId);
    if (!connection) return;
    this.#connections.delete(worktreeId);
    try {
      const client = await connection.client;
      // DELETE the session, so the server's Clients list shows it closed (close() alone does not).
      await connection.transport.terminateSession().catch(() => undefined);
      await client.close();
    } catch {
      // It never connected, or its server is already gone.
    }
  }

  #onEvent(event: HostEvent): void {
    if (event.type === 'worktree-changed') {
      if (event.worktree.status.state !== 'running') void this.#drop(event.worktree.id);
    } else if (event.type === 'snapshot') {
      const running = new Set(
        event.snapshot.repos
          .flatMap((repo) => repo.worktrees)
          .filter((w) => w.status.state === 'running')
          .map((w) => w.id),
      );
      for (const id of this.#connections.keys()) if (!running.has(id)) void this.#drop(id);
    }
  }
}

function consoleError(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new HostCommandError(`tool console: ${message}`);
}

const consoles = new WeakMap<ToolConsoleHost, ToolConsole>();

/** The one tool console of a host, created on first use. */
export function toolConsoleFor(host: ToolConsoleHost): ToolConsole {
  let found = consoles.get(host);
  if (!found) {
    found = new ToolConsole(host);
    consoles.set(host, found);
  }
  return found;
}
