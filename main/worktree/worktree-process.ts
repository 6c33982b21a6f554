// Entry point of one worktree process: owns that worktree's MCP listener and its reconciliation
// service (engine, tools, watcher: main/tools/reconcile-service.ts, which loads the engine only
// after `listening`). Started by the host with child_process.fork (headless, tests) or Electron's
// utilityProcess (app); talks to the host only through the messages in worktree-protocol.ts. A
// crash here never touches the host or other worktrees.
import { LISTEN_HOST } from '../mcp/http-answers.ts';
import {
  createMcpListener,
  type McpListener,
  type McpListenerOptions,
} from '../mcp/mcp-listener.ts';
import { createFileLayerProbe, realWorktreeRoot } from '../platform/confined-fs.ts';
import { ClientRegistry } from './client-registry.ts';
import { claimPort } from './port-claim.ts';
import type { ReconcileService } from '../tools/reconcile-service.ts';
import { createWorktreeServer, type WorktreeServer } from './worktree-server.ts';
import { createIdleMemoryReclaimer } from './idle-memory.ts';
import { createLogger } from '../platform/log.ts';
import { UserError } from '../platform/errors.ts';
import {
  HostToWorktreeSchema,
  type HostToWorktree,
  type WorktreeToHost,
} from '../../shared/worktree-protocol.ts';

/** The channel to the host: process.send under fork, parentPort under utilityProcess. */
interface HostChannel {
  send(message: WorktreeToHost): void;
  onMessage(listener: (message: unknown) => void): void;
  onDisconnect(listener: () => void): void;
  /** Resolves once every message sent so far has been handed to the OS (or failed). */
  written(): Promise<void>;
}

/** How long a stopping process waits for its last messages (the final activity) to be written. */
const LAST_MESSAGES_WAIT_MS = 1_000;

/** Electron's utilityProcess gives the child `process.parentPort` instead of process.send. */
interface ParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

function hostChannel(): HostChannel {
  const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;
  if (parentPort) {
    return {
      send: (message) => parentPort.postMessage(message),
      onMessage: (listener) => parentPort.on('message', (event) => listener(event.data)),
      // A utility process is ended by Electron with the app; there is no disconnect event.
      onDisconnect: () => undefined,
      // postMessage queues synchronously on Electron's side.
      written: () => Promise.resolve(),
    };
  }
  if (!process.send) throw new Error('worktree-process must be started by the Grove host');
  let unwritten = 0;
  const allWritten: (() => void)[] = [];
  return {
    // When the host has gone the write fails (EPIPE); the disconnect listener ends this process,
    // so the failed send must not become an uncaught exception first.
    send: (message) => {
      unwritten++;
      const sent = process.send?.(message, undefined, undefined, () => {
        if (--unwritten === 0) for (const resolve of allWritten.splice(0)) resolve();
      });
      if (sent === undefined) unwritten--;
    },
    onMessage: (listener) => process.on('message', listener),
    onDisconnect: (listener) => process.on('disconnect', listener),
    written: () =>
      unwritten === 0 ? Promise.resolve() : new Promise((resolve) => allWritten.push(resolve)),
  };
}

export function runWorktreeProcess(channel: HostChannel): void {
  let listener: McpListener | undefined;
  /** The latest token settings (a set-token may arrive while the listener is still starting). */
  let access: { token: string; requireToken: boolean } | undefined;
  let stopping = false;
  /** The reconciliation engine, tools and watcher; `reconcileBase` may arrive before start. */
  let reconcile: ReconcileService | undefined;
  let reconcileBase: string | undefined;
  /** The just task tools: off until the host says otherwise (set-just-tasks). */
  let justTasks = false;
  let server: WorktreeServer | undefined;
  /** The real worktree root, once `start` resolved it (decision requests need it). */
  let worktreeRoot: string | undefined;
  const idleMemory = createIdleMemoryReclaimer();
  // Records go to the host, which writes them to its log file (and warnings to its stderr).
  const log = createLogger([(record) => channel.send({ type: 'log', record })]);
  /** Started with the server: the file layer's health, reported with every pong. */
  let fileLayerProbe: ReturnType<typeof createFileLayerProbe> | undefined;
  const clients = new ClientRegistry({
    onClients: (list, healthChecks) =>
      channel.send({
        type: 'clients',
        clients: list,
        ...(healthChecks > 0 ? { healthChecks } : {}),
      }),
    onActivity: (entries) => channel.send({ type: 'activity', entries }),
    onRunningCalls: (calls) => channel.send({ type: 'running-calls', calls }),
  });

  const shutdown = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true;
      idleMemory.close();
      fileLayerProbe?.close();
      await listener?.close().catch(() => undefined);
      await reconcile?.close().catch(() => undefined);
      // The calls that ended (the last one perhaps a few ms ago) reach the host before the exit:
      // it keeps them in the app database.
      clients.flush();
      clients.close();
      await Promise.race([
        channel.written(),
        new Promise((resolve) => setTimeout(resolve, LAST_MESSAGES_WAIT_MS).unref()),
      ]);
    }
    process.exit(code);
  };

  const fail = (message: string): void => {
    channel.send({ type: 'fatal', message });
    void shutdown(1);
  };

  const handle = async (message: HostToWorktree): Promise<void> => {
    switch (message.type) {
      case 'start': {
        if (listener) return;
        let root: string;
        try {
          root = await realWorktreeRoot(message.root);
        } catch (error) {
          return fail((error as Error).message);
        }
        worktreeRoot = root;
        access ??= { token: message.token, requireToken: message.requireToken };
        fileLayerProbe = createFileLayerProbe(root);
        const assembled = createWorktreeServer({
          root,
          base: reconcileBase,
          justTasks,
          onRunningTasks: (tasks) => {
            channel.send({
              type: 'running-tasks',
              tasks: tasks.map(({ id, task, args, startedAt, clientName }) => ({
                id,
                task,
                args,
                startedAt,
                clientName,
              })),
            });
          },
          // Once shutting down, a state computed meanwhile is no longer news for the host.
          onState: (state) => {
            if (!stopping) channel.send({ type: 'reconcile-state', state });
          },
          onWarning: (warning) => {
            log.warn(warning);
            listener?.log('warning', warning);
          },
          // get_project_context reports the server's own URLs once it is bound.
          serverUrls: () =>
            listener === undefined
              ? undefined
              : {
                  sse: `http://${LISTEN_HOST}:${listener.port}/sse`,
                  streamable_http: `http://${LISTEN_HOST}:${listener.port}/mcp`,
                },
        });
        server = assembled;
        const service = assembled.reconcile;
        reconcile = service;
        const settings: Omit<McpListenerOptions, 'port'> = {
          root,
          ...access,
          isToolOffered: assembled.isToolOffered,
          instructions: assembled.instructions,
          loadServerParts: assembled.loadServerParts,
          serverInfo: assembled.serverInfo,
          onClientEvent: (event) => clients.handle(event),
          onRequest: idleMemory.activity,
          onError: (error) => log.child('mcp').error(error.message),
        };
        const started = await claimPort((port) => createMcpListener({ ...settings, port }), {
          port: message.port,
          avoidPorts: message.avoidPorts ?? [],
          token: access.token,
          onWaiting: (detail) => channel.send({ type: 'waiting', detail }),
        });
        listener = started;
        started.setAccess(access); // a set-token may have arrived during listen
        // A set-just-tasks may have arrived during listen.
        if (assembled.setJustTasks(justTasks)) started.notify.toolsChanged();
        channel.send({
          type: 'listening',
          port: started.port,
          requestedPort: started.port === message.port ? null : message.port,
        });
        // Loading the engine, the first state and the watcher come after `listening`: neither the
        // engine's modules nor a big repo may delay it (reconcile-service.ts: eager vs lazy).
        service.start(started).catch((error: unknown) => {
          const message = `reconciliation: ${error instanceof Error ? error.message : String(error)}`;
          log.warn(message);
          started.log('warning', message);
        });
        return;
      }
      case 'set-reconcile-base':
        reconcileBase = message.base;
        reconcile?.setBase(message.base);
        return;
      case 'set-just-tasks':
        justTasks = message.enabled;
        // Open sessions get the new list and every client a tools/list_changed.
        if (server?.setJustTasks(message.enabled)) listener?.notify.toolsChanged();
        return;
      case 'set-token':
        access = { token: message.token, requireToken: message.requireToken };
        listener?.setAccess(access);
        return;
      case 'cancel-call':
        listener?.cancelCall(message.callId, 'cancelled from the Grove window');
        return;
      case 'stop-task':
        server?.stopTask(message.runId, 'from the Grove window');
        return;
      case 'undo-mark': {
        const { requestId } = message;
        try {
          if (!reconcile) throw new Error('the server is not running');
          const result = await (await reconcile.engine()).undoMark(message.markId);
          channel.send({ type: 'undo-mark-result', requestId, result });
        } catch (error) {
          const text = error instanceof Error ? error.message : String(error);
          channel.send({ type: 'undo-mark-result', requestId, error: text });
        }
        return;
      }
      case 'decision-request':
        answerDecision(message.requestId, message.request);
        return;
      case 'ping':
        channel.send({
          type: 'pong',
          id: message.id,
          toolLayerPendingMs: fileLayerProbe?.pendingMs() ?? 0,
        });
        return;
      case 'shutdown':
        await shutdown(0);
    }
  };

  /** Answers one decision request, in the background (the process keeps answering pings). */
  const answerDecision = (requestId: number, request: unknown): void => {
    const root = worktreeRoot;
    const answer = async (): Promise<unknown> => {
      if (root === undefined) {
        throw new UserError('the server has not started yet', { code: 'unavailable' });
      }
      const { answerDecisionRequest } = await import('./decision-requests.ts');
      return answerDecisionRequest(root, request);
    };
    answer().then(
      (result) => channel.send({ type: 'decision-answer', requestId, ok: true, result }),
      (error: unknown) => {
        if (!(error instanceof UserError)) log.error(`decision request: ${String(error)}`);
        channel.send({
          type: 'decision-answer',
          requestId,
          ok: false,
          message: error instanceof Error ? error.message : String(error),
          ...(error instanceof UserError ? { code: error.code } : {}),
        });
      },
    );
  };

  channel.onMessage((raw) => {
    const parsed = HostToWorktreeSchema.safeParse(raw);
    if (!parsed.success) return fail(`invalid message from host: ${parsed.error.message}`);
    handle(parsed.data).catch((error: unknown) =>
      fail(error instanceof Error ? error.message : String(error)),
    );
  });
  // The host went away (crashed or was killed): never outlive it.
  channel.onDisconnect(() => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  process.on('SIGINT', () => void shutdown(0));
}

runWorktreeProcess(hostChannel());
