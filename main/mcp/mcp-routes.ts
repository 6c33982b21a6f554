// The MCP side of one worktree's listener: the server factory, the modern stateless handler, the
// legacy legs and the notifications to clients. mcp-listener.ts loads this module (and with it the
// MCP SDK, which builds hundreds of zod schemas as it loads) on the first request for /sse,
// /messages or /mcp, so a worktree process no client has called stays small
// (docs/performance.md, idle memory). Everything before the route (Host, Origin and token checks,
// body, /healthz) is the listener's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  isLegacyRequest,
} from '@modelcontextprotocol/server';
import type {
  LoggingLevel,
  McpHandlerRequestOptions,
  McpServer,
} from '@modelcontextprotocol/server';
import type { toNodeHandler } from '@modelcontextprotocol/node';
import type {
  ListenerNotifier,
  ServerExtension,
  ToolDefinition,
} from '../tools/tool-definition.ts';
import { BRIDGE_HEADER, isBridgedHeader, toClientIdentity } from './client-events.ts';
import type { McpClientEvent, McpClientIdentity, McpTransportKind } from './client-events.ts';
import type { LegacySessionRegistry } from './legacy-sessions.ts';
import { createServerFactory } from './server-factory.ts';
import type { CallBounds, ToolCallRecord, ToolCallStart } from './server-factory.ts';
import { headersOnlyRequest } from './http-answers.ts';
import { LegacyLegs, type LiveSession } from './legacy-legs.ts';
import { loadNodeAdapter } from './node-adapter.ts';
import { capUnreadOutput } from './sse-transport.ts';

export interface McpRoutesOptions {
  root: string;
  tools: readonly ToolDefinition[];
  serverInfo: { name: string; version: string };
  instructions?: string | undefined;
  extendServer?: ServerExtension | undefined;
  isToolOffered?: ((name: string) => boolean) | undefined;
  progressIntervalMs?: number | undefined;
  callBounds?: CallBounds | undefined;
  keepAliveMs: number;
  maxBodyBytes: number;
  /** The listener's legacy sessions (it checks SSE session ids before the token, and reaps). */
  sessions: LegacySessionRegistry<LiveSession>;
  emit: (event: McpClientEvent) => void;
  reportError: (error: unknown) => void;
}

/** The routes and notifications the listener hands over to once this module is loaded. */
export interface McpRoutes {
  /** `GET /sse`. */
  openSse(res: ServerResponse): Promise<void>;
  /** `POST /messages?sessionId=`. */
  postSseMessage(
    req: IncomingMessage,
    res: ServerResponse,
    sessionId: string | undefined,
    body: unknown,
  ): void;
  /** `/mcp`: a legacy session's request or a modern stateless one. */
  handleMcp(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  cancelCall(callId: string, message: string): boolean;
  log(level: LoggingLevel, message: string, data?: Record<string, unknown>): void;
  readonly notify: ListenerNotifier;
  close(): Promise<void>;
}

export function createMcpRoutes(options: McpRoutesOptions): McpRoutes {
  const { sessions, emit, reportError } = options;

  /** What the start and the end of a call have in common: which call, of which client. */
  const callIdentity = (call: ToolCallStart) => {
    const clientInfo: McpClientIdentity | undefined =
      call.leg.era === 'modern'
        ? call.envelopeClientInfo
        : call.sessionId === undefined
          ? undefined
          : sessions.get(call.sessionId)?.clientInfo;
    return {
      callId: call.callId,
      tool: call.tool,
      // The listener builds HTTP legs only ('stdio' is grove bridge's own server).
      transport: call.leg.transport as McpTransportKind,
      era: call.leg.era,
      ...(call.sessionId === undefined ? {} : { sessionId: call.sessionId }),
      ...(clientInfo === undefined ? {} : { clientInfo }),
      ...(call.leg.era === 'modern' && call.bridged === true ? { bridged: true } : {}),
      argumentsSummary: call.argumentsSummary,
      at: Date.now(),
    };
  };
  const onToolStarted = (call: ToolCallStart): void => {
    emit({ type: 'tool-started', ...callIdentity(call) });
  };
  const onToolCalled = (call: ToolCallRecord): void => {
    emit({
      type: 'tool-called',
      ...callIdentity(call),
      isError: call.isError,
      durationMs: call.durationMs,
      resultBytes: call.resultBytes,
      ...(call.error === undefined ? {} : { error: call.error }),
    });
  };

  const buildServer = createServerFactory({
    root: options.root,
    tools: options.tools,
    serverInfo: options.serverInfo,
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    ...(options.extendServer === undefined ? {} : { extendServer: options.extendServer }),
    ...(options.isToolOffered === undefined ? {} : { isToolOffered: options.isToolOffered }),
    ...(options.progressIntervalMs === undefined
      ? {}
      : { progressIntervalMs: options.progressIntervalMs }),
    ...options.callBounds,
    sessionClientName: (sessionId) => sessions.get(sessionId)?.clientInfo?.name,
    onToolStarted,
    onToolCalled,
    onError: reportError,
  });

  const modern = createMcpHandler(
    () => buildServer({ era: 'modern', transport: 'streamable-http' }),
    {
      legacy: 'reject',
      keepAliveMs: options.keepAliveMs,
      maxRequestBodySize: options.maxBodyBytes,
      onerror: reportError,
    },
  );
  /**
   * The modern handler, reporting a client only once the SDK accepted its request: a 2xx answer
   * means the request passed the SDK's checks (protocol version, the `_meta` envelope, headers
   * matching the body, a known method) and was served. A refused request (4xx) is no client: its
   * clientInfo is whatever the sender wrote, unchecked.
   */
  const reportingModern = {
    fetch: async (request: Request, requestOptions?: McpHandlerRequestOptions) => {
      const response = await modern.fetch(request, requestOptions);
      if (response.ok) {
        const bridged = isBridgedHeader(request.headers.get(BRIDGE_HEADER));
        reportModernClient(requestOptions?.parsedBody, bridged, emit);
      }
      return response;
    },
  };
  /** The modern leg's Node handler, made on the first modern request (see node-adapter.ts). */
  let modernNode: Promise<ReturnType<typeof toNodeHandler>> | undefined;
  const modernNodeHandler = (): Promise<ReturnType<typeof toNodeHandler>> =>
    (modernNode ??= loadNodeAdapter().then((adapter) =>
      adapter.toNodeHandler(reportingModern, {
        onerror: reportError,
        maxRequestBodySize: options.maxBodyBytes,
      }),
    ));

  /** Initialized legacy sessions' servers, by session id: where server log messages go. */
  const logTargets = new Map<string, McpServer>();
  const legacyLegs = new LegacyLegs({
    logTargets,
    buildServer,
    sessions,
    keepAliveMs: options.keepAliveMs,
    emit,
    reportError,
  });

  return {
    openSse: (res) => legacyLegs.openSse(res),
    postSseMessage: (req, res, sessionId, body) =>
      legacyLegs.postSseMessage(req, res, sessionId, body),
    async handleMcp(req, res, body) {
      capUnreadOutput(res);
      if (await isLegacyRequest(headersOnlyRequest(req), body)) {
        return legacyLegs.handleStreamable(req, res, body);
      }
      return (await modernNodeHandler())(req, res, body);
    },
    cancelCall: (callId, message) => buildServer.cancelCall(callId, message),
    log: (level, message, data) => {
      const params = {
        level,
        logger: 'grove',
        data: data === undefined ? message : { message, ...data },
      };
      for (const [sessionId, server] of logTargets) {
        // The SDK drops it below the level this session set with logging/setLevel.
        server.server.sendLoggingMessage(params, sessionId).catch(reportError);
      }
    },
    notify: {
      resourceUpdated: (uri) => {
        for (const server of logTargets.values()) {
          server.server.sendResourceUpdated({ uri }).catch(reportError);
        }
        modern.notify.resourceUpdated(uri);
      },
      resourcesChanged: () => {
        for (const server of logTargets.values()) {
          server.server.sendResourceListChanged().catch(reportError);
        }
        modern.notify.resourcesChanged();
      },
      toolsChanged: () => {
        for (const server of logTargets.values()) {
          buildServer.syncTools(server);
          server.server.sendToolListChanged().catch(reportError);
        }
        modern.notify.toolsChanged();
      },
    },
    close: () => modern.close(),
  };
}

/**
 * Reports the identity an accepted modern request carries in its `_meta` envelope. Requests only:
 * the SDK acknowledges a notification (202) without checking its envelope.
 */
function reportModernClient(
  body: unknown,
  bridged: boolean,
  emit: (event: McpClientEvent) => void,
): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const { id, method, params } = body as {
    id?: unknown;
    method?: unknown;
    params?: { _meta?: Record<string, unknown> };
  };
  if (typeof method !== 'string') return;
  if (typeof id !== 'string' && typeof id !== 'number') return;
  const clientInfo = toClientIdentity(params?._meta?.[CLIENT_INFO_META_KEY]);
  emit({
    type: 'client-seen',
    transport: 'streamable-http',
    era: 'modern',
    ...(clientInfo ? { clientInfo } : {}),
    ...(bridged ? { bridged: true } : {}),
    method,
    at: Date.now(),
  });
}
