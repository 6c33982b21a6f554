// The chat's MCP client of each worktree's own server: SDK `Client` over Streamable HTTP to the
// worktree's /mcp with its Bearer token, so it shows in the Clients list as "Grove chat" and every
// tool call lands in the Activity log like any other client's. One connection per worktree, made
// on first use; a failure on a cached connection (the server restarted and forgot the session)
// reconnects and re-initializes once. Closed when the server stops or the chat service closes.
import { UserError } from '../platform/errors.ts';
import type { Client } from '@modelcontextprotocol/client';
import type { HostEvent } from '../../shared/host-api.ts';
import type { ChatToolResult } from '../../shared/chat.ts';
import type { ConnectionInfo, HostSnapshot } from '../../shared/model.ts';
import { WorktreeMcpClients } from './worktree-mcp-clients.ts';
import type { ModelTool } from './provider.ts';

export const CHAT_CLIENT_NAME = 'Grove chat';
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

export interface PromptText {
  /** The prompt's user-role text, joined. */
  text: string;
  description: string | undefined;
}

export class ChatMcpClient {
  readonly #clients: WorktreeMcpClients;

  constructor(host: ChatHostView) {
    this.#clients = new WorktreeMcpClients(host, CHAT_CLIENT_NAME);
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

  close(): Promise<void> {
    return this.#clients.close();
  }

  /** Throws a UserError unless the worktree exists and its server runs. */
  requireRunning(worktreeId: string): void {
    const running = this.#clients.runningWorktree(worktreeId);
    if ('problem' in running)
      throw new UserError(`${capitalize(running.problem)}.`, { code: 'unavailable' });
  }

  /**
   * Runs `use` with the worktree's client; a failure on a reused client (the server restarted and
   * forgot the session) reconnects and re-initializes once. An abort is never retried.
   */
  async #withClient<T>(
    worktreeId: string,
    signal: AbortSignal,
    use: (client: Client) => Promise<T>,
  ): Promise<T> {
    if (this.#clients.closed) throw new UserError('the chat is closed', { code: 'unavailable' });
    this.requireRunning(worktreeId);
    return this.#clients.withClient(worktreeId, use, signal);
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
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
