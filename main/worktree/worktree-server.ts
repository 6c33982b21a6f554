// What one worktree's MCP server offers, assembled once for every way Grove serves it: the file
// tools, the reconciliation service (engine, tools, instructions, prompts, spec resources and the
// watcher) and the server's name. The worktree process hands these to its HTTP listener
// (worktree-process.ts); `grove bridge` without a running host serves them over stdio
// (main/bridge/). One assembly, so both offer exactly the same tools. The tools themselves load
// with the first MCP request (loadServerParts), not with the process.
import type { ReconcileState } from '../../shared/reconcile.ts';
import type { ServerEndpoints } from '../tools/get-project-context.ts';
import { createReconcileService, type ReconcileService } from '../tools/reconcile-service.ts';
import type { ServerParts } from '../tools/tool-definition.ts';
import type { JustTasks, RunningTask } from '../tools/just-tasks.ts';
import { JUST_TASK_TOOL_NAMES } from '../tools/tool-constants.ts';
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
  /** The just tasks running, whenever one starts or ends. */
  onRunningTasks?: (tasks: RunningTask[]) => void;
}

export interface WorktreeServer {
  readonly reconcile: ReconcileService;
  /**
   * Loads every tool the server may offer, opt-in ones included, and the reconciliation
   * prompts and resources: what a listener registers on each server, with `isToolOffered` saying
   * which tools are offered now (McpListenerOptions.loadServerParts, called once, and isToolOffered).
   */
  loadServerParts(): Promise<ServerParts>;
  isToolOffered(name: string): boolean;
  /**
   * Turns the just task tools on or off; true when that changed the offered tools (the caller
   * then sends tools/list_changed: McpListener.notify.toolsChanged).
   */
  setJustTasks(enabled: boolean): boolean;
  /** Stops a running just task (`by` says who, in its client's error); false when none has that id. */
  stopTask(runId: string, by: string): boolean;
  readonly instructions: string;
  readonly serverInfo: { name: string; version: string };
}

/**
 * Cheap and synchronous: the engine loads when reconcile.start() or the first call needs it, the
 * tools when the listener's first MCP request (or the bridge) asks for loadServerParts().
 */
export function createWorktreeServer(options: WorktreeServerOptions): WorktreeServer {
  const reconcile = createReconcileService({
    root: options.root,
    base: options.base,
    onState: options.onState,
    onWarning: options.onWarning,
  });
  let justTasksOn = options.justTasks === true;
  const optIn = new Set(JUST_TASK_TOOL_NAMES);
  /** The just tasks, once the tools are loaded. */
  let justTasks: JustTasks | undefined;
  const loadServerParts = async (): Promise<ServerParts> => {
    const [{ createFileTools }, { createJustTasks }, reconcileParts] = await Promise.all([
      import('../tools/index.ts'),
      import('../tools/just-tasks.ts'),
      reconcile.loadServerParts(),
    ]);
    const created = createJustTasks(
      options.onRunningTasks === undefined ? {} : { onRunningChanged: options.onRunningTasks },
    );
    justTasks = created;
    const fileTools = createFileTools({
      specSummary: (signal) => reconcile.specSummary(signal),
      serverUrls: options.serverUrls,
      activeTasks: {
        enabled: () => justTasksOn,
        running: () => created.running(),
        recipes: async (root, signal) =>
          (await created.listRecipes(root, signal)).recipes.map((recipe) => recipe.name),
      },
    });
    return {
      tools: [...fileTools, ...reconcileParts.tools, ...created.tools],
      extendServer: reconcileParts.extendServer,
    };
  };
  return {
    reconcile,
    loadServerParts,
    isToolOffered: (name) => justTasksOn || !optIn.has(name),
    setJustTasks(enabled) {
      const changed = enabled !== justTasksOn;
      justTasksOn = enabled;
      return changed;
    },
    stopTask: (runId, by) => justTasks?.stop(runId, by) ?? false,
    instructions: reconcile.instructions,
    serverInfo: { name: 'grove', version: GROVE_VERSION },
  };
}
