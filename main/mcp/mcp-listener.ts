// The HTTP listener of one worktree's MCP server, on 127.0.0.1 only, serving three legs on one
// port: `GET /sse` + `POST /messages` (Grove's legacy SSE transport, for mcp-remote/Claude Desktop),
// `/mcp` legacy Streamable HTTP with sessions (picked with isLegacyRequest), `/mcp` modern
// stateless (createMcpHandler, legacy: 'reject'); plus `GET /healthz`. It owns the legacy session
// map, idle reaping, the session cap, security checks on every route and client events.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
} from '@modelcontextprotocol/server';
import type {
  JSONRPCMessage,
  LoggingLevel,
  McpServer,
  Transport,
} from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import type { ListenerNotifier, ToolDefinition } from '../tools/tool-definition.ts';
import { toClientIdentity } from './client-events.ts';
import type { McpClientEvent, McpClientIdentity } from './client-events.ts';
import { LegacySessionRegistry } from './legacy-sessions.ts';
import type { LegacySession } from './legacy-sessions.ts';
import {
  hostOrOriginRefusal,
  presentedTokens,
  tokenRefusal,
} from '../platform/http/request-guard.ts';
import {
  RequestBodyError,
  isJsonMediaType,
  readJsonBody,
  sendJson,
} from '../platform/http/json-body.ts';
import { createServerFactory } from './server-factory.ts';
import type {
  ServerFactory,
  ServerFactoryOptions,
  ToolCallRecord,
  ToolCallStart,
} from './server-factory.ts';
import { InvalidMessageError, SseServerTransport } from './sse-transport.ts';

export const LISTEN_HOST = '127.0.0.1';
/** JSON bodies above this are refused with 413. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const DEFAULT_KEEP_ALIVE_MS = 15_000;
export const DEFAULT_SESSION_IDLE_MS = 5 * 60_000;
export const DEFAULT_MAX_SESSIONS = 100;
/** `retry:` sent in the first SSE frame: clients reconnect quickly after a server restart. */
export const SSE_RETRY_MS = 500;

export interface McpListenerOptions {
  /** Real path of the worktree root (tools never read outside it). */
  root: string;
  /** The worktree's secret; required on every route except /healthz (unless requireToken is false). */
  token: string;
  /** Default true. When false, only the Host and Origin checks protect the server. */
  requireToken?: boolean;
  /** Exactly this port on 127.0.0.1 (0 picks a free one). Taken -> rejects with code EADDRINUSE. */
  port: number;
  tools: readonly ToolDefinition[];
  serverInfo: { name: string; version: string };
  instructions?: string;
  /** Registers more on every server after the tools (the reconciliation prompts and resources). */
  extendServer?: ServerFactoryOptions['extendServer'];
  /** Sessions opening/closing, modern clients seen, tool calls. */
  onClientEvent?: (event: McpClientEvent) => void;
  /** Unexpected errors (never carries the token). */
  onError?: (error: Error) => void;
  /** Called as each HTTP request arrives (the worktree process tracks when it is idle). */
  onRequest?: () => void;
  /** Interval of SSE keep-alive comments on every leg (default 15 s; 0 disables). */
  keepAliveMs?: number;
  /** Interval of the progress heartbeat of running calls whose client asked for progress (5 s). */
  progressIntervalMs?: number;
  /** Legacy sessions idle this long are closed (default 30 min). SSE sessions end with their stream. */
  sessionIdleMs?: number;
  /** Cap on legacy sessions (both legs); the least recently active is evicted (default 100). */
  maxSessions?: number;
}

export interface McpListener {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  /** Replaces the token (the old one is refused from the next request on) or its requirement. */
  setAccess(access: { token: string; requireToken: boolean }): void;
  /**
   * Sends a server log message (a recreated cache, a spec that failed validation...) to every
   * open legacy session whose client asked for this level or a lower one (`logging/setLevel`; all
   * levels until it does). Modern clients hold no session: they get log messages only within their
   * own requests (ToolContext.log). Never throws.
   */
  log(level: LoggingLevel, message: string, data?: Record<string, unknown>): void;
  /** Ends a running tool call now with `message` as its error; false if it already finished. */
  cancelCall(callId: string, message: string): boolean;
  /**
   * Change notifications, fanned out to every initialized legacy session and, through the modern
   * handler's `notify`, to modern clients listening (`subscriptions/listen`). Never throws.
   */
  readonly notify: ListenerNotifier;
  /** Ends SSE streams, closes sessions and the HTTP server (all sockets). Idempotent. */
  close(): Promise<void>;
}

/** Starts the listener; resolves once it is bound to 127.0.0.1:port. */
export async function createMcpListener(options: McpListenerOptions): Promise<McpListener> {
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const reportError = (error: unknown): void => {
    options.onError?.(error instanceof Error ? error : new Error(String(error)));
  };
  const emit = (event: McpClientEvent): void => {
    try {
      options.onClientEvent?.(event);
    } catch (error) {
      reportError(error);
    }
  };

  const sessions = new LegacySessionRegistry<LiveSession>({
    maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
    idleMs,
  });

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
      transport: call.leg.transport,
      era: call.leg.era,
      ...(call.sessionId === undefined ? {} : { sessionId: call.sessionId }),
      ...(clientInfo === undefined ? {} : { clientInfo }),
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
    ...(options.progressIntervalMs === undefined
      ? {}
      : { progressIntervalMs: options.progressIntervalMs }),
    onToolStarted,
    onToolCalled,
    onError: reportError,
  });

  const modern = createMcpHandler(
    () => buildServer({ era: 'modern', transport: 'streamable-http' }),
    {
      legacy: 'reject',
      keepAliveMs,
      maxRequestBodySize: MAX_BODY_BYTES,
      onerror: reportError,
    },
  );
  const modernNode = toNodeHandler(modern, {
    onerror: reportError,
    maxRequestBodySize: MAX_BODY_BYTES,
  });

  /** Initialized legacy sessions' servers, by session id: where server log messages go. */
  const logTargets = new Map<string, McpServer>();
  const legacyLegs = new LegacyLegs({
    logTargets,
    buildServer,
    sessions,
    keepAliveMs,
    emit,
    reportError,
  });

  let access = { token: options.token, requireToken: options.requireToken ?? true };
  let boundPort = 0;

  /** One request: security checks, then the route. Errors are answered by handleRouteError. */
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    options.onRequest?.();
    const refusedHost = hostOrOriginRefusal(req.headers, boundPort);
    if (refusedHost !== undefined) return sendJson(res, 403, { error: refusedHost });
    const { path, query } = splitUrl(req.url);
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      return sendJson(res, 200, { ok: true });
    }
    const sessionId = query.get('sessionId') ?? undefined;
    // The id of a live SSE session was handed out over an authenticated stream.
    const liveSseMessage =
      req.method === 'POST' &&
      path === '/messages' &&
      sessionId !== undefined &&
      sessions.get(sessionId)?.transport === 'sse';
    if (access.requireToken && !liveSseMessage) {
      const presented = presentedTokens(req.headers.authorization, query.get('token'));
      const refusedToken = tokenRefusal(presented, access.token);
      if (refusedToken !== undefined) return sendJson(res, 403, { error: refusedToken });
    }
    const body =
      req.method === 'POST' && isJsonMediaType(req.headers['content-type'])
        ? await readJsonBody(req, MAX_BODY_BYTES)
        : undefined;
    if (Array.isArray(body) && body.length > MAX_BATCH_MESSAGES) {
      return jsonRpcError(
        res,
        400,
        -32600,
        `Invalid Request: a batch of ${body.length} messages; at most ${MAX_BATCH_MESSAGES}`,
      );
    }

    switch (path) {
      case '/sse':
        if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
        return legacyLegs.openSse(res);
      case '/messages':
        if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
        return legacyLegs.postSseMessage(req, res, sessionId, body);
      case '/mcp':
        if (!MCP_METHODS.includes(req.method ?? '')) {
          const allow = MCP_METHODS.join(', ');
          return jsonRpcError(res, 405, -32000, `Method not allowed: use ${allow}`, {
            Allow: allow,
          });
        }
        if (req.method === 'POST' && body === undefined) return unsupportedMediaType(res);
        if (await isLegacyRequest(headersOnlyRequest(req), body)) {
          return legacyLegs.handleStreamable(req, res, body);
        }
        reportModernClient(body, emit);
        return modernNode(req, res, body);
      default:
        return sendJson(res, 404, { error: 'not found: use /sse, /messages, /mcp or /healthz' });
    }
  };

  const httpServer = createServer((req, res) => {
    route(req, res).catch((error: unknown) => handleRouteError(error, res, reportError));
  });
  try {
    await listen(httpServer, options.port);
  } catch (error) {
    await modern.close().catch(() => undefined);
    throw error;
  }
  boundPort = (httpServer.address() as AddressInfo).port;

  const reaper = setInterval(
    () => {
      sessions.reapIdle().catch(reportError);
    },
    Math.max(10, Math.min(idleMs / 2, 60_000)),
  );
  reaper.unref();

  let closing: Promise<void> | undefined;
  return {
    port: boundPort,
    setAccess: (next) => {
      access = { ...next };
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
          server.server.sendToolListChanged().catch(reportError);
        }
        modern.notify.toolsChanged();
      },
    },
    close: () => {
      closing ??= (async () => {
        clearInterval(reaper);
        await sessions.closeAll();
        await modern.close().catch(reportError);
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          httpServer.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

/** A registered legacy session with the transport that serves it. */
type LiveSession = LegacySession &
  (
    | { readonly transport: 'sse'; readonly sse: SseServerTransport }
    | { readonly transport: 'streamable-http'; readonly http: NodeStreamableHTTPServerTransport }
  );

interface LegacyLegsOptions {
  logTargets: Map<string, McpServer>;
  buildServer: ServerFactory;
  sessions: LegacySessionRegistry<LiveSession>;
  keepAliveMs: number;
  emit: (event: McpClientEvent) => void;
  reportError: (error: unknown) => void;
}

/** The two sessionful legacy legs: SSE and Streamable HTTP. */
class LegacyLegs {
  readonly #options: LegacyLegsOptions;

  constructor(options: LegacyLegsOptions) {
    this.#options = options;
  }

  /** `GET /sse`: opens a stream and a session. */
  async openSse(res: ServerResponse): Promise<void> {
    const { buildServer, sessions, keepAliveMs } = this.#options;
    const sse = new SseServerTransport({
      res,
      endpoint: '/messages',
      keepAliveMs,
      retryMs: SSE_RETRY_MS,
    });
    const server = buildServer({ era: 'legacy', transport: 'sse' });
    const session: LiveSession = {
      id: sse.sessionId,
      transport: 'sse',
      sse,
      lastActivity: sessions.now(),
      isHeld: () => sse.isOpen,
      close: () => server.close(),
    };
    this.#wire(session, server, sse);
    await sessions.add(session);
    await server.connect(sse);
  }

  /** `POST /messages?sessionId=`: one message or a batch for a live SSE session. */
  postSseMessage(
    req: IncomingMessage,
    res: ServerResponse,
    sessionId: string | undefined,
    body: unknown,
  ): void {
    const { sessions } = this.#options;
    const session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (session?.transport !== 'sse' || !session.sse.isOpen) {
      sendJson(res, 404, { error: 'unknown or closed SSE session: open GET /sse again' });
      return;
    }
    if (body === undefined) {
      unsupportedMediaType(res);
      return;
    }
    sessions.touch(session.id);
    try {
      session.sse.handlePostMessage(body, { request: headersOnlyRequest(req) });
    } catch (error) {
      if (error instanceof InvalidMessageError) {
        jsonRpcError(res, 400, -32600, `Invalid Request: ${error.message}`);
        return;
      }
      throw error;
    }
    res.writeHead(202, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Accepted');
  }

  /** `/mcp` requests classified legacy: existing session, new session (initialize) or refusal. */
  async handleStreamable(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const { sessions } = this.#options;
    const header = req.headers['mcp-session-id'];
    if (typeof header === 'string') {
      const session = sessions.touch(header);
      if (session?.transport !== 'streamable-http') {
        jsonRpcError(res, 404, -32001, 'Session not found: initialize a new session');
        return;
      }
      if (req.method === 'GET') this.#holdWhileStreaming(session, res);
      await session.http.handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && containsInitialize(body)) {
      await this.#openStreamable(req, res, body);
      return;
    }
    jsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
  }

  /**
   * A session's GET stream: the client is connected (and its session never reaped as idle) while
   * the stream stays open.
   */
  #holdWhileStreaming(session: LiveSession & { streams?: number }, res: ServerResponse): void {
    const { emit, sessions } = this.#options;
    session.streams = (session.streams ?? 0) + 1;
    emit({ type: 'session-stream', sessionId: session.id, open: true, at: Date.now() });
    res.once('close', () => {
      session.streams = (session.streams ?? 1) - 1;
      session.lastActivity = sessions.now();
      if (session.streams === 0) {
        emit({ type: 'session-stream', sessionId: session.id, open: false, at: Date.now() });
      }
    });
  }

  async #openStreamable(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const { buildServer, sessions, keepAliveMs, reportError } = this.#options;
    const server = buildServer({ era: 'legacy', transport: 'streamable-http' });
    // The id is ours, so the session record can be wired before the handshake runs.
    const id = randomUUID();
    let registered = false;
    const http = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      keepAliveMs,
      onsessioninitialized: async () => {
        registered = true;
        await sessions.add(session);
      },
    });
    const session: LiveSession & { streams?: number } = {
      id,
      transport: 'streamable-http',
      http,
      lastActivity: sessions.now(),
      isHeld: () => (session.streams ?? 0) > 0,
      close: () => server.close(),
    };
    this.#wire(session, server, http);
    await server.connect(http);
    await http.handleRequest(req, res, body);
    // A failed handshake registers nothing, so nothing else would ever close this pair.
    if (!registered) await server.close().catch(reportError);
  }

  /**
   * Hooks activity tracking, clientInfo capture and open/close events onto a session. Runs
   * before `server.connect`, which chains these callbacks in front of its own.
   */
  #wire(session: LiveSession, server: McpServer, transport: Transport): void {
    const { sessions, emit } = this.#options;
    let opened = false;
    let closed = false;
    transport.onmessage = (message: JSONRPCMessage) => {
      session.lastActivity = sessions.now();
      if (isInitializeRequest(message)) {
        session.clientInfo = toClientIdentity(message.params.clientInfo);
      }
    };
    server.server.oninitialized = () => {
      if (opened) return;
      opened = true;
      this.#options.logTargets.set(session.id, server);
      emit({
        type: 'session-opened',
        sessionId: session.id,
        transport: session.transport,
        era: 'legacy',
        ...(session.clientInfo ? { clientInfo: session.clientInfo } : {}),
        at: Date.now(),
      });
    };
    transport.onclose = () => {
      if (closed) return;
      closed = true;
      sessions.remove(session.id);
      this.#options.logTargets.delete(session.id);
      if (!opened) return;
      emit({
        type: 'session-closed',
        sessionId: session.id,
        transport: session.transport,
        era: 'legacy',
        ...(session.clientInfo ? { clientInfo: session.clientInfo } : {}),
        reason: session.closeReason ?? 'client',
        at: Date.now(),
      });
    };
  }
}

/** True for an initialize request, alone or inside a batch. */
function containsInitialize(body: unknown): boolean {
  return Array.isArray(body)
    ? body.some((item) => isInitializeRequest(item))
    : isInitializeRequest(body);
}

/** Reports the identity a modern request carries in its `_meta` envelope. */
function reportModernClient(body: unknown, emit: (event: McpClientEvent) => void): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const { method, params } = body as {
    method?: unknown;
    params?: { _meta?: Record<string, unknown> };
  };
  if (typeof method !== 'string') return;
  const clientInfo = toClientIdentity(params?._meta?.[CLIENT_INFO_META_KEY]);
  emit({
    type: 'client-seen',
    transport: 'streamable-http',
    era: 'modern',
    ...(clientInfo ? { clientInfo } : {}),
    method,
    at: Date.now(),
  });
}

/** The path and query of a request target (`/mcp?token=...`). */
function splitUrl(url: string | undefined): { path: string; query: URLSearchParams } {
  const target = url ?? '/';
  const mark = target.indexOf('?');
  return mark === -1
    ? { path: target, query: new URLSearchParams() }
    : { path: target.slice(0, mark), query: new URLSearchParams(target.slice(mark + 1)) };
}

/**
 * The request line and headers as a web Request, without the body: enough for the SDK to classify
 * a request whose body is passed already parsed, and for tools' request context.
 */
function headersOnlyRequest(req: IncomingMessage): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(`http://${LISTEN_HOST}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
  });
}

/** Most messages in one JSON-RPC batch (clients send a handful). */
export const MAX_BATCH_MESSAGES = 100;

/** The methods Streamable HTTP uses on /mcp. */
const MCP_METHODS = ['GET', 'POST', 'DELETE'];

function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendJson(res, 405, { error: `method not allowed: use ${allow}` }, { Allow: allow });
}

/** 415 for a POST whose body is not JSON (JSON-RPC error -32000, as the SDK answers it). */
function unsupportedMediaType(res: ServerResponse): void {
  jsonRpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
}

function jsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}

/** Unreadable bodies become JSON-RPC errors; anything else is a 500 and reported. */
function handleRouteError(
  error: unknown,
  res: ServerResponse,
  reportError: (error: unknown) => void,
): void {
  if (error instanceof RequestBodyError) {
    // An over-long body was not read to its end: the connection cannot carry another request.
    const headers: Record<string, string> = error.status === 413 ? { Connection: 'close' } : {};
    jsonRpcError(res, error.status, error.code, error.message, headers);
    return;
  }
  reportError(error);
  jsonRpcError(res, 500, -32603, 'Internal error');
}

/** Binds exactly 127.0.0.1:port; rejects with the listen error (code EADDRINUSE when taken). */
function listen(server: HttpServer, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ port, host: LISTEN_HOST, exclusive: true });
  });
}
