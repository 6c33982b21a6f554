// The shape of one MCP tool, defined once: name, title, description, input and output schemas,
// annotations and handler. The MCP server registers every definition on every session (all
// transports); the UI's tool console and docs/tools.md read the same list.
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/server';

/** MCP log levels, least to most severe (RFC 5424 names). */
export type ToolLogLevel =
  'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** What a tool handler knows about the worktree it serves. */
export interface ToolContext {
  /** Real (symlink-resolved) absolute path of the worktree root. Tools never read outside it. */
  readonly root: string;
  /** Aborted when the client cancels the call or goes away. */
  readonly signal: AbortSignal;
  /**
   * Sends a log message about this call to the calling client, if it asked for that level
   * (`logging/setLevel` on a legacy session, the request's `_meta` log level on a modern one).
   * Never throws. Absent outside the MCP server (tests, scripts).
   */
  readonly log?: (level: ToolLogLevel, message: string, data?: Record<string, unknown>) => void;
  /**
   * Reports progress of a long call to its client, if it asked for progress (`_meta.progressToken`).
   * Calls also get a heartbeat every few seconds without this; use it when the tool knows more
   * (`progress` of `total`, with a message). Never throws. Absent when the client did not ask.
   */
  readonly progress?: (progress: number, total?: number, message?: string) => void;
  /** The server's id of this call (what the window's Cancel and a task's Stop name). */
  readonly callId?: string;
  /** Who made the call, as the client said (`clientInfo`), when known. */
  readonly clientName?: string;
}

/** A refusal a model can act on: the one user-facing error type (main/platform/errors.ts). */

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition<
  In extends z.ZodObject = z.ZodObject,
  Out extends z.ZodObject = z.ZodObject,
> {
  name: string;
  title: string;
  description: string;
  inputSchema: In;
  outputSchema: Out;
  annotations: ToolAnnotations;
  /**
   * How long one call may run before it ends with an error (default DEFAULT_TOOL_DEADLINE_MS).
   * The handler's signal aborts then; a handler that does not stop is left behind, its result
   * dropped.
   */
  deadlineMs?: number;
  /**
   * The call runs a program for the client (run_just_task): it counts against the server's task
   * bound (MAX_TASKS_RUNNING) instead of the call bounds, so a task
   * that runs for minutes never holds a slot a read needs.
   */
  runsTask?: boolean;
  /**
   * How to ask for less, told when an answer is over MAX_ANSWER_BYTES (main/mcp/tool-results.ts)
   * and refused: "leave big files out with exclude_patterns …". Default: narrow the arguments.
   */
  whenAnswerTooBig?: string;
  /** Returns the structured result; throws UserError for a refusal. */
  handler(args: z.infer<In>, ctx: ToolContext): Promise<z.infer<Out>>;
}

/**
 * Most task runs (`runsTask` tools: run_just_task) at once on one worktree server, every client
 * together (main/mcp/server-factory.ts). Apart from the call bounds: a dev server or a watcher is
 * a normal recipe and may run for its whole deadline, so tasks never take the slots reads need;
 * past this a task is refused at once (waiting could mean waiting ten minutes).
 */
export const MAX_TASKS_RUNNING = 8;

/** The deadline of a tool call unless its definition says otherwise. */
export const DEFAULT_TOOL_DEADLINE_MS = 60_000;

/** A tool's deadline, in milliseconds. */
export function toolDeadlineMs(tool: Pick<ToolDefinition, 'deadlineMs'>): number {
  return tool.deadlineMs ?? DEFAULT_TOOL_DEADLINE_MS;
}

/** Annotations shared by every read-only tool that stays inside the worktree. */
export const readOnlyLocal: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Helps TypeScript infer a definition's schema types while storing it in a plain list. */
export function defineTool<In extends z.ZodObject, Out extends z.ZodObject>(
  definition: ToolDefinition<In, Out>,
): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

/**
 * `schema` or null, in JSON Schema as `anyOf` [schema, null]: zod's `.nullable()` on a string
 * emits `type: ["string", "null"]`, which strict clients (Gemini, OpenAI function calling) reject.
 */
export function orNull<T extends z.ZodType>(schema: T) {
  return z.union([schema, z.literal(null)]);
}

/** Registers more on an MCP server besides the tools (the reconciliation prompts and resources). */
export type ServerExtension = (server: McpServer) => void;

/**
 * What every MCP server of a worktree registers: its tools and an extension. Loaded with the
 * listener's MCP routes on the first MCP request (McpListenerOptions.loadServerParts), not at
 * start: the tools' zod schemas, and the SDK the extension imports, are memory a worktree process
 * no client has called does without (docs/performance.md, idle memory).
 */
export interface ServerParts {
  tools: readonly ToolDefinition[];
  extendServer?: ServerExtension;
}

/** The change notifications a listener can send to its clients. */
export interface ListenerNotifier {
  /** `notifications/resources/updated` for one resource (a spec file changed on disk). */
  resourceUpdated(uri: string): void;
  /** `notifications/resources/list_changed` (a spec file added or removed). */
  resourcesChanged(): void;
  /** `notifications/tools/list_changed`. */
  toolsChanged(): void;
}
