// `grove bridge <worktree path>`: MCP over stdio for Claude Desktop and every stdio-only client,
// without npx or a separate Node. When a Grove host serves the worktree, the bridge forwards every
// message to that server (host-upstream.ts), so the window lists the client and its calls;
// otherwise it serves the worktree itself (local-upstream.ts, loaded only then). Messages pass
// through untouched in both directions — every protocol era, cancellation, progress, logging and
// list-changed notifications included.
//
// Bounded like the HTTP side: at most MAX_IN_FLIGHT of the client's requests are with the upstream
// at once (a worktree server runs 16 calls per session), the others wait in order, and stdin is
// not read while MAX_WAITING wait or MAX_UNWRITTEN_BYTES of output are not taken by the client —
// a client that floods or stops reading holds the bridge near its idle size, not at GBs.
//
// If the host goes away mid-session, the bridge moves to the host again (if it is back) or to
// serving in its own process, replaying the client's opening (initialize, initialized, its log
// level and resource subscriptions) so the session goes on. Requests the lost host had not
// answered are sent again on the new upstream when repeating them is harmless (every request but
// a tools/call of a tool not marked read-only or idempotent); those others end with an error.
// stdout carries protocol only: every log line goes to stderr.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../platform/log.ts';
import { openClientStdio } from './client-stdio.ts';
import {
  hasAppDatabase,
  hostServerOf,
  readWorktreeRecord,
  worktreeRootOf,
  type HostServer,
  type WorktreeRecord,
} from './find-host.ts';
import {
  errorAnswer,
  idOf,
  INTERNAL_ERROR,
  isAnswer,
  isRequest,
  methodOf,
  type JSONRPCMessage,
  type Request,
  type RequestId,
} from './json-rpc.ts';
import { UpstreamLost, type Upstream, type UpstreamHandlers } from './upstreams.ts';

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

/**
 * Most client requests with the upstream at once. A worktree server runs 16 calls per legacy
 * session (main/mcp/server-factory.ts MAX_CALLS_PER_SESSION): more would only be refused there.
 */
export const MAX_IN_FLIGHT = 16;

/**
 * Most client messages read and waiting for a slot (as a worktree server lets 256 calls wait);
 * past it stdin is not read until some are sent.
 */
export const MAX_WAITING = 256;

/**
 * Output the client has not read past which the bridge stops reading stdin and sending requests
 * upstream: 8 MiB holds ~200 tools/list answers or two of the largest (4 MiB) reads, so a client
 * that reads never meets it. Answers to the requests already in flight are still written.
 */
export const MAX_UNWRITTEN_BYTES = 8 * 1024 * 1024;

/**
 * Unread output past which notifications for the client (progress, log lines) are dropped: the
 * SSE side's per-stream cap (main/mcp/sse-transport.ts MAX_SSE_BACKLOG_BYTES), past which a
 * worktree server cuts a client that stopped reading.
 */
export const MAX_UNWRITTEN_NOTIFICATION_BYTES = 32 * 1024 * 1024;

/** How often, at most, a bridge serving the worktree itself looks whether the host is back. */
const HOST_RECHECK_MS = 2_000;

/** How long a replayed opening may take on a new upstream. */
const REPLAY_TIMEOUT_MS = 15_000;

/** What the app database and a health check say about the worktree's host. */
interface HostLookup {
  record?: WorktreeRecord;
  host?: HostServer | undefined;
}

/** The client messages a new upstream must see again for the session to go on. */
interface Opening {
  /** The client's initialize, once it was answered. */
  initialize?: Request;
  initialized: boolean;
  logLevel?: Request;
  subscriptions: Map<string, Request>;
}

/** A client request with an upstream. */
interface InFlight {
  upstream: Upstream;
  /** The upstream has it (its send resolved). */
  delivered: boolean;
  request: Request;
}

/**
 * What the app database says before any git runs, for a path that is a worktree it records: its
 * host's server when that answers (the host discovered the worktree when it opened it, so the
 * bridge need not), and whether the bridge will most likely serve the worktree itself (no app
 * database, no host answering, a database it cannot read) — then it loads its own server while
 * git finds the worktree.
 */
async function firstLook(
  dataDir: string,
  realPath: string,
): Promise<{ lookup?: HostLookup; local: boolean }> {
  if (!hasAppDatabase(dataDir)) return { local: true };
  try {
    const record = readWorktreeRecord(dataDir, realPath);
    // Not recorded: perhaps a directory inside a worktree the host serves.
    if (record === undefined) return { local: false };
    const host = await hostServerOf(record);
    return host === undefined ? { local: true } : { lookup: { record, host }, local: false };
  } catch {
    return { local: true }; // said with a warning once the worktree is known
  }
}

export async function runBridge(options: BridgeOptions): Promise<RunningBridge> {
  const { log } = options;
  const real = await realpath(path.resolve(options.worktreePath)).catch(() => undefined);
  const first =
    real === undefined
      ? { local: false }
      : options.local
        ? { local: true }
        : await firstLook(options.dataDir, real);
  const fastLookup = 'lookup' in first ? first.lookup : undefined;
  // Loads while git runs (a module-loading failure is met again when it is used).
  if (first.local) import('./local-upstream.ts').catch(() => undefined);
  const root = fastLookup ? real! : await worktreeRootOf(options.worktreePath);
  const opening: Opening = { initialized: false, subscriptions: new Map() };
  /**
   * Client requests sent upstream and not answered yet. A request still being sent when its
   * upstream is lost is handled by its own send's failure (sent again, or answered with the
   * error), not by the move.
   */
  const pending = new Map<RequestId, InFlight>();
  /** Client messages read and not yet sent, oldest first (requests wait for a slot). */
  const waiting: JSONRPCMessage[] = [];
  /** Requests of the upstream to the client (sampling, roots...), by id: where the answer goes. */
  const serverRequests = new Map<RequestId, Upstream>();
  /** Answers to replayed requests, which the client never sees. */
  const replayWaiters = new Map<RequestId, (message: JSONRPCMessage) => void>();
  /** Tools whose calls may be sent again after a lost host (read-only or idempotent). */
  const repeatableTools = new Set<string>();
  let replays = 0;
  let closing = false;
  let droppedNotifications = 0;
  /** The upstream in use (set once connected). */
  let current!: Upstream;
  /** While the bridge moves to a new upstream, messages wait for it. */
  let moving: Promise<Upstream> | undefined;

  const stdio = openClientStdio({
    input: options.input ?? process.stdin,
    output: options.output ?? process.stdout,
    onmessage: (message) => receive(message),
    onclose: () => void close(),
    onwarning: (message) => log.warn(message),
    onanswered: () => updateFlow(),
  });
  stdio.pause(); // until an upstream is there

  const reply = (message: JSONRPCMessage, text?: string): void => {
    if (!closing) stdio.send(message, text);
  };
  const failCall = (id: RequestId, message: string): void =>
    reply(errorAnswer(id, INTERNAL_ERROR, message));

  /** Waiting for stdout's 'drain' (the client has taken what was written). */
  let awaitingDrain = false;
  /** Reads stdin while little waits and the client takes its output; else stops reading. */
  const updateFlow = (): void => {
    if (closing) return;
    if (stdio.unwritten() >= MAX_UNWRITTEN_BYTES) {
      stdio.pause();
      if (!awaitingDrain) {
        awaitingDrain = true;
        stdio.onDrain(() => {
          awaitingDrain = false;
          pump();
        });
      }
    } else if (waiting.length >= MAX_WAITING || moving !== undefined) stdio.pause();
    else stdio.resume();
  };

  /**
   * Sends waiting messages, in order, while slots are free and the client takes its output (a
   * request sent now would only add its answer to what the client has not read).
   */
  const pump = (): void => {
    while (waiting.length > 0 && !closing) {
      const next = waiting[0]!;
      if (
        isRequest(next) &&
        (pending.size >= MAX_IN_FLIGHT || stdio.unwritten() >= MAX_UNWRITTEN_BYTES)
      ) {
        break;
      }
      waiting.shift();
      send(next);
    }
    updateFlow();
  };

  /** The answers of tools/list: which tools may be called again after a lost host. */
  const learnTools = (result: unknown): void => {
    const tools = (result as { tools?: unknown } | undefined)?.tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as { name?: unknown; annotations?: Record<string, unknown> }[]) {
      if (typeof tool?.name !== 'string') continue;
      const hints = tool.annotations;
      if (hints?.readOnlyHint === true || hints?.idempotentHint === true) {
        repeatableTools.add(tool.name);
      } else repeatableTools.delete(tool.name);
    }
  };

  const handlersFor = (getSelf: () => Upstream | undefined): UpstreamHandlers => ({
    onmessage(message, text) {
      const self = getSelf();
      if (isAnswer(message)) {
        const id = idOf(message);
        if (id !== undefined && replayWaiters.has(id)) {
          replayWaiters.get(id)!(message);
          replayWaiters.delete(id);
          return;
        }
        // An answer only from the upstream the request went to: a late one from a lost upstream
        // was already answered with the move's error (or sent again elsewhere).
        const entry = id === undefined ? undefined : pending.get(id);
        if (entry === undefined || entry.upstream !== self) {
          log.debug(
            `dropped an answer to ${String(id)} from ${self?.description ?? 'a closed one'}`,
          );
          return;
        }
        pending.delete(id!);
        if ('result' in message) {
          if (entry.request.method === 'initialize') opening.initialize = entry.request;
          if (entry.request.method === 'tools/list') learnTools(message.result);
        }
        reply(message, text);
        pump();
        return;
      }
      if (isRequest(message) && self !== undefined) serverRequests.set(message.id, self);
      else if (!isRequest(message) && stdio.unwritten() >= MAX_UNWRITTEN_NOTIFICATION_BYTES) {
        // The client has not read 32 MiB: a progress or log line more would only pile up.
        if (droppedNotifications++ === 0) {
          log.warn('the client is not reading its output; notifications for it are dropped');
        }
        return;
      }
      reply(message, text);
      updateFlow();
    },
    onlost(reason) {
      const self = getSelf();
      // A failed move is tried again by the next message (send); it must not end the process.
      if (self !== undefined) moveFrom(self, reason, 'warn').catch(() => undefined);
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
    if (host) {
      const { connectToHost } = await import('./host-upstream.ts');
      made.upstream = await connectToHost(host, handlers);
    } else {
      const { serveLocally } = await import('./local-upstream.ts');
      made.upstream = await serveLocally(root, handlers, log, {
        justTasks: record?.justTasks ?? false,
      });
    }
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
      let timer: NodeJS.Timeout | undefined;
      const answered = new Promise<JSONRPCMessage>((resolve, reject) => {
        replayWaiters.set(id, resolve);
        timer = setTimeout(() => {
          replayWaiters.delete(id);
          reject(new Error(`no answer to ${request.method}`));
        }, REPLAY_TIMEOUT_MS);
      });
      await upstream.send({ ...request, id } as JSONRPCMessage);
      const answer = await answered.finally(() => clearTimeout(timer));
      if ('error' in answer) {
        throw new Error(
          `${request.method} refused: ${(answer.error as { message: string }).message}`,
        );
      }
      if (index === 0 && opening.initialize !== undefined && opening.initialized) {
        await upstream.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      }
    }
  };

  current = await connect(fastLookup);
  log.info(`serving ${root} through ${current.description}`);

  /** Whether a request the lost upstream had may be sent again: repeating it changes nothing. */
  const repeatable = (request: Request): boolean => {
    if (request.method !== 'tools/call') return true;
    const name = request.params?.name;
    return typeof name === 'string' && repeatableTools.has(name);
  };

  /**
   * Leaves a lost (or, with `lookup`, a no longer wanted) upstream for a new one. `level`: warn
   * when the host was lost, info when the bridge goes back to a host that is back.
   */
  const moveFrom = (
    lost: Upstream,
    reason: string,
    level: 'warn' | 'info',
    lookup?: HostLookup,
  ): Promise<Upstream> => {
    if (lost !== current) return moving ?? Promise.resolve(current);
    moving ??= (async () => {
      updateFlow();
      const again: InFlight[] = [];
      let failed = 0;
      for (const [id, entry] of pending) {
        if (entry.upstream !== lost || !entry.delivered) continue;
        if (repeatable(entry.request)) {
          again.push(entry);
          continue;
        }
        pending.delete(id);
        failCall(id, `${reason} during this call; the bridge has reconnected, call again`);
        failed++;
      }
      const told = [
        again.length > 0 ? `${again.length} call(s) in flight sent again` : '',
        failed > 0 ? `${failed} call(s) in flight end with an error` : '',
      ].filter(Boolean);
      log[level](told.length > 0 ? `${reason}; ${told.join(', ')}` : reason);
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
      log[level](`now serving ${root} through ${next.description}`);
      current = next;
      // The new upstream may offer other tools (the host's just tasks are never served here).
      if (opening.initialized) {
        reply({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      }
      for (const entry of again) {
        if (pending.get(entry.request.id) !== entry) continue; // answered meanwhile
        pending.delete(entry.request.id);
        send(entry.request as JSONRPCMessage, true);
      }
      return next;
    })().finally(() => {
      moving = undefined;
      pump();
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
      ![...pending.values()].some((entry) => entry.upstream === current);
    if (options.local || !idle() || Date.now() - lastHostCheck < HOST_RECHECK_MS) return;
    lastHostCheck = Date.now();
    const lookup = await lookForHost(false);
    if (lookup.host === undefined || !idle()) return;
    await moveFrom(current, 'the Grove host is back', 'info', lookup).catch(() => undefined);
  };

  const remember = (message: JSONRPCMessage): void => {
    const method = methodOf(message);
    if (method === 'notifications/initialized') opening.initialized = true;
    if (!isRequest(message)) return;
    const uri = message.params?.uri;
    if (method === 'logging/setLevel') opening.logLevel = message;
    else if (method === 'resources/subscribe' && typeof uri === 'string') {
      opening.subscriptions.set(uri, message);
    } else if (method === 'resources/unsubscribe' && typeof uri === 'string') {
      opening.subscriptions.delete(uri);
    }
  };

  /**
   * One client message to the upstream in use; sent again once if it never reached a lost one.
   * `resent`: a request the lost upstream had, already remembered.
   */
  const forward = async (message: JSONRPCMessage, resent: boolean): Promise<void> => {
    if (!resent) remember(message);
    // No await on the way to the upstream unless one is needed: messages reach it in the order the
    // client sent them (a notification must not overtake the initialize before it).
    if (isRequest(message) && current.kind === 'local' && !options.local) {
      await returnToHostIfBack();
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      // A failed move leaves the lost upstream current: sending to it fails, which moves again.
      const upstream = moving ? await moving.catch(() => current) : current;
      if (closing) return;
      if (isAnswer(message)) {
        // An answer to a request of the upstream goes to that upstream, if it is still there.
        const asker = serverRequests.get(idOf(message)!);
        serverRequests.delete(idOf(message)!);
        if (asker !== upstream) return;
      }
      const entry = isRequest(message)
        ? { upstream, delivered: false, request: message }
        : undefined;
      if (entry !== undefined) pending.set(entry.request.id, entry);
      try {
        await upstream.send(message);
        if (entry !== undefined) entry.delivered = true;
        return;
      } catch (error) {
        const lost = error instanceof UpstreamLost;
        if (lost) await moveFrom(upstream, error.message, 'warn').catch(() => undefined);
        if (lost && !error.delivered && attempt === 0) continue; // never arrived: send it again
        if (entry !== undefined && pending.get(entry.request.id) === entry) {
          pending.delete(entry.request.id);
          failCall(entry.request.id, error instanceof Error ? error.message : String(error));
          pump();
        }
        if (entry === undefined) log.warn(`not delivered: ${String(error)}`);
        return;
      }
    }
  };

  const send = (message: JSONRPCMessage, resent = false): void => {
    forward(message, resent).catch((error: unknown) => log.error(`forwarding: ${String(error)}`));
  };

  /** A message from the client: sent now, or queued behind others while the slots are taken. */
  const receive = (message: JSONRPCMessage): void => {
    if (closing) return;
    const method = methodOf(message);
    if (isAnswer(message)) {
      // An answer to the server's request unblocks a call in flight: it never waits.
      send(message);
      return;
    }
    if (method === 'notifications/cancelled') {
      // A request still waiting here is dropped (the client expects no answer to it); one in
      // flight hears of its cancellation at once, ahead of whatever waits.
      const params = (message as { params?: { requestId?: unknown } }).params;
      const index = waiting.findIndex(
        (queued) => isRequest(queued) && queued.id === params?.requestId,
      );
      if (index !== -1) {
        waiting.splice(index, 1);
        updateFlow();
      } else send(message);
      return;
    }
    if (isRequest(message) && pending.has(message.id)) {
      reply(errorAnswer(message.id, -32600, `Invalid Request: id ${String(message.id)} is in use`));
      return;
    }
    waiting.push(message);
    pump();
  };

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const close = async (): Promise<void> => {
    if (closing) return closed;
    closing = true;
    stdio.close();
    await (moving ?? Promise.resolve(current)).catch(() => current);
    await current.close().catch(() => undefined);
    resolveClosed();
    return closed;
  };
  updateFlow();

  return {
    root,
    get upstream() {
      return current.kind;
    },
    closed,
    close,
  };
}
