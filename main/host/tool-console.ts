// The tool console: the host's own MCP client of each worktree's server, so the UI (which cannot
// speak MCP itself: CSP connect-src 'self') can list and call tools. One SDK client per worktree,
// over Streamable HTTP to its /mcp with the worktree's Bearer token, created on the first request
// and closed when that server stops, its token or port changes, or the host closes (every server
// stops then). It shows in the worktree's Clients list as "Grove (this window)", never counted as a
// connected client (shared/clients.ts).
import type { Client } from '@modelcontextprotocol/client';
import type { ToolCallResult, ToolInfo } from '../../shared/host-api.ts';
import { GROVE_WINDOW_CLIENT_NAME } from '../../shared/clients.ts';
import { UserError } from '../platform/errors.ts';
import { WorktreeMcpClients, type WorktreeMcpHost } from '../chat/worktree-mcp-clients.ts';

export const TOOL_CONSOLE_CLIENT_NAME = GROVE_WINDOW_CLIENT_NAME;
const CALL_TIMEOUT_MS = 12_000;

/** What the console needs from the host (Host satisfies it). */
export type ToolConsoleHost = WorktreeMcpHost;

export class ToolConsole {
  readonly #clients: WorktreeMcpClients;

  constructor(host: ToolConsoleHost) {
    this.#clients = new WorktreeMcpClients(host, TOOL_CONSOLE_CLIENT_NAME);
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
  close(): Promise<void> {
    return this.#clients.close();
  }

  /** Runs `use` with the worktree's client; every failure is a UserError with the reason. */
  async #withClient<T>(worktreeId: string, use: (client: Client) => Promise<T>): Promise<T> {
    if (this.#clients.closed)
      throw new UserError('the tool console is closed', { code: 'unavailable' });
    const running = this.#clients.runningWorktree(worktreeId);
    if ('problem' in running) throw new UserError(running.problem, { code: 'unavailable' });
    try {
      return await this.#clients.withClient(worktreeId, use);
    } catch (error) {
      throw consoleError(error);
    }
  }
}

function consoleError(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new UserError(`tool console: ${message}`, { code: 'unavailable' });
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
