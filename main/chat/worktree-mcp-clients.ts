// The host's own MCP clients of worktree servers, one per worktree for each purpose (the tool
// console, the chat): SDK `Client` over Streamable HTTP to the worktree's /mcp with its Bearer
// token, made on first use, so each shows in the Clients list under its own name. A client is
// replaced when the worktree's URL or token changes, and closed (its session DELETEd, so the list
// shows it closed) when that server stops or the pool closes. A failure on a reused client (the
// server restarted and forgot the session) reconnects and re-initializes once.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { HostEvent } from '../../shared/host-api.ts';
import type { ConnectionInfo, HostSnapshot, WorktreeState } from '../../shared/model.ts';
import { GROVE_VERSION } from '../platform/version.ts';

const CONNECT_TIMEOUT_MS = 10_000;

/** What the pool needs from the host (Host satisfies it). */
export interface WorktreeMcpHost {
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

export class WorktreeMcpClients {
  readonly #host: WorktreeMcpHost;
  readonly #clientName: string;
  readonly #connections = new Map<string, Connection>();
  readonly #unsubscribe: () => void;
  #closed = false;

  constructor(host: WorktreeMcpHost, clientName: string) {
    this.#host = host;
    this.#clientName = clientName;
    this.#unsubscribe = host.onEvent((event) => this.#onEvent(event));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The worktree, or a sentence saying why its server cannot be used now. */
  runningWorktree(worktreeId: string): { worktree: WorktreeState } | { problem: string } {
    const worktree = this.#host
      .snapshot()
      .repos.flatMap((repo) => repo.worktrees)
      .find((w) => w.id === worktreeId);
    if (!worktree) return { problem: `unknown worktree id: ${worktreeId}` };
    if (worktree.status.state !== 'running') {
      return {
        problem: `the MCP server of ${worktree.branch ?? worktree.path} is not running: start it, then try again`,
      };
    }
    return { worktree };
  }

  /**
   * Runs `use` with a connected client. When a reused client fails (and `signal` was not
   * aborted), it is replaced and `use` runs once more on a fresh one.
   */
  async withClient<T>(
    worktreeId: string,
    use: (client: Client) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const info = this.#host.getConnectionInfo(worktreeId);
    let connection = this.#connections.get(worktreeId);
    if (connection && (connection.url !== info.urls.mcp || connection.token !== info.token)) {
      await this.drop(worktreeId);
      connection = undefined;
    }
    const reused = connection !== undefined;
    try {
      return await use(await (connection ?? this.#connect(worktreeId, info)).client);
    } catch (error) {
      await this.drop(worktreeId);
      if (!reused || signal?.aborted) throw error;
    }
    try {
      return await use(
        await this.#connect(worktreeId, this.#host.getConnectionInfo(worktreeId)).client,
      );
    } catch (error) {
      await this.drop(worktreeId);
      throw error;
    }
  }

  /** Closes one worktree's client (DELETEs its session first). */
  async drop(worktreeId: string): Promise<void> {
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

  /** Closes every client and stops following the host. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    await Promise.all([...this.#connections.keys()].map((id) => this.drop(id)));
  }

  #connect(worktreeId: string, info: ConnectionInfo): Connection {
    const client = new Client({ name: this.#clientName, version: GROVE_VERSION });
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

  #onEvent(event: HostEvent): void {
    if (event.type === 'worktree-changed') {
      if (event.worktree.status.state !== 'running') void this.drop(event.worktree.id);
    } else if (event.type === 'snapshot') {
      const running = new Set(
        event.snapshot.repos
          .flatMap((repo) => repo.worktrees)
          .filter((w) => w.status.state === 'running')
          .map((w) => w.id),
      );
      for (const id of this.#connections.keys()) if (!running.has(id)) void this.drop(id);
    }
  }
}
