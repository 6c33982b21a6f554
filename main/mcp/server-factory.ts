// The one factory that builds an McpServer for every leg (legacy SSE, legacy Streamable HTTP,
// modern stateless): registers every ToolDefinition with its schemas and annotations and turns
// handler results into `structuredContent` plus the same JSON as text. Cheap and side-effect free:
// the modern leg calls it once per request. Worktree state lives outside it.
import { CLIENT_INFO_META_KEY, McpServer } from '@modelcontextprotocol/server';
import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { ToolError } from '../tools/tool-definition.ts';
import { toolDeadlineMs, type ToolContext, type ToolDefinition } from '../tools/tool-definition.ts';
import { toClientIdentity } from './client-events.ts';
import type { McpClientIdentity, McpEra, McpTransportKind } from './client-events.ts';
import { stableStringify } from './stable-json.ts';

/** Which leg a server instance serves. */
export interface ServerLeg {
  era: McpEra;
  transport: McpTransportKind;
}

/** One finished tool call, as reported to the listener. */
export interface ToolCallRecord {
  tool: string;
  leg: ServerLeg;
  /** Legacy sessions only. */
  sessionId?: string;
  /** Modern requests carry the client's identity in their envelope. */
  envelopeClientInfo?: McpClientIdentity;
  isError: boolean;
  durationMs: number;
  /** Compact JSON of the arguments, cut to ARGUMENTS_SUMMARY_CHARS. */
  argumentsSummary: string;
  /** UTF-8 size of the result text. */
  resultBytes: number;
  /** The message of a failed call. */
  error?: string;
}

/** How much of a call's arguments the activity log keeps. */
export const ARGUMENTS_SUMMARY_CHARS = 300;

/** Compact JSON of a call's arguments, cut with an ellipsis when long. */
export function summarizeArguments(args: unknown): string {
  const json = JSON.stringify(args ?? {}) ?? '{}';
  return json.length <= ARGUMENTS_SUMMARY_CHARS
    ? json
    : `${json.slice(0, ARGUMENTS_SUMMARY_CHARS - 1)}…`;
}

export interface ServerFactoryOptions {
  /** Real path of the worktree root, handed to every tool. */
  root: string;
  tools: readonly ToolDefinition[];
  serverInfo: { name: string; version: string };
  instructions?: string;
  onToolCalled?: (call: ToolCallRecord) => void;
  /** Unexpected failures (a tool throwing something other than ToolError). */
  onError?: (error: Error) => void;
  /** Registers more on each server after the tools (the reconciliation prompts and resources). */
  extendServer?: (server: McpServer, leg: ServerLeg) => void;
  /**
   * While a call runs and its client asked for progress (`_meta.progressToken`), a progress
   * notification is sent this often (default 5 s), so clients that reset their timeout on progress
   * (the 60 s cut-off many have) keep waiting for slow calls.
   */
  progressIntervalMs?: number;
  /** Per-tool deadline overrides in milliseconds (settings; tests), by tool name. */
  deadlinesMs?: Readonly<Record<string, number>>;
}

/** Default interval of the progress heartbeat of running calls. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 5_000;

export type ServerFactory = (leg: ServerLeg) => McpServer;

/**
 * Fills a fresh server's input-schema cache from `cache`, or `cache` from the server. The SDK
 * keeps that cache in a private field (`_toolInputSchemaJson`, SDK 2.4) with no public setter;
 * should the field go away, this does nothing and each server converts for itself, as before.
 */
function shareInputSchemaJson(
  server: McpServer,
  tools: readonly ToolDefinition[],
  cache: Map<string, Record<string, unknown> | undefined>,
): void {
  const internal = (server as unknown as { _toolInputSchemaJson?: unknown })._toolInputSchemaJson;
  if (internal === null || typeof internal !== 'object') return;
  const perServer = internal as Record<string, Record<string, unknown> | undefined>;
  for (const { name } of tools) {
    if (cache.has(name)) perServer[name] = cache.get(name);
    else cache.set(name, server.toolInputSchemaJson(name));
  }
}

/** A successful result: sorted-key JSON as text, and the same value as structuredContent. */
export function toolResult(value: unknown): CallToolResult {
  const text = stableStringify(value);
  return {
    content: [{ type: 'text', text }],
    structuredContent: JSON.parse(text) as Record<string, unknown>,
  };
}

/** A failed call as a result the model can read (`isError: true`), never a protocol error. */
export function toolErrorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

export function createServerFactory(options: ServerFactoryOptions): ServerFactory {
  const { root, tools, serverInfo, instructions, onToolCalled, onError, extendServer } = options;
  const progressIntervalMs = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  /**
   * Each tool's schemas as JSON Schema. The SDK converts them lazily per server: the output schema
   * on a tool's first call, the input schema when the modern HTTP entry checks a call's
   * `Mcp-Param-*` headers. The modern leg builds a server per request, so without these caches
   * every modern call would pay zod's JSON Schema conversion (the largest per-call cost measured).
   * Converted once, then handed to every later server.
   */
  const outputSchemaJson = new Map<string, Record<string, unknown> | undefined>();
  const inputSchemaJson = new Map<string, Record<string, unknown> | undefined>();
  return (leg) => {
    const server = new McpServer(
      { name: serverInfo.name, version: serverInfo.version },
      // logging: clients choose a level (logging/setLevel, or a modern request's _meta level).
      { capabilities: { logging: {} }, ...(instructions === undefined ? {} : { instructions }) },
    );
    for (const tool of tools) {
      const registered = server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.inputSchema,
          outputSchema: tool.outputSchema,
          annotations: { ...tool.annotations },
        },
        async (args: Record<string, unknown>, ctx: ServerContext) => {
          const started = performance.now();
          const progress = requestProgress(ctx, progressIntervalMs);
          let result: CallToolResult;
          const deadlineMs = options.deadlinesMs?.[tool.name] ?? toolDeadlineMs(tool);
          const deadline = callDeadline(tool.name, deadlineMs);
          try {
            const value = await Promise.race([
              tool.handler(args, {
                root,
                signal: AbortSignal.any([ctx.mcpReq.signal, deadline.signal]),
                log: requestLogger(ctx, tool.name),
                ...(progress ? { progress: progress.report } : {}),
              }),
              deadline.expired,
            ]);
            result = toolResult(value);
          } catch (error) {
            if (!(error instanceof ToolError)) {
              onError?.(
                new Error(`tool ${tool.name} failed unexpectedly: ${describeError(error)}`, {
                  cause: error,
                }),
              );
            }
            result = toolErrorResult(describeError(error));
          } finally {
            deadline.clear();
            progress?.stop();
          }
          const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
          onToolCalled?.({
            tool: tool.name,
            leg,
            sessionId: ctx.sessionId,
            envelopeClientInfo: envelopeClientInfo(ctx),
            isError: result.isError === true,
            durationMs: performance.now() - started,
            argumentsSummary: summarizeArguments(args),
            resultBytes: Buffer.byteLength(text),
            ...(result.isError === true ? { error: text } : {}),
          });
          return result;
        },
      );
      if (outputSchemaJson.has(tool.name)) {
        registered.outputSchemaJson = outputSchemaJson.get(tool.name);
      } else {
        outputSchemaJson.set(tool.name, registered.outputSchemaJson);
      }
    }
    shareInputSchemaJson(server, tools, inputSchemaJson);
    extendServer?.(server, leg);
    return server;
  };
}

/**
 * The deadline of one call: `signal` aborts and `expired` rejects with a ToolError when it passes,
 * so a call ends on time even if its handler does not heed the signal (its work is dropped).
 */
function callDeadline(
  toolName: string,
  deadlineMs: number,
): { signal: AbortSignal; expired: Promise<never>; clear(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = new ToolError(
        `${toolName} did not finish within its deadline of ${deadlineMs / 1000} s and was stopped; ` +
          'narrow the request (a smaller path, range or pattern) or try again',
      );
      controller.abort(error);
      reject(error);
    }, deadlineMs);
  });
  expired.catch(() => undefined); // settled by the race, or never looked at
  return { signal: controller.signal, expired, clear: () => clearTimeout(timer) };
}

/**
 * Progress for one call, when its client sent a `progressToken`: `report` sends a
 * `notifications/progress` (progress must grow, so it never goes backwards), and a heartbeat sends
 * one every `intervalMs` ("still working, N s") until `stop`. Failures to send are ignored.
 */
function requestProgress(
  ctx: ServerContext,
  intervalMs: number,
): { report: NonNullable<ToolContext['progress']>; stop(): void } | undefined {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  const started = Date.now();
  let last = 0;
  const send = (progress: number, total?: number, message?: string): void => {
    last = Math.max(last + 1e-3, progress);
    ctx.mcpReq
      .notify({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: last,
          ...(total === undefined ? {} : { total }),
          ...(message === undefined ? {} : { message }),
        },
      })
      .catch(() => undefined);
  };
  const heartbeat = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    send(last + 1, undefined, `still working (${seconds} s)`);
  }, intervalMs);
  heartbeat.unref();
  return { report: send, stop: () => clearInterval(heartbeat) };
}

/**
 * A tool's log function for one call: a `notifications/message` tied to the request, which the SDK
 * sends only at or above the level the client chose (a legacy session's `logging/setLevel`; a
 * modern request's `_meta` log level, none if absent). Failures to send are ignored.
 */
function requestLogger(ctx: ServerContext, logger: string): NonNullable<ToolContext['log']> {
  return (level, message, data) => {
    ctx.mcpReq.log(level, data === undefined ? message : { message, ...data }, logger).catch(() => {
      // The client went away; nothing to tell it.
    });
  };
}

/** The clientInfo a modern request carries in its `_meta` envelope (the SDK types it as `{}`). */
function envelopeClientInfo(ctx: ServerContext): McpClientIdentity | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return toClientIdentity(
    envelope?.[CLIENT_INFO_META_KEY] ?? ctx.mcpReq._meta?.[CLIENT_INFO_META_KEY],
  );
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
