// `grove bridge <worktree path>`: MCP over stdio for Claude Desktop and every stdio-only client,
// without npx or a separate Node. When a Grove host serves the worktree, the bridge forwards every
// message to that server (upstreams.ts), so the window lists the client and its calls; otherwise it
// serves the worktree itself. Messages pass through untouched in both directions — every protocol
// era, cancellation, progress, logging and list-changed notifications included.
//
// If the host goes away mid-session, the calls in flight end with an error and the bridge moves to
// the host again (if it is back) or to serving in its own process, replaying the client's opening
// (initialize, initialized, its log level and resource subscriptions) so the session goes on; the
// client sees nothing more than the error of those calls. stdout carries protocol only: every log
// line goes to stderr.
import type { Readable, Writable } from 'node:stream';
import {
  isInitializeRequest,
  isInitializedNotification,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../platform/log.ts';
import {
  hostServerOf,
  readWorktreeRecord,
  worktreeRootOf,
  type HostServer,
  type WorktreeRecord,
} from './find-host.ts';
import {
  connectToHost,
  serveLocally,
  UpstreamLost,
  type Upstream,
  type UpstreamHandlers,
} from './upstreams.ts';

export interface BridgeOptions {
  /** Any directory inside the worktree to serve. */
  worktreePath: string;
  /** The data directory whose host to look for (the same as `grove serve --data-dir`). */
  dataDir: string;
  /** Serve in this process even when a host serves the worktree. */
  local?: boolean;
  /** Default: process.stdin / process.stdout. */
  input?: Readable;
  output?: Writable;
  log: Logger;
}

export interface RunningBridge {
  /** The worktree served. */
  readonly root: string;
  /** Where messages go now. */
  readonly upstream: 'host' | 'local';
  /** Resolves when the client has gone (stdin closed) and everything is closed. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** How often, at most, a bridge serving the worktree itself looks whether the host is back. */
const HOST_RECHECK_MS = 2_000;

/** How long a replayed opening may take on a new upstream. */
const REPLAY_TIMEOUT_MS = 15_000;

/** JSON-RPC "internal error", for calls the lost upstream will never answer. */
const INTERNAL_ERROR = -32603;

/** What the app database and a health check say about the worktree's host. */
interface HostLookup {
  record?: WorktreeRecord;
  host?: HostServer | undefined;
}

/** The client messages a new upstream must see again for the session to go on. */
interface Opening {
  initialize?: JSONRPCRequest;
  initialized: boolean;
  logLevel?: JSONRPCRequest;
  subscriptions: Map<string, JSONRPCRequest>;
}

export async function runBridge(options: BridgeOptions): Promise<RunningBridge> {
  const { log } = options;
  const root = await worktreeRootOf(options.worktreePath);
  const stdio = new StdioServerTransport(options.input, options.output);
  const opening: Opening = { initialized: false, subscriptions: new Map() };
  /**
   * Client requests sent upstream and not answered yet: the upstream they went to, and whether it
   * has them (its send resolved). A request still being sent when its upstream is lost is handled
   * by its own send's failure (sent again, or answered with the error), not by the move.
   */
  const pending = new Map<RequestId, { upstream: Upstream; delivered: boolean }>();
  /** Requests of the upstream to the client (sampling, roots...), by id: where the answer goes. */
  const serverRequests = new Map<RequestId, Upstream>();
  /** Answers to replayed requests, which the client never sees. */
  const replayWaiters = new Map<RequestId, (message: JSONRPCMessage) => void>();
  let replays = 0;
  let closing = false;

  const reply = (message: JSONRPCMessage): void => {
    if (!closing)
      stdio.send(message).catch((error: unknown) => log.debug(`stdout: ${String(error)}`));
  };
  const failCall = (id: RequestId, message: string): void =>
    reply({ jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message } });

  const handlersFor = (getSelf: () => Upstream | undefined): UpstreamHandlers => ({
    onmessage(message) {
      const self = getSelf();
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
        const id = message.id;
        if (id !== undefined && replayWaiters.has(id)) {
          replayWaiters.get(id)!(message);
          replayWaiters.delete(id);
          return;
        }
        // An answer only from the upstream the request went to: a late one from a lost upstream
        // was already answered with the move's error (or sent again elsewhere).
        if (id !== undefined && pending.get(id)?.upstream !== self) {
          log.debug(
            `dropped an answer to ${String(id)} from ${self?.description ?? 'a closed upstream'}`,
          );
          return;
        }
        if (id !== undefined) pending.delete(id);
      } else if (isJSONRPCRequest(message) && self !== undefined) {
        serverRequests.set(message.id, self);
      }
      reply(message);
    },
    onlost(reason) {
      const self = getSelf();
      // A failed move is tried again by the next message (forward); it must not end the process.
      if (self !== undefined) moveFrom(self, reason).catch(() => undefined);
    },
  });

  /**
   * The worktree's record in the app database, and its host's server if one answers. Read again
   * on every move: a restarted host may have a new port, a rotated token. An unreadable database
   * (corrupt, locked, another schema) counts as none: the bridge serves the worktree itself with
   * the defaults (and says so when `warn`).
   */
  const lookForHost = async (warn: boolean): Promise<HostLookup> => {
    let record: WorktreeRecord | undefined;
    try {
      record = readWorktreeRecord(options.dataDir, root);
    } catch (error) {
      if (warn)
        log.warn(`${error instanceof Error ? error.message : String(error)}; not using a host`);
      return {};
    }
    if (options.local || record === undefined) return { record };
    return { record, host: await hostServerOf(record) };
  };

  /** Connects to the host if it answers, else serves the worktree in this process. */
  const connect = async (lookup?: HostLookup): Promise<Upstream> => {
    const { record, host } = lookup ?? (await lookForHost(true));
    // The handlers ask which upstream they belong to; it exists only once connected.
    const made: { upstream?: Upstream } = {};
    const handlers = handlersFor(() => made.upstream);
    made.upstream = host
      ? await connectToHost(host, handlers)
      : await serveLocally(root, handlers, log, { justTasks: record?.justTasks ?? false });
    return made.upstream;
  };

  /** Sends the client's opening again, so the new upstream continues the same session. */
  const replayOpening = async (upstream: Upstream): Promise<void> => {
    const requests = [
      opening.initialize,
      opening.logLevel,
      ...opening.subscriptions.values(),
    ].filter((request) => request !== undefined);
    for (const [index, request] of requests.entries()) {
      const id = `grove-bridge-replay-${++replays}`;
      const answered = new Promise<JSONRPCMessage>((resolve, reject) => {
        replayWaiters.set(id, resolve);
        setTimeout(() => {
          replayWaiters.delete(id);
          reject(new Error(`no answer to ${request.method}`));
        }, REPLAY_TIMEOUT_MS);
      });
      await upstream.send({ ...request, id });
      const answer = await answered;
      if (isJSONRPCErrorResponse(answer)) {
        throw new Error(`${request.method} refused: ${answer.error.message}`);
      }
      if (index === 0 && opening.initialize !== undefined && opening.initialized) {
        await upstream.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      }
    }
  };

  let current = await connect();
  /** While the bridge moves to a new upstream, messages wait for it. */
  let moving: Promise<Upstream> | undefined;
  log.info(`serving ${root} through ${current.description}`);

  /** Leaves a lost (or, with `lookup`, a no longer wanted) upstream for a new one. */
  const moveFrom = (lost: Upstream, reason: string, lookup?: HostLookup): Promise<Upstream> => {
    if (lost !== current) return moving ?? Promise.resolve(current);
    moving ??= (async () => {
      const message = `${reason} during this call; the bridge has reconnected, call again`;
      let failed = 0;
      for (const [id, { upstream, delivered }] of pending) {
        if (upstream !== lost || !delivered) continue;
        pending.delete(id);
        failCall(id, message);
        failed++;
      }
      log.warn(failed > 0 ? `${reason}; ${failed} call(s) in flight end with an error` : reason);
      for (const [id, upstream] of serverRequests) if (upstream === lost) serverRequests.delete(id);
      await lost.close().catch(() => undefined);
      const next = await connect(lookup);
      try {
        await replayOpening(next);
      } catch (error) {
        log.warn(`could not continue the session on ${next.description}: ${String(error)}`);
        await next.close().catch(() => undefined);
        throw error;
      }
      log.warn(`now serving ${root} through ${next.description}`);
      current = next;
      // The new upstream may offer other tools (the host's just tasks are never served here).
      if (opening.initialized) {
        reply({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      }
      return next;
    })().finally(() => {
      moving = undefined;
    });
    return moving;
  };

  /** When the bridge last looked for a host while serving the worktree itself. */
  let lastHostCheck = Date.now();

  /**
   * Serving the worktree itself after the host went away, the bridge goes back to the host once it
   * answers again (so the window shows the client again): looked for at most every
   * HOST_RECHECK_MS, before a request, and only between calls (none of its own in flight).
   */
  const returnToHostIfBack = async (): Promise<void> => {
    const idle = (): boolean =>
      !moving &&
      current.kind === 'local' &&
      ![...pending.values()].some((e) => e.upstream === current);
    if (options.local || !idle() || Date.now() - lastHostCheck < HOST_RECHECK_MS) return;
    lastHostCheck = Date.now();
    const lookup = await lookForHost(false);
    if (lookup.host === undefined || !idle()) return;
    await moveFrom(current, 'the Grove host is back', lookup).catch(() => undefined);
  };

  const remember = (message: JSONRPCMessage): void => {
    if (isJSONRPCRequest(message) && isInitializeRequest(message)) opening.initialize = message;
    else if (isInitializedNotification(message)) opening.initialized = true;
    else if (isJSONRPCRequest(message)) {
      const uri = (message.params as { uri?: unknown } | undefined)?.uri;
      if (message.method === 'logging/setLevel') opening.logLevel = message;
      else if (message.method === 'resources/subscribe' && typeof uri === 'string') {
        opening.subscriptions.set(uri, message);
      } else if (message.method === 'resources/unsubscribe' && typeof uri === 'string') {
        opening.subscriptions.delete(uri);
      }
    }
  };

  /** One client message to the upstream in use; sent again once if it never reached a lost one. */
  const forward = async (message: JSONRPCMessage): Promise<void> => {
    remember(message);
    if (isJSONRPCRequest(message)) await returnToHostIfBack();
    const isAnswer = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    for (let attempt = 0; attempt < 2; attempt++) {
      // A failed move leaves the lost upstream current: sending to it fails, which moves again.
      const upstream = moving ? await moving.catch(() => current) : current;
      if (isAnswer) {
        // An answer to a request of the upstream goes to that upstream, if it is still there.
        const asker = serverRequests.get(message.id!);
        serverRequests.delete(message.id!);
        if (asker !== upstream) return;
      }
      const entry = { upstream, delivered: false };
      if (isJSONRPCRequest(message)) pending.set(message.id, entry);
      try {
        await upstream.send(message);
        entry.delivered = true;
        return;
      } catch (error) {
        const lost = error instanceof UpstreamLost;
        if (lost) await moveFrom(upstream, error.message).catch(() => undefined);
        if (lost && !error.delivered && attempt === 0) continue; // never arrived: send it again
        if (isJSONRPCRequest(message) && pending.delete(message.id)) {
          failCall(message.id, error instanceof Error ? error.message : String(error));
        }
        if (!isJSONRPCRequest(message)) log.warn(`not delivered: ${String(error)}`);
        return;
      }
    }
  };

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const close = async (): Promise<void> => {
    if (closing) return closed;
    closing = true;
    await (moving ?? Promise.resolve(current)).catch(() => current);
    await current.close().catch(() => undefined);
    await stdio.close().catch(() => undefined);
    resolveClosed();
    return closed;
  };
  stdio.onmessage = (message) => {
    forward(message).catch((error: unknown) => log.error(`forwarding: ${String(error)}`));
  };
  stdio.onerror = (error) => log.warn(`stdio: ${error.message}`);
  // The client closed stdin: it is done (the MCP stdio binding says to exit promptly).
  stdio.onclose = () => void close();
  await stdio.start();

  return {
    root,
    get upstream() {
      return current.kind;
    },
    closed,
    close,
  };
}
