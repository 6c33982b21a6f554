// What one worktree's MCP server offers, assembled once for every way Grove serves it: the file
// tools, the reconciliation service (engine, tools, instructions, prompts, spec resources and the
// watcher) and the server's name. The worktree process hands these to its HTTP listener
// (worktree-process.ts); `grove bridge` without a running host serves them over stdio
// (main/bridge/). One assembly, so both offer exactly the same tools.
import type { ReconcileState } from '../../shared/reconcile.ts';
import { createFileTools } from '../tools/index.ts';
import { createJustTasks } from '../tools/just-tasks.ts';
import type { ServerEndpoints } from '../tools/get-project-context.ts';
import { createReconcileService, type ReconcileService } from '../tools/reconcile-service.ts';
import type { ServerExtension, ToolDefinition } from '../tools/tool-definition.ts';
import { GROVE_VERSION } from '../platform/version.ts';

export interface WorktreeServerOptions {
  /** Real path of the worktree root. */
  root: string;
  /** Base branch of the reconciliation state's `affected` figures (default: the repo's default). */
  base?: string | undefined;
  /** The reconciliation state, after start and whenever it changes. */
  onState: (state: ReconcileState) => void;
  /** Problems worth telling someone (watching impossible, a computation failed). */
  onWarning: (message: string) => void;
  /** The server's own URLs, for get_project_context (undefined while unbound, or over stdio). */
  serverUrls: () => ServerEndpoints | undefined;
  /** Offer the just task tools from the start (default off; setJustTasks changes it). */
  justTasks?: boolean;
}

export interface WorktreeServer {
  readonly reconcile: ReconcileService;
  /**
   * Every tool the server may offer, opt-in ones included: what a listener registers, with
   * `isToolOffered` saying which are offered now (McpListenerOptions.isToolOffered).
   */
  readonly allTools: readonly ToolDefinition[];
  isToolOffered(name: string): boolean;
  /**
   * Turns the just task tools on or off; true when that changed the offered tools (the caller
   * then sends tools/list_changed: McpListener.notify.toolsChanged).
   */
  setJustTasks(enabled: boolean): boolean;
  readonly instructions: string;
  readonly serverInfo: { name: string; version: string };
  /**
   * Loads what registers the prompts and spec resources on a server (with the MCP SDK: the
   * listener calls it on its first MCP request; McpListenerOptions.loadServerExtension).
   */
  loadServerExtension(): Promise<ServerExtension>;
}

/** Cheap and synchronous: the engine loads when reconcile.start() or the first call needs it. */
export function createWorktreeServer(options: WorktreeServerOptions): WorktreeServer {
  const reconcile = createReconcileService({
    root: options.root,
    base: options.base,
    onState: options.onState,
    onWarning: options.onWarning,
  });
  const justTasks = createJustTasks();
  let justTasksOn = options.justTasks === true;
  const optIn = new Set(justTasks.tools.map((tool) => tool.name));
  const allTools = createFileTools({
    specSummary: (signal) => reconcile.specSummary(signal),
    serverUrls: options.serverUrls,
    activeTasks: {
      enabled: () => justTasksOn,
      running: () => justTasks.running(),
      recipes: async (root, signal) =>
        (await justTasks.listRecipes(root, signal)).recipes.map((recipe) => recipe.name),
    },
  })
    .concat(reconcile.tools)
    .concat(justTasks.tools);
  const isToolOffered = (name: string): boolean => justTasksOn || !optIn.has(name);
  return {
    reconcile,
    allTools,
    isToolOffered,
    setJustTasks(enabled) {
      const changed = enabled !== justTasksOn;
      justTasksOn = enabled;
      return changed;
    },
    instructions: reconcile.instructions,
    serverInfo: { name: 'grove', version: GROVE_VERSION },
    loadServerExtension: () => reconcile.loadServerExtension(),
  };
}
