// The renderer's mirror of the host: a pure reducer over HostApi events (a full `snapshot`, then
// `worktree-changed` deltas) plus the renderer's own bookkeeping (connection health, commands in
// flight, the last command error per worktree, the spec selected in each worktree's
// Reconciliation tab, which outlives the tab's components). The host stays the single source of
// truth: commands never edit the mirror optimistically, they wait for the event that reports the
// change. React reads the store through useSyncExternalStore; nothing polls.
import {
  commandMethods,
  type HostApi,
  type HostCommandMethods,
  type HostEvent,
} from '../../../shared/host-api.ts';
import type { HostSnapshot, WorktreeState } from '../../../shared/model.ts';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import type { ConnectionSource, ConnectionState } from '../host-api/connection.ts';
import type { HostTransport } from '../host-api/pick-host-api.ts';

export type ServerCommand = 'start' | 'stop' | 'restart';

/**
 * What the chat views hear (renderer/src/chat/): every `chat` event, and each `snapshot` — a new
 * snapshot means the event stream (re)started, so events may have been missed and they resync.
 */
export type ChatFeedEvent = Extract<HostEvent, { type: 'chat' | 'snapshot' }>;

export interface CommandError {
  command: ServerCommand;
  message: string;
}

export interface HostStoreState {
  /** The host's state as last reported; null until the first snapshot arrives. */
  snapshot: HostSnapshot | null;
  connection: ConnectionState;
  /** Commands sent and not yet answered, by worktree id. */
  pending: Readonly<Record<string, ServerCommand>>;
  /** The last failed command, by worktree id (cleared by the next command). */
  commandErrors: Readonly<Record<string, CommandError>>;
  /**
   * The spec path selected in the Reconciliation tab, by worktree id: kept across tab and worktree
   * switches, dropped when the spec no longer exists (its worktree closed, or a reconciliation
   * state without it).
   */
  selectedSpecs: Readonly<Record<string, string>>;
}

export type HostStoreAction =
  | { type: 'event'; event: HostEvent }
  | { type: 'connection'; connection: ConnectionState }
  | { type: 'command-sent'; worktreeId: string; command: ServerCommand }
  | { type: 'command-done'; worktreeId: string; command: ServerCommand; error: string | null }
  | { type: 'select-spec'; worktreeId: string; path: string };

export const initialHostStoreState: HostStoreState = {
  snapshot: null,
  connection: { state: 'connecting' },
  pending: {},
  commandErrors: {},
  selectedSpecs: {},
};

export function hostStoreReducer(state: HostStoreState, action: HostStoreAction): HostStoreState {
  switch (action.type) {
    case 'event':
      return applyEvent(state, action.event);
    case 'connection':
      return { ...state, connection: action.connection };
    case 'command-sent':
      return {
        ...state,
        pending: { ...state.pending, [action.worktreeId]: action.command },
        commandErrors: without(state.commandErrors, action.worktreeId),
      };
    case 'command-done':
      return {
        ...state,
        pending: without(state.pending, action.worktreeId),
        commandErrors:
          action.error === null
            ? state.commandErrors
            : {
                ...state.commandErrors,
                [action.worktreeId]: { command: action.command, message: action.error },
              },
      };
    case 'select-spec':
      if (state.selectedSpecs[action.worktreeId] === action.path) return state;
      return {
        ...state,
        selectedSpecs: { ...state.selectedSpecs, [action.worktreeId]: action.path },
      };
  }
}

function applyEvent(state: HostStoreState, event: HostEvent): HostStoreState {
  switch (event.type) {
    case 'snapshot':
      return {
        ...state,
        snapshot: event.snapshot,
        selectedSpecs: existingSelections(state.selectedSpecs, event.snapshot),
      };
    case 'worktree-changed': {
      // A delta before any snapshot has nothing to apply to; the snapshot will carry it.
      if (!state.snapshot) return state;
      const snapshot = upsertWorktree(state.snapshot, event.worktree);
      return snapshot === state.snapshot ? state : { ...state, snapshot };
    }
    case 'activity': {
      if (!state.snapshot) return state;
      const activity = appendActivity(state.snapshot.activity, event.worktreeId, event.entries);
      return { ...state, snapshot: { ...state.snapshot, activity } };
    }
    case 'reconcile-state': {
      if (!state.snapshot) return state;
      const reconcile = { ...state.snapshot.reconcile, [event.worktreeId]: event.state };
      const selected = state.selectedSpecs[event.worktreeId];
      const selectedSpecs =
        selected === undefined || hasSpec(event.state, selected)
          ? state.selectedSpecs
          : without(state.selectedSpecs, event.worktreeId);
      return { ...state, snapshot: { ...state.snapshot, reconcile }, selectedSpecs };
    }
    default:
      // Events the mirror does not keep (chat progress): the chat views hear them (onChatEvent).
      return state;
  }
}

/** Activity entries kept per worktree in the mirror: the host's bound (DEFAULT_ACTIVITY_LIMIT in
 * main/host/host.ts), so a snapshot and the live appends keep the same calls. */
export const ACTIVITY_LIMIT = 1_000;

/** Appends new tool calls to one worktree's log, keeping the newest ACTIVITY_LIMIT. */
export function appendActivity(
  activity: HostSnapshot['activity'],
  worktreeId: string,
  entries: HostSnapshot['activity'][string],
): HostSnapshot['activity'] {
  const merged = [...(activity[worktreeId] ?? []), ...entries];
  return { ...activity, [worktreeId]: merged.slice(-ACTIVITY_LIMIT) };
}

/** Replaces the worktree with the same id, or appends it to its repo; unknown repo: unchanged. */
export function upsertWorktree(snapshot: HostSnapshot, worktree: WorktreeState): HostSnapshot {
  const repoIndex = snapshot.repos.findIndex((repo) => repo.id === worktree.repoId);
  if (repoIndex === -1) return snapshot;
  const repos = snapshot.repos.map((repo, index) => {
    if (index !== repoIndex) {
      // A worktree never moves between repos, but drop a stale copy if the host says it did.
      return repo.worktrees.some((w) => w.id === worktree.id)
        ? { ...repo, worktrees: repo.worktrees.filter((w) => w.id !== worktree.id) }
        : repo;
    }
    const at = repo.worktrees.findIndex((w) => w.id === worktree.id);
    const worktrees =
      at === -1
        ? [...repo.worktrees, worktree]
        : repo.worktrees.map((w, i) => (i === at ? worktree : w));
    return { ...repo, worktrees };
  });
  return { ...snapshot, repos };
}

/**
 * The selected specs that still exist in a new snapshot: their worktree is open and its
 * reconciliation state (when it has one yet) still lists them.
 */
function existingSelections(
  selectedSpecs: HostStoreState['selectedSpecs'],
  snapshot: HostSnapshot,
): HostStoreState['selectedSpecs'] {
  const open = new Set(snapshot.repos.flatMap((repo) => repo.worktrees.map((w) => w.id)));
  let kept = selectedSpecs;
  for (const [worktreeId, path] of Object.entries(selectedSpecs)) {
    const reconcile = snapshot.reconcile[worktreeId];
    if (!open.has(worktreeId) || (reconcile && !hasSpec(reconcile, path))) {
      kept = without(kept, worktreeId);
    }
  }
  return kept;
}

function hasSpec(state: ReconcileState, path: string): boolean {
  return state.specs.some((spec) => spec.path === path);
}

function without<T>(record: Readonly<Record<string, T>>, key: string): Readonly<Record<string, T>> {
  if (!Object.hasOwn(record, key)) return record;
  const copy = { ...record };
  delete copy[key];
  return copy;
}

const unavailableCommands = commandMethods(() =>
  Promise.reject(new Error('Grove is not connected to a host.')),
);

/** Holds the state, feeds it from the transport, and runs commands. */
export class HostStore {
  readonly #api: HostApi | null;
  readonly #connectionSource: ConnectionSource | null;
  readonly #listeners = new Set<() => void>();
  readonly #chatListeners = new Set<(event: ChatFeedEvent) => void>();
  #state: HostStoreState;

  constructor(transport: HostTransport) {
    this.#api = transport.kind === 'unavailable' ? null : transport.api;
    this.#connectionSource = transport.kind === 'http' ? transport.connection : null;
    this.#state =
      transport.kind === 'unavailable'
        ? {
            ...initialHostStoreState,
            connection: { state: 'failed', message: transport.message },
          }
        : initialHostStoreState;
  }

  /** Starts mirroring the host; returns the function that stops. */
  connect(): () => void {
    const api = this.#api;
    if (!api) return () => {};
    const stops: (() => void)[] = [];
    const source = this.#connectionSource;
    if (source) {
      stops.push(
        source.onConnectionChange((connection) =>
          this.#dispatch({ type: 'connection', connection }),
        ),
      );
    }
    stops.push(
      api.onEvent((event) => {
        this.#dispatch({ type: 'event', event });
        if (event.type === 'chat' || event.type === 'snapshot') {
          for (const listener of this.#chatListeners) listener(event);
        }
        // A transport without a connection of its own (the preload) is live once it has spoken.
        if (!source && event.type === 'snapshot') {
          this.#dispatch({ type: 'connection', connection: { state: 'open' } });
        }
      }),
    );
    if (source) this.#dispatch({ type: 'connection', connection: source.connectionState() });
    return () => {
      for (const stop of stops) stop();
    };
  }

  readonly getState = (): HostStoreState => this.#state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  /** Chat events (and snapshots, to resync) for the chat views; returns the unsubscriber. */
  onChatEvent(listener: (event: ChatFeedEvent) => void): () => void {
    this.#chatListeners.add(listener);
    return () => this.#chatListeners.delete(listener);
  }

  startServer(worktreeId: string): Promise<void> {
    return this.#run(worktreeId, 'start', (api) =>
      api.startServer({ worktreeId }).then(() => undefined),
    );
  }

  stopServer(worktreeId: string): Promise<void> {
    return this.#run(worktreeId, 'stop', (api) =>
      api.stopServer({ worktreeId }).then(() => undefined),
    );
  }

  restartServer(worktreeId: string): Promise<void> {
    return this.#run(worktreeId, 'restart', (api) =>
      api.restartServer({ worktreeId }).then(() => undefined),
    );
  }

  /** Remembers the spec selected in a worktree's Reconciliation tab (renderer state only). */
  selectSpec(worktreeId: string, path: string): void {
    this.#dispatch({ type: 'select-spec', worktreeId, path });
  }

  /**
   * Any other command, for views that show its answer themselves (tool calls, config writes...).
   * Changes to the host's state still arrive as events, never from the answer.
   */
  get commands(): HostCommandMethods {
    return this.#api ?? unavailableCommands;
  }

  async #run(
    worktreeId: string,
    command: ServerCommand,
    send: (api: HostApi) => Promise<void>,
  ): Promise<void> {
    const api = this.#api;
    if (!api || this.#state.pending[worktreeId]) return;
    this.#dispatch({ type: 'command-sent', worktreeId, command });
    let error: string | null = null;
    try {
      await send(api);
    } catch (caught) {
      error = caught instanceof Error ? caught.message : String(caught);
    }
    this.#dispatch({ type: 'command-done', worktreeId, command, error });
  }

  #dispatch(action: HostStoreAction): void {
    const next = hostStoreReducer(this.#state, action);
    if (next === this.#state) return;
    this.#state = next;
    for (const listener of this.#listeners) listener();
  }
}
