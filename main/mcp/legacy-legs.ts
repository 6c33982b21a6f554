// The legacy legs of one worktree's MCP listener: Grove's SSE transport (`GET /sse` +
// `POST /messages`) and session-based Streamable HTTP on `/mcp`, with the session map, idle
// reaping, the session cap and the client events of each session.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isInitializeRequest } from '@modelcontextprotocol/server';
import type { JSONRPCMessage, McpServer, Transport } from '@modelcontextprotocol/server';
import type { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { BRIDGE_HEADER, isBridgedHeader, toClientIdentity } from './client-events.ts';
import type { McpClientEvent } from './client-events.ts';
import type { LegacySessionRegistry } from './legacy-sessions.ts';
import type { LegacySession } from './legacy-sessions.ts';
import { sendJson } from '../platform/http/json-body.ts';
import type { ServerFactory } from './server-factory.ts';
import { InvalidMessageError, SseServerTransport } from './sse-transport.ts';
import { headersOnlyRequest, jsonRpcError, unsupportedMediaType } from './http-answers.ts';
import { loadNodeAdapter } from './node-adapter.ts';

/** `retry:` sent in the first SSE frame: clients reconnect quickly after a server restart. */
export const SSE_RETRY_MS = 500;

/** A registered legacy session with the transport that serves it. */
export type LiveSession = LegacySession &
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
export class LegacyLegs {
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
      if (req.method === 'POST') cancelWhenGone(session.http, res, body);
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
    const { NodeStreamableHTTPServerTransport } = await loadNodeAdapter();
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
      bridged: isBridgedHeader(req.headers[BRIDGE_HEADER]),
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
      // The offered tools may have changed since this server was built.
      this.#options.buildServer.syncTools(server);
      this.#options.logTargets.set(session.id, server);
      emit({
        type: 'session-opened',
        sessionId: session.id,
        transport: session.transport,
        era: 'legacy',
        ...(session.clientInfo ? { clientInfo: session.clientInfo } : {}),
        ...(session.bridged ? { bridged: true } : {}),
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

/**
 * A client that goes away (closes its transport, exits) while its requests run takes the response
 * they would be answered on with it: the session has no other way to reach it, and the SDK would
 * let the calls run on (a just recipe to its 10-minute deadline). When `res` closes before it was
 * finished, each request it carried is cancelled as if the client had sent
 * `notifications/cancelled` (its handler's signal aborts). SSE sessions and modern requests need
 * none of this: their calls end when their stream or request does.
 */
function cancelWhenGone(transport: Transport, res: ServerResponse, body: unknown): void {
  const ids = (Array.isArray(body) ? body : [body]).flatMap((message: unknown) => {
    const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown };
    return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')
      ? [id]
      : [];
  });
  if (ids.length === 0) return;
  res.once('close', () => {
    if (res.writableFinished) return;
    for (const requestId of ids) {
      transport.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId, reason: 'the client went away' },
      });
    }
  });
}

/** True for an initialize request, alone or inside a batch. */
function containsInitialize(body: unknown): boolean {
  return Array.isArray(body)
    ? body.some((item) => isInitializeRequest(item))
    : isInitializeRequest(body);
}
