// The two places `grove bridge` sends its client's messages to: the running host's server for the
// worktree (Streamable HTTP with the worktree's token, so the window shows the client and its calls
// like any other), or a server of the worktree's own in the bridge's process (the same tools,
// assembled by main/worktree/worktree-server.ts). Both pass JSON-RPC messages through untouched;
// bridge.ts decides which one is in use and switches when one is lost.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  InMemoryTransport,
  isInitializeRequest,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type McpServer,
  type RequestId,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../platform/log.ts';
import { GROVE_VERSION } from '../platform/version.ts';
import { BRIDGE_HEADER } from '../mcp/client-events.ts';
import { createServerFactory } from '../mcp/server-factory.ts';
import { createWorktreeServer } from '../worktree/worktree-server.ts';
import { serverAnswers, type HostServer } from './find-host.ts';

export interface Upstream {
  /** For messages: "the Grove host (http://127.0.0.1:47110/mcp)" or "this process". */
  readonly description: string;
  readonly kind: 'host' | 'local';
  /** Rejects with UpstreamLost when the upstream is gone; other rejections are about the message. */
  send(message: JSONRPCMessage): Promise<void>;
  close(): Promise<void>;
}

export interface UpstreamHandlers {
  /** A message for the client. */
  onmessage(message: JSONRPCMessage): void;
  /** The upstream is gone (its server stopped answering): requests in flight will get no answer. */
  onlost(reason: string): void;
}

/**
 * The upstream is gone. `delivered` is false when the message certainly never reached a server
 * (no HTTP response at all, or a session the server no longer knows): it may be sent again elsewhere.
 */
export class UpstreamLost extends Error {
  readonly delivered: boolean;
  constructor(message: string, delivered: boolean, cause?: unknown) {
    super(message, { cause });
    this.name = 'UpstreamLost';
    this.delivered = delivered;
  }
}

/** The errno code somewhere in an error's cause chain (fetch wraps the socket's error). */
function errnoCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('E')) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The error's message with its cause's (fetch says only "fetch failed"). */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${message}: ${cause.message}` : message;
}

/** The HTTP status of a failed Streamable HTTP send, if it got that far. */
function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

/** Connects to the running host's server for the worktree. */
export async function connectToHost(
  server: HostServer,
  handlers: UpstreamHandlers,
): Promise<Upstream> {
  const transport = new StreamableHTTPClientTransport(server.url, {
    requestInit: {
      headers: {
        authorization: `Bearer ${server.token}`,
        'user-agent': `grove-bridge/${GROVE_VERSION}`,
        // The window lists the client behind the bridge as stdio, under its own name.
        [BRIDGE_HEADER]: '1',
      },
    },
  });
  const port = Number(server.url.port);
  let lost = false;
  const lose = (reason: string): void => {
    if (lost) return;
    lost = true;
    handlers.onlost(reason);
  };
  /** Ids of initialize requests sent: their answers carry the protocol version to use. */
  const initializeIds = new Set<RequestId>();
  transport.onmessage = (message) => {
    if (isJSONRPCResultResponse(message) && initializeIds.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') transport.setProtocolVersion(version);
    }
    handlers.onmessage(message);
  };
  // A broken stream (the host was stopped or crashed mid-call) reports here; whether the host is
  // gone or merely dropped one stream, /healthz tells.
  transport.onerror = (error) => {
    if (lost) return;
    void serverAnswers(port).then((alive) => {
      if (!alive) lose(`the Grove host stopped answering (${describe(error)})`);
    });
  };
  await transport.start();
  const description = `the Grove host (${server.url.href})`;
  return {
    description,
    kind: 'host',
    async send(message) {
      if (lost) throw new UpstreamLost(`${description} is gone`, false);
      if (isJSONRPCRequest(message) && isInitializeRequest(message)) initializeIds.add(message.id);
      try {
        await transport.send(message);
      } catch (error) {
        // No HTTP response at all (fetch's TypeError: refused, or a kept-alive socket the dying
        // server closed): the server never started on the message — a streamed answer starts with
        // its headers. 404: the session is unknown to a server that restarted since it began.
        const noResponse = error instanceof TypeError || errnoCode(error) === 'ECONNREFUSED';
        // 403: the token was rotated in the window; the database has the new one.
        const status = httpStatus(error);
        const sessionGone = status === 404;
        const refused = status === 403;
        if (sessionGone || refused || !(await serverAnswers(port))) {
          const reason = sessionGone
            ? 'the Grove host restarted'
            : refused
              ? "the Grove host refused this worktree's token (rotated?)"
              : `the Grove host stopped answering (${describe(error)})`;
          lose(reason);
          throw new UpstreamLost(reason, !(noResponse || sessionGone || refused), error);
        }
        throw error;
      }
    },
    async close() {
      lost = true;
      // Ends the session on the host at once (the window stops listing the client) when it is up.
      await transport.terminateSession().catch(() => undefined);
      await transport.close().catch(() => undefined);
    },
  };
}

/**
 * Serves the worktree in this process: the same tools, prompts and resources as its server in the
 * host, over an in-memory pair to the SDK's stdio entry (which picks the protocol era from the
 * client's opening, as a stdio server does).
 */
export async function serveLocally(
  root: string,
  handlers: UpstreamHandlers,
  log: Logger,
  settings: { justTasks: boolean },
): Promise<Upstream> {
  const worktree = createWorktreeServer({
    root,
    onState: () => undefined,
    onWarning: (warning) => log.warn(warning),
    serverUrls: () => undefined,
    // The worktree's own setting in the app database: the host offers the same.
    justTasks: settings.justTasks,
  });
  const parts = await worktree.loadServerParts();
  const buildServer = createServerFactory({
    root,
    tools: parts.tools,
    isToolOffered: worktree.isToolOffered,
    serverInfo: worktree.serverInfo,
    instructions: worktree.instructions,
    ...(parts.extendServer === undefined ? {} : { extendServer: parts.extendServer }),
    onError: (error) => log.error(error.message),
  });
  const [bridgeEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  /** The one server instance the stdio entry pins for this connection. */
  let pinned: McpServer | undefined;
  const served = serveStdio(
    (context) => (pinned = buildServer({ era: context.era, transport: 'stdio' })),
    { transport: serverEnd, onerror: (error) => log.error(error.message) },
  );
  bridgeEnd.onmessage = (message) => handlers.onmessage(message);
  await bridgeEnd.start();
  const notifyFailed = (error: unknown): void =>
    log.debug(`notification not sent: ${String(error)}`);
  worktree.reconcile
    .start({
      notify: {
        resourceUpdated: (uri) => pinned?.server.sendResourceUpdated({ uri }).catch(notifyFailed),
        resourcesChanged: () => pinned?.server.sendResourceListChanged().catch(notifyFailed),
        toolsChanged: () => pinned?.server.sendToolListChanged().catch(notifyFailed),
      },
    })
    .catch((error: unknown) => log.warn(`reconciliation: ${String(error)}`));
  return {
    description: 'this process',
    kind: 'local',
    send: (message) => bridgeEnd.send(message),
    async close() {
      await served.close().catch(() => undefined);
      await worktree.reconcile.close().catch(() => undefined);
    },
  };
}
