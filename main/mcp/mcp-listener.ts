// The HTTP listener of one worktree's MCP server, on 127.0.0.1 only, serving three legs on one
// port: `GET /sse` + `POST /messages` (Grove's legacy SSE transport, for mcp-remote/Claude Desktop),
// `/mcp` legacy Streamable HTTP with sessions (picked with isLegacyRequest), `/mcp` modern
// stateless (createMcpHandler, legacy: 'reject'); plus `GET /healthz` (with `?challenge=`, the
// proof `grove bridge` asks before it sends the token: platform/http/healthz-proof.ts). It owns the legacy session
// map, idle reaping, the session cap, security checks on every route and client events. What
// needs the MCP SDK (servers, the legs' transports, notifications) is mcp-routes.ts, loaded on the
// first MCP request.
import type * as NodeHttp from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LoggingLevel } from '@modelcontextprotocol/server';
import type { ListenerNotifier, ServerParts } from '../tools/tool-definition.ts';
import type { McpClientEvent } from './client-events.ts';
import { LegacySessionRegistry } from './legacy-sessions.ts';
import {
  hostOrOriginRefusal,
  presentedTokens,
  tokenRefusal,
} from '../platform/http/request-guard.ts';
import { requireBuiltin } from '../platform/builtins.ts';
import { isJsonMediaType, readJsonBody, sendJson } from '../platform/http/json-body.ts';
import { stageMark, stageTraceStart } from '../platform/stage-timings.ts';
import {
  MAX_BATCH_MESSAGES,
  MCP_METHODS,
  handleRouteError,
  jsonRpcError,
  methodNotAllowed,
  splitUrl,
  unsupportedMediaType,
  LISTEN_HOST,
} from './http-answers.ts';
import { CHALLENGE_PARAM, healthzProof, isChallenge } from '../platform/http/healthz-proof.ts';
import type { LiveSession } from './legacy-legs.ts';
import type { McpRoutes } from './mcp-routes.ts';
import type { CallBounds } from './server-factory.ts';

/** node:http required, not imported: its ESM facade would load undici (platform/builtins.ts). */
const { createServer } = requireBuiltin<typeof NodeHttp>('node:http');

/** JSON bodies above this are refused with 413. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * A request must have arrived whole (headers and body) within this; Node then answers 408 and
 * closes the connection, and what its body held is given back (json-body.ts BodyBudget). A client
 * on the loopback sends a 4 MiB body in milliseconds; Node's default (300 s) let unfinished
 * bodies sit for five minutes. Checked every REQUEST_TIMEOUT_CHECK_MS.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_CHECK_MS = 5_000;
export const DEFAULT_KEEP_ALIVE_MS = 15_000;
export const DEFAULT_SESSION_IDLE_MS = 5 * 60_000;
export const DEFAULT_MAX_SESSIONS = 100;

export interface McpListenerOptions {
  /** Real path of the worktree root (tools never read outside it). */
  root: string;
  /** The worktree's secret; required on every route except /healthz (unless requireToken is false). */
  token: string;
  /** Default true. When false, only the Host and Origin checks protect the server. */
  requireToken?: boolean;
  /** Exactly this port on 127.0.0.1 (0 picks a free one). Taken -> rejects with code EADDRINUSE. */
  port: number;
  /**
   * Loads the tools and extension every server registers (ServerParts): called once, with the
   * MCP routes, on the first request for /sse, /messages or /mcp.
   */
  loadServerParts: () => Promise<ServerParts>;
  serverInfo: { name: string; version: string };
  instructions?: string;
  /**
   * Whether a tool of `tools` is offered now (default: all). When the answer changes, call
   * `notify.toolsChanged()`: open sessions are brought up to date and every client told.
   */
  isToolOffered?: (name: string) => boolean;
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
  /** Calls running and waiting at once (server-factory.ts; tests lower them). */
  callBounds?: CallBounds;
  /** Time for a request to arrive whole (default REQUEST_TIMEOUT_MS; tests lower it). */
  requestTimeoutMs?: number;
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

  /**
   * The MCP routes with the SDK (mcp-routes.ts), loaded by the first request that needs them: a
   * listener no client has called answers /healthz and refusals without ever loading the SDK.
   */
  let routes: Promise<McpRoutes> | undefined;
  /** The same, once loaded: notifications before then have no client to reach. */
  let loadedRoutes: McpRoutes | undefined;
  const mcpRoutes = (): Promise<McpRoutes> =>
    (routes ??= (async () => {
      const [{ createMcpRoutes }, parts] = await Promise.all([
        import('./mcp-routes.ts'),
        options.loadServerParts(),
      ]);
      loadedRoutes = createMcpRoutes({
        root: options.root,
        tools: parts.tools,
        serverInfo: options.serverInfo,
        instructions: options.instructions,
        extendServer: parts.extendServer,
        isToolOffered: options.isToolOffered,
        progressIntervalMs: options.progressIntervalMs,
        callBounds: options.callBounds,
        keepAliveMs,
        maxBodyBytes: MAX_BODY_BYTES,
        sessions,
        emit,
        reportError,
      });
      return loadedRoutes;
    })().catch((error: unknown) => {
      routes = undefined; // the next request tries again
      throw error;
    }));

  let access = { token: options.token, requireToken: options.requireToken ?? true };
  let boundPort = 0;

  /** One request: security checks, then the route. Errors are answered by handleRouteError. */
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    options.onRequest?.();
    const traced = stageTraceStart(); // GROVE_STAGE_TIMINGS only (benchmarks)
    if (traced) res.once('finish', traced);
    const refusedHost = hostOrOriginRefusal(req.headers, boundPort);
    if (refusedHost !== undefined) return sendJson(res, 403, { error: refusedHost });
    const { path, query } = splitUrl(req.url);
    if (path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      // With a challenge, the proof that this server holds the worktree's token
      // (platform/http/healthz-proof.ts): grove bridge asks it, and so does a worktree process
      // that finds its port taken.
      const challenge = query.get(CHALLENGE_PARAM);
      if (!isChallenge(challenge)) return sendJson(res, 200, { ok: true });
      return sendJson(res, 200, {
        ok: true,
        proof: healthzProof(access.token, boundPort, challenge),
      });
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
    stageMark('body-parsed');
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
        return (await mcpRoutes()).openSse(res);
      case '/messages':
        if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
        return (await mcpRoutes()).postSseMessage(req, res, sessionId, body);
      case '/mcp':
        if (!MCP_METHODS.includes(req.method ?? '')) {
          const allow = MCP_METHODS.join(', ');
          return jsonRpcError(res, 405, -32000, `Method not allowed: use ${allow}`, {
            Allow: allow,
          });
        }
        if (req.method === 'POST' && body === undefined) return unsupportedMediaType(res);
        return (await mcpRoutes()).handleMcp(req, res, body);
      default:
        return sendJson(res, 404, { error: 'not found: use /sse, /messages, /mcp or /healthz' });
    }
  };

  const httpServer = createServer(
    {
      requestTimeout: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, options.requestTimeoutMs ?? HEADERS_TIMEOUT_MS),
      connectionsCheckingInterval: Math.min(
        REQUEST_TIMEOUT_CHECK_MS,
        options.requestTimeoutMs ?? REQUEST_TIMEOUT_CHECK_MS,
      ),
    },
    (req, res) => {
      route(req, res).catch((error: unknown) => handleRouteError(error, res, reportError));
    },
  );
  await listen(httpServer, options.port);
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
    cancelCall: (callId, message) => loadedRoutes?.cancelCall(callId, message) ?? false,
    log: (level, message, data) => loadedRoutes?.log(level, message, data),
    notify: {
      resourceUpdated: (uri) => loadedRoutes?.notify.resourceUpdated(uri),
      resourcesChanged: () => loadedRoutes?.notify.resourcesChanged(),
      toolsChanged: () => loadedRoutes?.notify.toolsChanged(),
    },
    close: () => {
      closing ??= (async () => {
        clearInterval(reaper);
        await sessions.closeAll();
        // Routes still loading are closed once loaded; a failed load has nothing to close.
        await (await routes?.catch(() => undefined))?.close().catch(reportError);
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          httpServer.closeAllConnections();
        });
      })();
      return closing;
    },
  };
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
