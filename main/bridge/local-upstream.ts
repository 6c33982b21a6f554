// `grove bridge` serving the worktree in its own process (no host answers, or `--local`): the same
// tools, prompts and resources as the worktree's server in the host, assembled by
// main/worktree/worktree-server.ts. bridge.ts imports this module only when it serves locally, so
// a bridge forwarding to the host never loads the engine or the MCP SDK.
import {
  InMemoryTransport,
  type JSONRPCMessage,
  type McpServer,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../platform/log.ts';
import { createServerFactory } from '../mcp/server-factory.ts';
import { createWorktreeServer } from '../worktree/worktree-server.ts';
import type { Upstream, UpstreamHandlers } from './upstreams.ts';

/** How long closing waits for the engine to stop before the bridge exits anyway. */
const CLOSE_WAIT_MS = 20;

/** The engine starts at the latest this long after the server is ready (see startEngine). */
const ENGINE_START_DELAY_MS = 1_000;

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
  const notifyFailed = (error: unknown): void =>
    log.debug(`notification not sent: ${String(error)}`);
  let engineStarted = false;
  /**
   * The engine (reconciliation: a scan of the worktree, its watcher, workers) starts once the
   * server has answered the client's first request, or after ENGINE_START_DELAY_MS: started
   * before, it competes with the `initialize` answer the client waits for.
   */
  const startEngine = (): void => {
    if (engineStarted) return;
    engineStarted = true;
    clearTimeout(engineTimer);
    worktree.reconcile
      .start({
        notify: {
          resourceUpdated: (uri) => pinned?.server.sendResourceUpdated({ uri }).catch(notifyFailed),
          resourcesChanged: () => pinned?.server.sendResourceListChanged().catch(notifyFailed),
          toolsChanged: () => pinned?.server.sendToolListChanged().catch(notifyFailed),
        },
      })
      .catch((error: unknown) => log.warn(`reconciliation: ${String(error)}`));
  };
  const engineTimer = setTimeout(startEngine, ENGINE_START_DELAY_MS);
  bridgeEnd.onmessage = (message) => {
    handlers.onmessage(message);
    if (!engineStarted) setImmediate(startEngine);
  };
  await bridgeEnd.start();
  return {
    description: 'this process',
    kind: 'local',
    send: (message: JSONRPCMessage) => bridgeEnd.send(message),
    async close() {
      // The client is gone and waits for the process to exit (Claude Code sends SIGTERM after
      // ~100 ms): stopping the watcher and the workers gets a moment, not more; the cache
      // database is written in transactions, so an exit mid-way loses nothing committed.
      engineStarted = true;
      clearTimeout(engineTimer);
      const stopped = (async () => {
        await served.close().catch(() => undefined);
        await worktree.reconcile.close().catch(() => undefined);
      })();
      await Promise.race([
        stopped,
        new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref()),
      ]);
    },
  };
}
