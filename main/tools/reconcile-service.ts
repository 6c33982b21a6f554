// The reconciliation side of one worktree process, assembled: the engine (one per worktree,
// shared by every MCP session), its six tools, the server instructions, prompts and spec
// resources (loadServerParts), and the watcher that keeps the ReconcileState current, reports it
// (`onState`) and tells connected clients when specs change. worktree-process.ts creates one
// service at start and hands its parts to the MCP listener.
//
// Eager vs lazy, so that the worktree process listens fast and small:
// - Eager (needed before `listening`): the instructions and resource names (reconcile-mcp.ts).
// - With the MCP side (loadServerParts): the six tool definitions with their zod schemas
//   (reconcile-tools.ts) and the registration of prompts and spec resources, which imports the
//   SDK (reconcile-mcp-registration.ts). The listener loads them on the first MCP request, so a
//   worktree process no client has called builds neither.
// - Lazy (reconcile-runtime.ts): the engine and the watcher with everything they pull in. One
//   shared dynamic import(), started by start() (right after `listening`) or by the first tool call,
//   whichever comes first. If it fails, tool calls return that error and start() rejects with it
//   (the process reports a warning); file tools and the MCP server keep working.
import type { ReconcileState } from '../../shared/reconcile.ts';
import type { ListenerNotifier, ServerParts, ToolDefinition } from './tool-definition.ts';
import type { SpecSummary } from './get-project-context.ts';
import { SAMPLE_PATHS } from './tool-constants.ts';
import { UserError } from '../platform/errors.ts';
import type { ReconcileEngine } from '../reconcile/reconcile-engine.ts';
import { RECONCILE_INSTRUCTIONS, specResourceUri } from './reconcile-mcp.ts';
import type { ReconcileWatcher, SpecChanges } from '../reconcile/reconcile-watcher.ts';

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
  /** The engine, loaded (once) on first call; rejects if the engine's modules cannot load. */
  engine(): Promise<ReconcileEngine>;
  readonly instructions: string;
  /**
   * get_project_context's spec summary, from the live reconciliation state (waits for the first
   * one, which start() computes).
   */
  specSummary(signal: AbortSignal): Promise<SpecSummary>;
  /**
   * Loads the six tools and what registers the prompts, spec resources and subscriptions on a
   * server (with the MCP SDK); for McpListenerOptions.loadServerParts, which calls it once.
   */
  loadServerParts(): Promise<ServerParts & { tools: ToolDefinition[] }>;
  /**
   * Loads the engine, finds the default base (unless one was given), computes the first state and
   * starts watching; call it after the listener is up, so spec changes can be announced.
   */
  start(listener: NotifyingListener): Promise<void>;
  setBase(base: string): void;
  /** The base in use (`main` until start() has found the repository's default branch). */
  readonly base: string;
  close(): Promise<void>;
}

interface Loaded {
  engine: ReconcileEngine;
  Watcher: typeof ReconcileWatcher;
}

/** Cheap and synchronous: nothing is loaded, and nothing touches git or the disk, until needed. */
export function createReconcileService(options: ReconcileServiceOptions): ReconcileService {
  /** The one load of the engine's modules (see the top of this file); kept even if it failed. */
  let loading: Promise<Loaded> | undefined;
  /** Until start() finds the repository's default branch, prompts propose `main`. */
  let base = options.base;
  let started = false;
  let closed = false;
  let watcher: ReconcileWatcher | undefined;
  const warn = (message: string): void => options.onWarning?.(message);

  const load = (): Promise<Loaded> => {
    if (closed && !loading) return Promise.reject(new Error('reconciliation service closed'));
    loading ??= import('./reconcile-runtime.ts').then(
      (runtime) => ({
        engine: new runtime.ReconcileEngine({ root: options.root }),
        Watcher: runtime.ReconcileWatcher,
      }),
      (error: unknown) => {
        throw new Error(
          `reconciliation engine failed to load: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      },
    );
    return loading;
  };

  const engine = async (): Promise<ReconcileEngine> => (await load()).engine;

  const announce = (listener: NotifyingListener, changes: SpecChanges): void => {
    for (const specPath of [...changes.updated, ...changes.added, ...changes.removed]) {
      listener.notify.resourceUpdated(specResourceUri(specPath));
    }
    if (changes.added.length > 0 || changes.removed.length > 0) listener.notify.resourcesChanged();
  };

  /** Callers of specSummary waiting for the first state. */
  const stateWaiters: ((state: ReconcileState) => void)[] = [];
  const firstState = (signal: AbortSignal): Promise<ReconcileState> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new UserError('the reconciliation engine has stopped'));
      const timer = setTimeout(
        () => reject(new UserError('the reconciliation state is not computed yet; try again')),
        FIRST_STATE_WAIT_MS,
      );
      stateWaiters.push((state) => {
        clearTimeout(timer);
        resolve(state);
      });
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });

  return {
    engine,
    instructions: RECONCILE_INSTRUCTIONS,
    async loadServerParts() {
      // The first MCP request: a client came. Its calls on a big worktree need the pool's
      // workers, which start now rather than in its first call (a mark of every file paid ~0.2 s),
      // and its calls sync: the sync's tap starts now (a process no client called keeps its idle
      // memory without it).
      const prestart = (state: ReconcileState): void => {
        watcher?.startSyncTap();
        void engine()
          .then((loaded) => loaded.prestartWorkersFor(state.totals.governedFiles))
          .catch(() => undefined);
      };
      if (watcher?.state) prestart(watcher.state);
      else stateWaiters.push(prestart);
      const [{ createReconcileTools }, { registerReconcileMcp }] = await Promise.all([
        import('./reconcile-tools.ts'),
        import('./reconcile-mcp-registration.ts'),
      ]);
      return {
        tools: createReconcileTools(engine),
        extendServer: (server) =>
          registerReconcileMcp(server, {
            root: options.root,
            defaultBase: () => base ?? 'main',
          }),
      };
    },
    get base() {
      return base ?? 'main';
    },
    async specSummary(signal) {
      const state = watcher?.state ?? (await firstState(signal));
      return summarizeSpecs(state);
    },
    async start(listener) {
      if (started || closed) return;
      started = true;
      const loaded = await load();
      if (base === undefined) {
        const found = await loaded.engine.defaultBase().catch(() => 'main');
        base ??= found; // a setBase() meanwhile wins
      }
      if (closed) return;
      watcher = new loaded.Watcher({
        engine: loaded.engine,
        base,
        onState: (state) => {
          for (const warning of state.warnings) warn(warning);
          for (const waiting of stateWaiters.splice(0)) waiting(state);
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
      closed = true;
      await watcher?.close();
      // Never loaded: nothing to close (and nothing is loaded just to be closed).
      const loaded = await loading?.catch(() => undefined);
      await loaded?.engine.cache.flush(); // stat rows written after mark_reconciled answered
      loaded?.engine.close();
    },
  };
}

/** How long get_project_context waits for the first reconciliation state before saying so. */
const FIRST_STATE_WAIT_MS = 10_000;

/** get_project_context's `specs` from a reconciliation state. */
export function summarizeSpecs(state: ReconcileState): SpecSummary {
  const paths = [...state.specs.map((spec) => spec.path), ...state.specErrors.map((e) => e.file)];
  const unique = [...new Set(paths)].sort();
  return {
    total: unique.length,
    paths: unique.slice(0, SAMPLE_PATHS),
    system_spec: state.systemSpec,
    invalid: state.specErrors.map((error) => ({
      path: error.file,
      message: error.line === null ? error.message : `line ${error.line}: ${error.message}`,
    })),
    drifted:
      state.baseError === null
        ? {
            specs: state.totals.specsNeedingReconciliation,
            files: state.totals.changedSinceReconciled,
          }
        : null,
  };
}
