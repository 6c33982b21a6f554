// One open worktree as the host keeps it: its database row, what git says of it, its supervisor
// (wired to keep the record current: status, clients, running calls, activity, reconciliation
// state) and the WorktreeState the window shows of it. Its recent tool calls are kept in the app
// database too (the last `activityLimit`, each cut to boundActivityEntry's bounds), so the Activity
// tab survives a restart of the host.
import type { Logger } from '../platform/log.ts';
import type { HostEvent } from '../../shared/host-api.ts';
import {
  boundActivityEntry,
  MAX_STORED_ACTIVITY_CHARS,
  serverUrls,
  type ActivityEntry,
  type ClientInfo,
  type RunningCall,
  type RunningTask,
  type WorktreeState,
} from '../../shared/model.ts';
import type { ReconcileState } from '../../shared/reconcile.ts';
import type { AppDatabase, WorktreeRow } from './app-database.ts';
import type { DiscoveredWorktree } from './worktree-discovery.ts';
import type { WorktreeLauncher } from './worktree-launcher.ts';
import { WorktreeSupervisor, type SupervisorOptions } from './worktree-supervisor.ts';

/** What openWorktree needs from the host. */
export interface OpenWorktreeDeps {
  db: AppDatabase;
  launcher: WorktreeLauncher;
  log: Logger;
  firstPort: number;
  /** Tool calls kept per worktree (in memory and in the app database). */
  activityLimit: number;
  supervision?: Pick<
    SupervisorOptions,
    'pingIntervalMs' | 'hangAfterMs' | 'toolLayerHangAfterMs' | 'restartDelaysMs' | 'slowStartMs'
  >;
  /** The just task tools are on in every worktree (HostOptions.justTasks). */
  justTasksForAll: boolean;
  /** The record changed: the window should see it again. */
  changed(open: OpenWorktree): void;
  /**
   * A worktree's port moved and was stored (another worktree may have been handed a new port by
   * the same write): every open worktree takes its port from the database again.
   */
  portsChanged(): void;
  emit(event: HostEvent): void;
}

export interface OpenWorktree {
  row: WorktreeRow;
  repoId: string;
  discovered: DiscoveredWorktree;
  /**
   * Set while the worktree cannot be served: git reports the directory as gone, or its path was
   * refused (inside /proc, /sys or /dev, or not a work tree of the repository). Shown as `error`.
   */
  missingMessage: string | null;
  clients: ClientInfo[];
  runningCalls: RunningCall[];
  runningTasks: RunningTask[];
  activity: ActivityEntry[];
  /** Health checks (clients that made no call) dropped from `clients` on the local day `day`. */
  healthChecks: { day: string; count: number };
  /** The latest reconciliation state the worktree process computed. */
  reconcile: ReconcileState | null;
  /** The chosen reconciliation base (persisted); null: the repo's default branch. */
  reconcileBase: string | null;
  /** The just task tools are on by the host's own setting, whatever the row says. */
  justTasksByHost: boolean;
  supervisor: WorktreeSupervisor;
}

export interface OpenRepo {
  id: string;
  path: string;
  worktrees: OpenWorktree[];
}

export function openWorktree(
  deps: OpenWorktreeDeps,
  repo: OpenRepo,
  discovered: DiscoveredWorktree,
): OpenWorktree {
  const row = deps.db.ensureWorktree(Number(repo.id), discovered.path, deps.firstPort);
  const reconcileBase = deps.db.getSetting(reconcileBaseKey(row.id)) || null;
  const open: OpenWorktree = {
    row,
    repoId: repo.id,
    reconcile: null,
    reconcileBase,
    justTasksByHost: deps.justTasksForAll,
    discovered,
    missingMessage: unservableMessage(discovered),
    clients: [],
    runningCalls: [],
    runningTasks: [],
    activity: loadActivity(deps, row.id),
    healthChecks: { day: localDay(Date.now()), count: 0 },
    supervisor: new WorktreeSupervisor({
      root: discovered.path,
      port: row.port,
      token: row.token,
      requireToken: row.requireToken,
      justTasks: deps.justTasksForAll || row.justTasks,
      ...(reconcileBase ? { reconcileBase } : {}),
      launcher: deps.launcher,
      avoidPorts: () => deps.db.portsOfOtherWorktrees(row.id),
      ...deps.supervision,
      log: deps.log.child(`worktree ${discovered.path}`),
      onStatus: (status) => {
        if (status.state !== 'running' && status.state !== 'starting') {
          // The process is gone: its sessions went with it.
          const at = Date.now();
          open.clients = open.clients.map((client) =>
            client.connection === 'open'
              ? { ...client, connection: 'closed', streamOpen: false, closedAt: at }
              : client,
          );
          open.runningCalls = []; // and its calls
          open.runningTasks = []; // and its tasks (ended with it)
        }
        deps.changed(open);
      },
      onPortMoved: (port, requestedPort) => {
        // The port to take back is the first one this worktree lost, if it moved more than once.
        deps.db.setWorktreePort(row.id, port, row.movedFrom ?? requestedPort);
        deps.portsChanged();
      },
      onClients: (clients, healthChecks) => {
        open.clients = clients;
        if (healthChecks > 0) {
          const today = localDay(Date.now());
          if (open.healthChecks.day !== today) open.healthChecks = { day: today, count: 0 };
          open.healthChecks.count += healthChecks;
        }
        deps.changed(open);
      },
      onRunningCalls: (calls) => {
        open.runningCalls = calls;
        deps.changed(open);
      },
      onRunningTasks: (tasks) => {
        open.runningTasks = tasks;
        deps.changed(open);
      },
      onReconcileState: (state) => {
        const totalsChanged =
          JSON.stringify(state.totals) !== JSON.stringify(open.reconcile?.totals);
        open.reconcile = state;
        deps.emit({ type: 'reconcile-state', worktreeId: worktreeId(open), state });
        if (totalsChanged) deps.changed(open);
      },
      onActivity: (received) => {
        const limit = deps.activityLimit;
        // Cut again as they come in: the window, /api/events and the app database hold only this.
        const entries = received.slice(-Math.max(1, limit)).map(boundActivityEntry);
        open.activity.push(...entries);
        if (open.activity.length > limit) open.activity.splice(0, open.activity.length - limit);
        try {
          deps.db.appendActivity(row.id, entries, limit);
        } catch (error) {
          // The window still shows them; only a restart would lose them.
          deps.log.warn(`tool calls not kept in the app database: ${String(error)}`);
        }
        deps.emit({ type: 'activity', worktreeId: worktreeId(open), entries });
      },
    }),
  };
  return open;
}

/** What the window shows of one worktree. */
export function worktreeState(worktree: OpenWorktree): WorktreeState {
  const port = worktree.supervisor.port;
  const status = worktree.missingMessage
    ? { state: 'error' as const, message: worktree.missingMessage }
    : worktree.supervisor.status;
  return {
    id: worktreeId(worktree),
    repoId: worktree.repoId,
    path: worktree.discovered.path,
    branch: worktree.discovered.branch,
    isMain: worktree.discovered.isMain,
    port,
    portNotice:
      worktree.row.movedFrom === null
        ? null
        : `port ${worktree.row.movedFrom} was in use; moved to ${port}`,
    movedFromPort: worktree.row.movedFrom,
    status,
    urls: serverUrls(port),
    settings: {
      autostart: worktree.row.autostart,
      requireToken: worktree.row.requireToken,
      justTasks: worktree.supervisor.justTasks,
      justTasksByHost: worktree.justTasksByHost,
    },
    clients: worktree.clients,
    healthChecksToday:
      worktree.healthChecks.day === localDay(Date.now()) ? worktree.healthChecks.count : 0,
    runningCalls: worktree.runningCalls,
    runningTasks: worktree.runningTasks,
    reconcileBase: worktree.reconcileBase,
    reconcileTotals: worktree.reconcile?.totals ?? null,
  };
}

/** The worktree's recent tool calls kept in the app database (none if it cannot be read). */
function loadActivity(deps: OpenWorktreeDeps, rowId: number): ActivityEntry[] {
  try {
    const { entries, skipped } = deps.db.recentActivity(rowId, deps.activityLimit);
    if (skipped > 0) {
      const dropped = deps.db.dropOversizedActivity(rowId);
      deps.log.warn(
        `skipped ${skipped} stored tool call(s) that are too long or unreadable; ` +
          `dropped ${dropped} over ${MAX_STORED_ACTIVITY_CHARS} characters from the app database`,
      );
    }
    return entries;
  } catch (error) {
    deps.log.warn(`earlier tool calls not read from the app database: ${String(error)}`);
    return [];
  }
}

/** The local calendar day of `at` ("Tue Jun 03 2025"): health checks are counted per day. */
function localDay(at: number): string {
  return new Date(at).toDateString();
}

/** Why a discovered worktree cannot be served (refused path, or directory gone), or null. */
export function unservableMessage(discovered: DiscoveredWorktree): string | null {
  if (discovered.refusal) return discovered.refusal;
  return discovered.missing ? `worktree directory not found: ${discovered.path}` : null;
}

export function worktreeId(worktree: OpenWorktree): string {
  return String(worktree.row.id);
}

/** The settings key of a worktree's chosen reconciliation base. */
export function reconcileBaseKey(rowId: number): string {
  return `reconcile-base:${rowId}`;
}
