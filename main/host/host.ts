// The host: the source of truth for which repos and worktrees are open, each server's status,
// settings, clients and recent activity. Persists to the app database, supervises one worktree
// process per worktree, follows `git worktree add/remove` while running, and emits HostEvents that
// every UI (Electron renderer, browser under `grove serve`) mirrors. Plain Node: never imports
// electron.
import { bridgeCommand, sourceCheckoutLauncher, type GroveLauncher } from './bridge-launcher.ts';
import { UserError } from '../platform/errors.ts';
import { createLogger, RotatingLogFile, stderrSink, type Logger } from '../platform/log.ts';
import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { HostEvent } from '../../shared/host-api.ts';
import {
  serverUrls,
  type ActivityEntry,
  type ConnectionInfo,
  type HostSnapshot,
  type RepoState,
  type WorktreeState,
} from '../../shared/model.ts';
import type { DecisionRequest } from '../../shared/decisions.ts';
import type { ReconcileState } from '../../shared/reconcile.ts';
import type { UndoMarkResult } from '../../shared/reconcile-results.ts';
import { ChatService, type ChatServiceOptions } from '../chat/chat-service.ts';
import { AppDatabase, FIRST_WORKTREE_PORT, newToken } from './app-database.ts';
import { discoverRepo, type DiscoveredWorktree } from './worktree-discovery.ts';
import { forkLauncher, type WorktreeLauncher } from './worktree-launcher.ts';
import {
  openWorktree,
  reconcileBaseKey,
  worktreeId,
  worktreeState,
  type OpenRepo,
  type OpenWorktree,
  type OpenWorktreeDeps,
} from './open-worktree.ts';
import { refreshRepo, type RefreshContext } from './worktree-refresh.ts';
import { isPortFree } from './port-check.ts';

/** Tool calls kept per worktree across restarts (the Activity tab). */
export const DEFAULT_ACTIVITY_LIMIT = 1_000;

export interface HostOptions {
  /** Directory of the app database and settings. */
  dataDir: string;
  launcher?: WorktreeLauncher;
  /** First port handed to new worktrees (default FIRST_WORKTREE_PORT; env GROVE_FIRST_PORT). */
  firstPort?: number;
  /** How often open repos are re-read for added/removed worktrees (default 2000 ms; 0: never). */
  worktreePollMs?: number;
  /** Tool calls kept per worktree, in memory and in the app database (default 1,000). */
  activityLimit?: number;
  /** The chat panel's secret store, environment and limits (main/chat/chat-service.ts). */
  chat?: ChatServiceOptions;
  /**
   * Offer the just task tools (list_just_tasks, run_just_task) in every worktree this host serves,
   * whatever each worktree's own setting (`grove serve --just-tasks`). Default false: each
   * worktree's setting decides, and that is off unless the user turned it on.
   */
  justTasks?: boolean;
  /** Health-check and restart timings of every supervisor (defaults in worktree-supervisor.ts). */
  supervision?: OpenWorktreeDeps['supervision'];
  /**
   * Where the host and its worktree processes log (why a server was killed or restarted, listener
   * errors, reconciliation warnings). Default: `<dataDir>/grove.log` (rotated), warnings and
   * errors also on stderr.
   */
  log?: Logger;
  /** How `grove` runs on this machine, for the bridge command clients get (default: a source checkout). */
  groveLauncher?: GroveLauncher;
}

/** The default log: every record to `<dataDir>/grove.log`, warnings and errors to stderr. */
function defaultLogger(dataDir: string): { log: Logger; close(): void } {
  const file = new RotatingLogFile(dataDir);
  return { log: createLogger([file.sink, stderrSink('warn')]), close: () => file.close() };
}

export class Host {
  private readonly db: AppDatabase;
  /** The host's log (HostOptions.log); worktree supervisors log under it. */
  readonly log: Logger;
  private closeLog: () => void = () => undefined;
  private readonly options: HostOptions;
  private readonly launcher: WorktreeLauncher;
  private readonly events = new EventEmitter<{ event: [HostEvent] }>();
  private readonly repos: OpenRepo[] = [];
  private pollTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private readonly refreshContext: RefreshContext = {
    closed: () => this.closed,
    stillOpen: (repo) => this.repos.includes(repo),
    openWorktree: (repo, discovered) => this.openWorktree(repo, discovered),
    forgetWorktree: (worktree) => this.db.deleteWorktree(worktree.row.id),
    worktreeChanged: (worktree) => this.emitWorktree(worktree),
  };
  private closed = false;
  private closing: Promise<void> | undefined;
  /** The chat panel's service: conversations, providers, the agent loop. */
  readonly chat: ChatService;

  private constructor(db: AppDatabase, options: HostOptions) {
    this.db = db;
    this.options = options;
    if (options.log) {
      this.log = options.log;
    } else {
      const own = defaultLogger(options.dataDir);
      this.log = own.log;
      this.closeLog = own.close;
    }
    this.launcher = options.launcher ?? forkLauncher;
    this.chat = new ChatService({
      host: this,
      db: db.connection,
      emit: (event) => this.emit(event),
      ...(options.chat ? { options: options.chat } : {}),
    });
    const pollMs = options.worktreePollMs ?? 2000;
    if (pollMs > 0) {
      this.pollTimer = setInterval(() => void this.refreshAll(), pollMs);
      this.pollTimer.unref();
    }
  }

  static async open(options: HostOptions): Promise<Host> {
    return new Host(await AppDatabase.open(options.dataDir), options);
  }

  /**
   * Opens the repository containing `repoPath` (any path inside one of its worktrees) and every
   * worktree it has, and remembers it. Opening an already open repo returns it unchanged. Servers
   * are not started: call startAll() or startServer().
   */
  async addRepo(repoPath: string): Promise<RepoState> {
    const discovered = await discoverRepo(repoPath);
    const known = this.repos.find((repo) => repo.path === discovered.path);
    if (known) return this.repoState(known);
    const repoRow = this.db.upsertRepo(discovered.path);
    const repo: OpenRepo = { id: String(repoRow.id), path: discovered.path, worktrees: [] };
    for (const worktree of discovered.worktrees)
      repo.worktrees.push(this.openWorktree(repo, worktree));
    this.repos.push(repo);
    this.emitSnapshot();
    return this.repoState(repo);
  }

  /**
   * Opens every repository remembered in the app database. Repos that can no longer be opened
   * (moved, deleted) are skipped and reported in the result, not forgotten.
   */
  async restoreRepos(): Promise<{ path: string; error: string }[]> {
    const failures: { path: string; error: string }[] = [];
    for (const row of this.db.listRepos()) {
      try {
        await this.addRepo(row.path);
      } catch (error) {
        failures.push({ path: row.path, error: (error as Error).message });
      }
    }
    return failures;
  }

  /** Stops a repo's servers and forgets it, with its worktrees' ports and tokens. */
  async removeRepo(repoId: string): Promise<void> {
    const index = this.repos.findIndex((repo) => repo.id === repoId);
    if (index === -1)
      throw new UserError(`unknown repository id: ${repoId}`, { code: 'not-found' });
    const [repo] = this.repos.splice(index, 1);
    await Promise.all(repo!.worktrees.map((worktree) => worktree.supervisor.stop()));
    this.db.deleteRepo(Number(repoId));
    this.emitSnapshot();
  }

  /**
   * Starts every worktree server whose autostart is on, a few at a time (a process spends most of
   * its start loading modules: starting twenty at once on two cores makes every one of them slow);
   * resolves when all have settled.
   */
  async startAll(): Promise<void> {
    const queue = this.allWorktrees().filter(
      (worktree) => worktree.row.autostart && !worktree.missingMessage,
    );
    const lanes = Math.max(2, availableParallelism());
    await Promise.all(
      Array.from({ length: Math.min(lanes, queue.length) }, async () => {
        // Once closing, no more: close() stops only the processes that exist (a stop during the
        // start must leave none behind).
        for (let next = queue.shift(); next && !this.closed; next = queue.shift()) {
          await next.supervisor.start();
        }
      }),
    );
  }

  async startServer(worktreeId: string): Promise<void> {
    const worktree = this.worktree(worktreeId);
    if (worktree.missingMessage)
      throw new UserError(worktree.missingMessage, { code: 'unavailable' });
    await worktree.supervisor.start();
  }

  async stopServer(worktreeId: string): Promise<void> {
    await this.worktree(worktreeId).supervisor.stop();
  }

  async restartServer(worktreeId: string): Promise<void> {
    await this.stopServer(worktreeId);
    await this.startServer(worktreeId);
  }

  /** The app's data directory (database, log, backups of config files Grove rewrote). */
  get dataDir(): string {
    return path.resolve(this.options.dataDir);
  }

  /** The token that protects the UI's HostApi under `grove serve`; stable across restarts. */
  uiToken(): string {
    return this.db.getOrCreateSetting('ui-token', newToken);
  }

  getConnectionInfo(worktreeId: string): ConnectionInfo {
    const worktree = this.worktree(worktreeId);
    return {
      worktreeId,
      urls: serverUrls(worktree.supervisor.port),
      token: worktree.row.token,
      bridge: bridgeCommand(
        this.options.groveLauncher ?? sourceCheckoutLauncher(),
        path.resolve(this.options.dataDir),
        worktree.row.path,
      ),
    };
  }

  /** Replaces a worktree's token; a running server refuses the old one from the next request. */
  rotateToken(worktreeId: string): ConnectionInfo {
    const worktree = this.worktree(worktreeId);
    const token = newToken();
    this.db.setWorktreeToken(worktree.row.id, token);
    worktree.row.token = token;
    worktree.supervisor.setAccess(token, worktree.row.requireToken);
    return this.getConnectionInfo(worktreeId);
  }

  setWorktreeSettings(
    worktreeId: string,
    changes: { autostart?: boolean; requireToken?: boolean; justTasks?: boolean },
  ): WorktreeState {
    const worktree = this.worktree(worktreeId);
    const settings = {
      autostart: changes.autostart ?? worktree.row.autostart,
      requireToken: changes.requireToken ?? worktree.row.requireToken,
      justTasks: changes.justTasks ?? worktree.row.justTasks,
    };
    this.db.setWorktreeSettings(worktree.row.id, settings);
    Object.assign(worktree.row, settings);
    worktree.supervisor.setAccess(worktree.row.token, settings.requireToken);
    // The running server adds or removes the tools and tells its clients (tools/list_changed).
    worktree.supervisor.setJustTasks(worktree.justTasksByHost || settings.justTasks);
    this.emitWorktree(worktree);
    return worktreeState(worktree);
  }

  /**
   * Moves a worktree's server to `port`, restarting it if it runs. A move the worktree made on its
   * own (another program took its port) is settled: the window no longer offers the old port.
   */
  async setWorktreePort(worktreeId: string, port: number): Promise<WorktreeState> {
    const worktree = this.worktree(worktreeId);
    const holder = this.db.getWorktreeByPort(port);
    if (holder && holder.id !== worktree.row.id) {
      throw new UserError(`port ${port} is already assigned to the worktree ${holder.path}`, {
        code: 'busy',
      });
    }
    this.db.setWorktreePort(worktree.row.id, port);
    worktree.row.port = port;
    worktree.row.movedFrom = null;
    worktree.supervisor.setPort(port);
    if (worktree.supervisor.status.state === 'running') await this.restartServer(worktreeId);
    else this.emitWorktree(worktree);
    return worktreeState(worktree);
  }

  /**
   * Moves a worktree that moved (another program had taken its port) back to the port it had, the
   * one older client configs name, restarting its server if it runs. Refused while that port is
   * still taken, or another worktree has it now.
   */
  async reclaimPort(worktreeId: string): Promise<WorktreeState> {
    const worktree = this.worktree(worktreeId);
    const port = worktree.row.movedFrom;
    if (port === null) {
      throw new UserError(`the server of ${worktree.row.path} did not move: nothing to take back`);
    }
    const holder = this.db.getWorktreeByPort(port);
    if (holder && holder.id !== worktree.row.id) {
      throw new UserError(`port ${port} is assigned to the worktree ${holder.path} now`, {
        code: 'busy',
      });
    }
    if (!(await isPortFree(port))) {
      throw new UserError(
        `port ${port} is still in use by another program; try again once it lets go of it`,
        { code: 'busy' },
      );
    }
    return this.setWorktreePort(worktreeId, port);
  }

  /** Keeps the port a worktree moved to: the window stops offering the old one. */
  keepMovedPort(worktreeId: string): WorktreeState {
    const worktree = this.worktree(worktreeId);
    if (worktree.row.movedFrom !== null) {
      this.db.setWorktreePort(worktree.row.id, worktree.row.port);
      worktree.row.movedFrom = null;
      this.emitWorktree(worktree);
    }
    return worktreeState(worktree);
  }

  /** Sets the base branch reconciliation compares against; null goes back to the default. */
  setReconcileBase(worktreeId: string, base: string | null): WorktreeState {
    const worktree = this.worktree(worktreeId);
    if (base !== null && base.startsWith('-')) {
      throw new UserError(`invalid base branch ${JSON.stringify(base)}: it starts with "-"`);
    }
    worktree.reconcileBase = base;
    this.db.setSetting(reconcileBaseKey(worktree.row.id), base ?? '');
    worktree.supervisor.setReconcileBase(base ?? undefined);
    if (base === null && worktree.supervisor.status.state === 'running') {
      // The running process keeps the old base until it restarts with the default.
      void this.restartServer(worktreeId).catch(() => undefined);
    }
    this.emitWorktree(worktree);
    return worktreeState(worktree);
  }

  /** Ends a running tool call of a worktree's server (its client gets a "cancelled" error). */
  cancelToolCall(worktreeId: string, callId: string): void {
    this.worktree(worktreeId).supervisor.cancelCall(callId);
  }

  /** Undoes the last mark_reconciled of a worktree's server (the window's Undo). */
  undoMark(worktreeId: string, markId: string): Promise<UndoMarkResult> {
    return this.worktree(worktreeId).supervisor.undoMark(markId);
  }

  /** Stops a running just task of a worktree's server (its client gets a "stopped" error). */
  stopTask(worktreeId: string, runId: string): void {
    this.worktree(worktreeId).supervisor.stopTask(runId);
  }

  /**
   * Asks a worktree's server process about its decision proposals (list, preview an accept,
   * accept, reject: main/worktree/decision-requests.ts answers); a refusal is a UserError.
   */
  decisionRequest(worktreeId: string, request: DecisionRequest): Promise<unknown> {
    const worktree = this.worktree(worktreeId);
    if (worktree.missingMessage) {
      throw new UserError(worktree.missingMessage, { code: 'unavailable' });
    }
    return worktree.supervisor.decisionRequest(request);
  }

  /** The OS process id of a worktree's server process, while it has one. */
  processId(worktreeId: string): number | undefined {
    return this.worktree(worktreeId).supervisor.pid;
  }

  snapshot(): HostSnapshot {
    const activity: Record<string, ActivityEntry[]> = {};
    const reconcile: Record<string, ReconcileState> = {};
    for (const worktree of this.allWorktrees()) {
      activity[worktreeId(worktree)] = [...worktree.activity];
      if (worktree.reconcile) reconcile[worktreeId(worktree)] = worktree.reconcile;
    }
    return { repos: this.repos.map((repo) => this.repoState(repo)), activity, reconcile };
  }

  /** Subscribes to host events; the listener first receives a full snapshot. */
  onEvent(listener: (event: HostEvent) => void): () => void {
    listener({ type: 'snapshot', snapshot: this.snapshot() });
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  /**
   * Re-reads every open repo's worktrees: new ones are opened (and started if autostart is on),
   * removed ones are stopped and forgotten, ones whose directory vanished go to `error`.
   */
  refreshAll(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        for (const repo of [...this.repos]) {
          if (await refreshRepo(this.refreshContext, repo)) this.emitSnapshot();
        }
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /**
   * Stops every server and closes the app database. Safe to call more than once: every call
   * resolves once every worktree process has exited.
   */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    await this.refreshing?.catch(() => undefined);
    await this.chat.close();
    await Promise.all(this.allWorktrees().map((worktree) => worktree.supervisor.stop()));
    this.events.removeAllListeners();
    this.db.close();
    this.closeLog();
  }

  private openWorktree(repo: OpenRepo, discovered: DiscoveredWorktree): OpenWorktree {
    return openWorktree(
      {
        db: this.db,
        launcher: this.launcher,
        log: this.log,
        firstPort: this.options.firstPort ?? FIRST_WORKTREE_PORT,
        activityLimit: this.options.activityLimit ?? DEFAULT_ACTIVITY_LIMIT,
        justTasksForAll: this.options.justTasks === true,
        ...(this.options.supervision ? { supervision: this.options.supervision } : {}),
        changed: (open) => this.emitWorktree(open),
        portsChanged: () => this.reloadPorts(),
        emit: (event) => this.emit(event),
      },
      repo,
      discovered,
    );
  }

  /**
   * Takes every open worktree's port (and the port it moved from) from the app database again,
   * after a move was stored: the moved worktree's, and another's the same write gave a new port.
   */
  private reloadPorts(): void {
    for (const worktree of this.allWorktrees()) {
      const stored = this.db.getWorktreeByPath(worktree.row.path);
      if (!stored) continue;
      if (stored.port === worktree.row.port && stored.movedFrom === worktree.row.movedFrom)
        continue;
      worktree.row.port = stored.port;
      worktree.row.movedFrom = stored.movedFrom;
      worktree.supervisor.setPort(stored.port);
      this.emitWorktree(worktree);
    }
  }

  private allWorktrees(): OpenWorktree[] {
    return this.repos.flatMap((repo) => repo.worktrees);
  }

  private worktree(id: string): OpenWorktree {
    const found = this.allWorktrees().find((worktree) => worktreeId(worktree) === id);
    if (!found) throw new UserError(`unknown worktree id: ${id}`, { code: 'not-found' });
    return found;
  }

  private repoState(repo: OpenRepo): RepoState {
    return {
      id: repo.id,
      path: repo.path,
      name: path.basename(repo.path),
      worktrees: repo.worktrees.map((worktree) => worktreeState(worktree)),
    };
  }

  private emitWorktree(worktree: OpenWorktree): void {
    this.emit({ type: 'worktree-changed', worktree: worktreeState(worktree) });
  }

  private emitSnapshot(): void {
    this.emit({ type: 'snapshot', snapshot: this.snapshot() });
  }

  private emit(event: HostEvent): void {
    this.events.emit('event', event);
  }
}
