// The one factory that builds an McpServer for every leg (legacy SSE, legacy Streamable HTTP,
// modern stateless): registers every ToolDefinition with its schemas and annotations and turns
// handler results into `structuredContent` plus the same JSON as text. Cheap and side-effect free:
// the modern leg calls it once per request. Worktree state lives outside it.
import { CLIENT_INFO_META_KEY, McpServer } from '@modelcontextprotocol/server';
import type { CallToolResult, RegisteredTool, ServerContext } from '@modelcontextprotocol/server';
import { UserError } from '../platform/errors.ts';
import { stageMark } from '../platform/stage-timings.ts';
import {
  MAX_TASKS_RUNNING,
  toolDeadlineMs,
  type ToolContext,
  type ToolDefinition,
} from '../tools/tool-definition.ts';
import { BRIDGE_HEADER, isBridgedHeader, toClientIdentity } from './client-events.ts';
import type { McpClientIdentity, McpEra, McpTransportKind } from './client-events.ts';
import { toolErrorResult, toolResult } from './tool-results.ts';
import { RefusedArguments, withJsonSchemaConvertedOnce } from './tool-schemas.ts';

export { MAX_TASKS_RUNNING };

/** Which leg a server instance serves. */
export interface ServerLeg {
  era: McpEra;
  /** `stdio`: `grove bridge` serving a worktree in its own process (main/bridge/). */
  transport: McpTransportKind | 'stdio';
}

/** A tool call as it starts. */
export interface ToolCallStart {
  /** Unique within the process: what cancelCall takes. */
  callId: string;
  tool: string;
  leg: ServerLeg;
  /** Legacy sessions only. */
  sessionId?: string;
  /** Modern requests carry the client's identity in their envelope. */
  envelopeClientInfo?: McpClientIdentity;
  /** A modern request that came through `grove bridge` (its BRIDGE_HEADER). */
  bridged?: true;
  /** Compact JSON of the arguments, cut to ARGUMENTS_SUMMARY_CHARS. */
  argumentsSummary: string;
}

/** One finished tool call, as reported to the listener. */
export interface ToolCallRecord {
  callId: string;
  tool: string;
  leg: ServerLeg;
  /** Legacy sessions only. */
  sessionId?: string;
  /** Modern requests carry the client's identity in their envelope. */
  envelopeClientInfo?: McpClientIdentity;
  /** A modern request that came through `grove bridge` (its BRIDGE_HEADER). */
  bridged?: true;
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
  /** A call started (the window lists it as running, with a Cancel button). */
  onToolStarted?: (call: ToolCallStart) => void;
  onToolCalled?: (call: ToolCallRecord) => void;
  /** Unexpected failures (a tool throwing something other than UserError). */
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
  /**
   * Whether a tool is offered now (default: every tool). Every tool is registered on every
   * server; one not offered is disabled there (not listed, calls refused) until `syncTools`
   * finds it offered (opt-in tools such as run_just_task).
   */
  isToolOffered?: (name: string) => boolean;
  /** Most calls running at once on one legacy session (default MAX_CALLS_PER_SESSION). */
  maxCallsPerSession?: number;
  /** Most calls running at once on every server this factory built (default MAX_CALLS_RUNNING). */
  maxCallsRunning?: number;
  /** Most calls waiting for one of those slots (default MAX_CALLS_WAITING). */
  maxCallsWaiting?: number;
  /** Most calls of `runsTask` tools running at once on every server this factory built (default MAX_TASKS_RUNNING). */
  maxTasksRunning?: number;
  /** The name of the client of a legacy session, for ToolContext.clientName. */
  sessionClientName?: (sessionId: string) => string | undefined;
}

/** Default interval of the progress heartbeat of running calls. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 5_000;

/**
 * Most tool calls running at once on one legacy session. Clients send a handful in parallel
 * (Claude Code: a few reads or greps at a time); one call can hold ~25 MB while it builds a 4 MiB
 * answer (read_multiple_files), so a session that sends hundreds at once is refused past this.
 */
export const MAX_CALLS_PER_SESSION = 16;
/**
 * Most tool calls running at once on one worktree server (every session and every modern request):
 * ~25 MB each at worst keeps the process well under a GB however many clients send calls. Calls
 * past it wait for a slot, oldest first (50 clients each sending one call are all served).
 */
export const MAX_CALLS_RUNNING = 32;
/** Most calls waiting for a slot on one worktree server; past it a call is refused at once. */
export const MAX_CALLS_WAITING = 256;
/** How many calls may run and wait at once (defaults: the constants above). */
export type CallBounds = Pick<
  ServerFactoryOptions,
  'maxCallsPerSession' | 'maxCallsRunning' | 'maxCallsWaiting' | 'maxTasksRunning'
>;

/** Builds the server of one leg/session/request; knows every call running on any of them. */
export interface ServerFactory {
  (leg: ServerLeg): McpServer;
  /**
   * Ends a running call now with a UserError carrying `message` (its handler's signal aborts).
   * False when no call has that id (it already finished).
   */
  cancelCall(callId: string, message: string): boolean;
  /**
   * Enables on a server this factory built the tools offered now and disables the others
   * (`isToolOffered`), without notifying anyone; true when something changed. A server built
   * later gets the state of that moment.
   */
  syncTools(server: McpServer): boolean;
}

export function createServerFactory(options: ServerFactoryOptions): ServerFactory {
  const { root, tools, serverInfo, instructions, onToolCalled, onError, extendServer } = options;
  const progressIntervalMs = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  /** Each tool's schemas, converted to JSON Schema once for every server this factory builds. */
  const schemas = new Map(
    tools.map((tool) => [
      tool.name,
      {
        input: withJsonSchemaConvertedOnce(tool.inputSchema, { recordRefusals: true }),
        output: withJsonSchemaConvertedOnce(tool.outputSchema),
      },
    ]),
  );
  /** Running calls by id, each with the control that ends it. */
  const running = new Map<string, CallControl>();
  const maxPerSession = options.maxCallsPerSession ?? MAX_CALLS_PER_SESSION;
  const maxRunning = options.maxCallsRunning ?? MAX_CALLS_RUNNING;
  const maxWaiting = options.maxCallsWaiting ?? MAX_CALLS_WAITING;
  const maxTasks = options.maxTasksRunning ?? MAX_TASKS_RUNNING;
  /** Task runs going on (runsTask tools), counted apart from the call slots. */
  let tasksRunning = 0;
  /** Calls running or waiting on each legacy session, by session id (entries at 0 are dropped). */
  const runningBySession = new Map<string, number>();
  /** Slots of this server taken by running calls, and the calls waiting for one, oldest first. */
  let slotsTaken = 0;
  const waitingForSlot: (() => void)[] = [];
  /**
   * Why a call cannot even wait for a slot (too many on its session, or too many waiting on this
   * server), or undefined. Refused at once: a client past the bound is flooding, and a clear error
   * for that call is what it can act on (it retries once some of its calls finish).
   */
  const refusal = (sessionId: string | undefined, runsTask: boolean): string | undefined => {
    if (runsTask) {
      return tasksRunning >= maxTasks
        ? `too many tasks running at once (${maxTasks}) on this worktree server; wait for one to ` +
            'finish, or stop one (Grove window: Server tab), then try again'
        : undefined;
    }
    if (sessionId !== undefined && (runningBySession.get(sessionId) ?? 0) >= maxPerSession) {
      return (
        `too many calls running at once (${maxPerSession}) on this MCP session; ` +
        'wait for some to finish, then try again'
      );
    }
    if (slotsTaken >= maxRunning && waitingForSlot.length >= maxWaiting) {
      return (
        `too many calls running (${maxRunning}) and waiting (${maxWaiting}) on this worktree ` +
        'server; wait for some to finish, then try again'
      );
    }
    return undefined;
  };
  /** Resolves once the call holds one of the server's slots (at once while one is free). */
  const takeSlot = async (): Promise<void> => {
    if (slotsTaken < maxRunning) {
      slotsTaken++;
      return;
    }
    await new Promise<void>((resolve) => waitingForSlot.push(resolve)); // handed over by a release
  };
  const releaseSlot = (): void => {
    const next = waitingForSlot.shift();
    if (next) next();
    else slotsTaken--;
  };
  const offered = options.isToolOffered ?? (() => true);
  /** Each server's registered tools (for syncTools); dropped with the server. */
  const registrations = new WeakMap<McpServer, Map<string, RegisteredTool>>();
  let callSequence = 0;
  /** The calling client's name: a modern request's envelope, or its legacy session's clientInfo. */
  const clientNameOf = (ctx: ServerContext): string | undefined =>
    envelopeClientInfo(ctx)?.name ??
    (ctx.sessionId === undefined ? undefined : options.sessionClientName?.(ctx.sessionId));
  const build = (leg: ServerLeg): McpServer => {
    const server = new McpServer(
      { name: serverInfo.name, version: serverInfo.version },
      // logging: clients choose a level (logging/setLevel, or a modern request's _meta level).
      { capabilities: { logging: {} }, ...(instructions === undefined ? {} : { instructions }) },
    );
    const registered = new Map<string, RegisteredTool>();
    registrations.set(server, registered);
    for (const tool of tools) {
      const registration = server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: schemas.get(tool.name)?.input ?? tool.inputSchema,
          outputSchema: schemas.get(tool.name)?.output ?? tool.outputSchema,
          annotations: { ...tool.annotations },
        },
        async (args: Record<string, unknown>, ctx: ServerContext) => {
          // Checked again at call time: a server syncTools never saw (a legacy session that
          // skipped notifications/initialized) must not keep a tool the user turned off.
          if (!offered(tool.name)) {
            registration.enabled = false;
            return toolErrorResult(`Tool ${tool.name} is not offered by this server now`);
          }
          stageMark('handler-started'); // GROVE_STAGE_TIMINGS only (benchmarks)
          const started = performance.now();
          const callId = `${process.pid}-c${++callSequence}`;
          const refusedArguments = args instanceof RefusedArguments ? args : undefined;
          const argumentsSummary = summarizeArguments(refusedArguments?.raw ?? args);
          const { sessionId } = ctx;
          /** A call refused before it runs: recorded as every call is, then answered. */
          const refuse = (message: string): CallToolResult => {
            onToolCalled?.({
              callId,
              tool: tool.name,
              leg,
              sessionId,
              ...withEnvelope(ctx),
              isError: true,
              durationMs: performance.now() - started,
              argumentsSummary,
              resultBytes: Buffer.byteLength(message),
              error: message,
            });
            return toolErrorResult(message);
          };
          if (refusedArguments !== undefined) {
            return refuse(
              `Input validation error: Invalid arguments for tool ${tool.name}: ` +
                refusedArguments.issues,
            );
          }
          const runsTask = tool.runsTask === true;
          const refused = refusal(sessionId, runsTask);
          if (refused !== undefined) return refuse(refused);
          if (runsTask) tasksRunning++;
          else {
            if (sessionId !== undefined) {
              runningBySession.set(sessionId, (runningBySession.get(sessionId) ?? 0) + 1);
            }
            await takeSlot();
          }
          const progress = requestProgress(ctx, progressIntervalMs);
          let result: CallToolResult;
          const deadlineMs = options.deadlinesMs?.[tool.name] ?? toolDeadlineMs(tool);
          const control = callControl(tool.name, deadlineMs);
          running.set(callId, control);
          options.onToolStarted?.({
            callId,
            tool: tool.name,
            leg,
            ...(ctx.sessionId === undefined ? {} : { sessionId: ctx.sessionId }),
            ...withEnvelope(ctx),
            argumentsSummary,
          });
          try {
            const value = await Promise.race([
              tool.handler(args, {
                root,
                signal: AbortSignal.any([ctx.mcpReq.signal, control.signal]),
                log: requestLogger(ctx, tool.name),
                callId,
                ...withClientName(clientNameOf(ctx)),
                ...(progress ? { progress: progress.report } : {}),
              }),
              control.ended,
            ]);
            stageMark('handler-done');
            result = await toolResult(value, tool);
            stageMark('result-built');
          } catch (error) {
            if (!(error instanceof UserError)) {
              onError?.(
                new Error(`tool ${tool.name} failed unexpectedly: ${describeError(error)}`, {
                  cause: error,
                }),
              );
            }
            result = toolErrorResult(describeError(error));
          } finally {
            running.delete(callId);
            if (runsTask) tasksRunning--;
            else releaseSlot();
            if (!runsTask && sessionId !== undefined) {
              const left = (runningBySession.get(sessionId) ?? 1) - 1;
              if (left > 0) runningBySession.set(sessionId, left);
              else runningBySession.delete(sessionId);
            }
            control.clear();
            progress?.stop();
          }
          const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
          onToolCalled?.({
            callId,
            tool: tool.name,
            leg,
            sessionId: ctx.sessionId,
            ...withEnvelope(ctx),
            isError: result.isError === true,
            durationMs: performance.now() - started,
            argumentsSummary,
            resultBytes: Buffer.byteLength(text),
            ...(result.isError === true ? { error: text } : {}),
          });
          return result;
        },
      );
      registration.enabled = offered(tool.name);
      registered.set(tool.name, registration);
    }
    extendServer?.(server, leg);
    return server;
  };
  return Object.assign(build, {
    cancelCall(callId: string, message: string): boolean {
      const control = running.get(callId);
      if (!control) return false;
      control.end(new UserError(message, { code: 'cancelled' }));
      return true;
    },
    syncTools(server: McpServer): boolean {
      let changed = false;
      for (const [name, registration] of registrations.get(server) ?? []) {
        const enabled = offered(name);
        if (registration.enabled !== enabled) {
          registration.enabled = enabled;
          changed = true;
        }
      }
      return changed;
    },
  });
}

function withClientName(name: string | undefined): { clientName?: string } {
  return name === undefined ? {} : { clientName: name };
}

/** A modern request's identity: the envelope's clientInfo, and whether it came through the bridge. */
function withEnvelope(ctx: ServerContext): {
  envelopeClientInfo?: McpClientIdentity;
  bridged?: true;
} {
  const identity = envelopeClientInfo(ctx);
  const bridged = isBridgedHeader(ctx.http?.req?.headers.get(BRIDGE_HEADER));
  return {
    ...(identity === undefined ? {} : { envelopeClientInfo: identity }),
    ...(bridged ? { bridged } : {}),
  };
}

/** How one running call is ended: by its deadline, or by cancelCall. */
interface CallControl {
  /** Aborts when the call is ended (handed to the handler with the client's own signal). */
  signal: AbortSignal;
  /** Rejects with the reason when the call is ended, so it ends even if the handler does not. */
  ended: Promise<never>;
  end(reason: UserError): void;
  clear(): void;
}

/**
 * The control of one call: ended with a UserError when its deadline passes or when someone calls
 * `end`; its handler's signal aborts, and the call's result is that error even if the handler does
 * not heed the signal (its work is dropped).
 */
function callControl(toolName: string, deadlineMs: number): CallControl {
  const controller = new AbortController();
  let reject: (reason: UserError) => void = () => undefined;
  const ended = new Promise<never>((_resolve, fail) => {
    reject = fail;
  });
  ended.catch(() => undefined); // settled by the race, or never looked at
  const end = (reason: UserError): void => {
    if (controller.signal.aborted) return;
    controller.abort(reason);
    reject(reason);
  };
  const timer = setTimeout(
    () =>
      end(
        new UserError(
          `${toolName} did not finish within its deadline of ${deadlineMs / 1000} s and was ` +
            'stopped; narrow the request (a smaller path, range or pattern) or try again',
          { code: 'timed-out' },
        ),
      ),
    deadlineMs,
  );
  return { signal: controller.signal, ended, end, clear: () => clearTimeout(timer) };
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
