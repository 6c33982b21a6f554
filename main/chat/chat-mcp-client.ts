// The chat's MCP client of each worktree's own server: SDK `Client` over Streamable HTTP to the
// worktree's /mcp with its Bearer token, so it shows in the Clients list as "Grove chat" and every
// tool call lands in the Activity log like any other client's. One connection per worktree, made
// on first use; a failure on a cached connection (the server restarted and forgot the session)
// reconnects and re-initializes once. Closed when the server stops or the chat service closes.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { HostEvent } from '../../shared/host-api.ts';
import type { ChatToolResult } from '../../shared/chat.ts';
import type { ConnectionInfo, HostSnapshot } from '../../shared/model.ts';
import { GROVE_VERSION } from '../version.ts';
import type { ModelTool } from './provider.ts';

export const CHAT_CLIENT_NAME = 'Grove chat';
const CONNECT_TIMEOUT_MS = 10_000;
const LIST_TIMEOUT_MS = 12_000;
const CALL_TIMEOUT_MS = 60_000;
/** Tool results beyond this many characters are cut before they reach the model. */
const MAX_RESULT_CHARS = 100_000;

/** What the chat needs from the host (Host satisfies it). */
export interface ChatHostView {
  getConnectionInfo(worktreeId: string): ConnectionInfo;
  snapshot(): HostSnapshot;
  onEvent(listener: (event: HostEvent) => void): () => void;
}

/** A user-facing failure: unknown worktree, stopped server, missing prompt. */
export class ChatUserError extends Error {
  override name = 'ChatUserError';
}

interface Connection {
  url: string;
  token: string;
  transport: StreamableHTTPClientTransport;
  client: Promise<Client>;
}

export interface PromptText {
  /** The prompt's user-role text, joined. */
  text: string;
  description: string | undefined;
}

export class ChatMcpClient {
  readonly #host: ChatHostView;
  readonly #connections = new Map<string, Connection>();
  readonly #unsubscribe: () => void;
  #closed = false;

  constructor(host: ChatHostView) {
    this.#host = host;
    this.#unsubscribe = host.onEvent((event) => this.#onEvent(event));
  }

  /** The server's tools, as the model is offered them. */
  async listTools(worktreeId: string, signal: AbortSignal): Promise<ModelTool[]> {
    const { tools } = await this.#withClient(worktreeId, signal, (client) =>
      client.listTools(undefined, { timeout: LIST_TIMEOUT_MS, signal }),
    );
    return tools.map((tool) => ({
      name: tool.name,
      description: tool.description ?? tool.title ?? tool.name,
      inputSchema: tool.inputSchema as Record<string, unknown>,
    }));
  }

  /**
   * Calls a tool. A tool error (`isError`) or a protocol error (unknown tool, bad arguments) comes
   * back as an error result for the model; only an abort (Stop) rejects.
   */
  async callTool(
    worktreeId: string,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ChatToolResult> {
    const started = performance.now();
    const duration = () => Math.round(performance.now() - started);
    try {
      const result = await this.#withClient(worktreeId, signal, (client) =>
        client.callTool({ name, arguments: args }, { timeout: CALL_TIMEOUT_MS, signal }),
      );
      return {
        isError: result.isError === true,
        text: contentText((result.content ?? []) as Record<string, unknown>[]),
        durationMs: duration(),
      };
    } catch (error) {
      if (signal.aborted) throw error;
      return { isError: true, text: errorMessage(error), durationMs: duration() };
    }
  }

  /** The server's prompt `name`, or undefined if it offers no such prompt. */
  async getPrompt(
    worktreeId: string,
    name: string,
    signal: AbortSignal,
  ): Promise<PromptText | undefined> {
    return this.#withClient(worktreeId, signal, async (client) => {
      if (!client.getServerCapabilities()?.prompts) return undefined;
      const { prompts } = await client.listPrompts(undefined, { timeout: LIST_TIMEOUT_MS, signal });
      if (!prompts.some((prompt) => prompt.name === name)) return undefined;
      const result = await client.getPrompt({ name }, { timeout: LIST_TIMEOUT_MS, signal });
      const text = result.messages
        .filter((message) => message.role === 'user')
        .map((message) => contentText([message.content as Record<string, unknown>]))
        .join('\n\n');
      return { text, description: result.description };
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    await Promise.all([...this.#connections.keys()].map((id) => this.#drop(id)));
  }

  /** Throws a ChatUserError unless the worktree exists and its server runs. */
  requireRunning(worktreeId: string): void {
    const worktree = this.#host
      .snapshot()
      .repos.flatMap((repo) => repo.worktrees)
      .find((w) => w.id === worktreeId);
    if (!worktree) throw new ChatUserError(`unknown worktree id: ${worktreeId}`);
    if (worktree.status.state !== 'running') {
      throw new ChatUserError(
        `The MCP server of ${worktree.branch ?? worktree.path} is not running: start it, then try again.`,
      );
    }
  }

  /**
   * Runs `use` with a connected client. A failure reconnects (re-initializes) once: the server may
   * have restarted and forgotten the session. An abort is never retried.
   */
  async #withClient<T>(
    worktreeId: string,
    signal: AbortSignal,
    use: (client: Client) => Promise<T>,
  ): Promise<T> {
    if (this.#closed) throw new ChatUserError('the chat is closed');
    this.requireRunning(worktreeId);
    const info = this.#host.getConnectionInfo(worktreeId);
    let connection = this.#connections.get(worktreeId);
    if (connection && (connection.url !== info.urls.mcp || connection.token !== info.token)) {
      await this.#drop(worktreeId);
      connection = undefined;
    }
    try {
      return await use(await (connection ?? this.#connect(worktreeId, info)).client);
    } catch (error) {
      if (signal.aborted) throw error;
      await this.#drop(worktreeId);
    }
    this.requireRunning(worktreeId);
    return use(await this.#connect(worktreeId, this.#host.getConnectionInfo(worktreeId)).client);
  }

  #connect(worktreeId: string, info: ConnectionInfo): Connection {
    const client = new Client({ name: CHAT_CLIENT_NAME, version: GROVE_VERSION });
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
      // DELETE the session so the Clients list shows it closed.
      await connection.transport.terminateSession().catch(() => undefined);
      await client.close();
    } catch {
      // It never connected, or its server is gone.
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

/** MCP content blocks → text for the model: text blocks joined, others summarized. */
export function contentText(content: Record<string, unknown>[]): string {
  const pieces = content.map((block) => {
    if (block.type === 'text' && typeof block.text === 'string') return block.text;
    if (block.type === 'resource' && block.resource && typeof block.resource === 'object') {
      const resource = block.resource as { uri?: string; text?: string };
      return resource.text ?? `[resource ${resource.uri ?? ''}]`;
    }
    return `[${String(block.type)} content]`;
  });
  const text = pieces.join('\n');
  return text.length > MAX_RESULT_CHARS
    ? `${text.slice(0, MAX_RESULT_CHARS)}\n[cut: ${text.length - MAX_RESULT_CHARS} more characters]`
    : text;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
