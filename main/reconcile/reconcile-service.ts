// The reconciliation side of one worktree process, assembled: the engine (one per worktree,
// shared by every MCP session), its six tools, the server instructions, prompts and spec
// resources (extendServer), and the watcher that keeps the ReconcileState current, reports it
// (`onState`) and tells connected clients when specs change. worktree-process.ts creates one
// service at start and hands its parts to the MCP listener.
import type { McpServer } from '@modelcontextprotocol/server';
import type { ReconcileState } from '../../shared/reconcile.ts';
import type { ListenerNotifier } from '../mcp/mcp-listener.ts';
import type { ToolDefinition } from '../tools/tool-definition.ts';
import { ReconcileEngine } from './reconcile-engine.ts';
import { RECONCILE_INSTRUCTIONS, registerReconcileMcp, specResourceUri } from './reconcile-mcp.ts';
import { createReconcileTools } from './reconcile-tools.ts';
import { ReconcileWatcher } from './reconcile-watcher.ts';
import type { SpecChanges } from './reconcile-watcher.ts';

export interface ReconcileServiceOptions {
  /** Real path of the worktree root. */
  root: string;
  /** Base for the state's `affected` figures; default: the repository's default branch. */
  base?: string | undefined;
  onState: (state: ReconcileState) => void;
  /** Problems worth telling someone (watching impossible, a computation failed). */
  onWarning?: (message: string) => void;
}

/** The listener's side the service needs: notifications to clients. */
export interface NotifyingListener {
  readonly notify: ListenerNotifier;
}

export interface ReconcileService {
  readonly engine: ReconcileEngine;
  readonly tools: ToolDefinition[];
  readonly instructions: string;
  /** For McpListenerOptions.extendServer: prompts, spec resources, subscriptions. */
  extendServer(server: McpServer): void;
  /**
   * Finds the default base (unless one was given), computes the first state and starts watching;
   * call it after the listener is up, so spec changes can be announced.
   */
  start(listener: NotifyingListener): Promise<void>;
  setBase(base: string): void;
  /** The base in use (`main` until start() has found the repository's default branch). */
  readonly base: string;
  close(): Promise<void>;
}

/** Cheap and synchronous: nothing touches git or the disk until start(). */
export function createReconcileService(options: ReconcileServiceOptions): ReconcileService {
  const engine = new ReconcileEngine({ root: options.root });
  /** Until start() finds the repository's default branch, prompts propose `main`. */
  let base = options.base;
  let watcher: ReconcileWatcher | undefined;
  const warn = (message: string): void => options.onWarning?.(message);

  const announce = (listener: NotifyingListener, changes: SpecChanges): void => {
    for (const specPath of [...changes.updated, ...changes.added, ...changes.removed]) {
      listener.notify.resourceUpdated(specResourceUri(specPath));
    }
    if (changes.added.length > 0 || changes.removed.length > 0) listener.notify.resourcesChanged();
  };

  return {
    engine,
    tools: createReconcileTools(engine),
    instructions: RECONCILE_INSTRUCTIONS,
    extendServer: (server) =>
      registerReconcileMcp(server, { root: options.root, defaultBase: () => base ?? 'main' }),
    get base() {
      return base ?? 'main';
    },
    async start(listener) {
      if (watcher) return;
      base ??= await engine.defaultBase().catch(() => 'main');
      watcher = new ReconcileWatcher({
        engine,
        base,
        onState: (state) => {
          for (const warning of state.warnings) warn(warning);
          options.onState(state);
        },
        onSpecsChanged: (changes) => announce(listener, changes),
        onError: (error) => warn(`reconciliation: ${error.message}`),
      });
      await watcher.start();
    },
    setBase(next) {
      base = next;
      watcher?.setBase(next);
    },
    async close() {
      await watcher?.close();
      engine.close();
    },
  };
}
