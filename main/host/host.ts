// The host: the source of truth for which repos and worktrees are open, each server's status and
// connection details. Persists to the app database, supervises one worktree process per worktree,
// and emits HostEvents that every UI (Electron renderer, browser under `grove serve`) mirrors.
// Plain Node: never imports electron.
import { EventEmitter } from 'node:events';
import path from 'node:path';
import type { HostEvent } from '../../shared/host-api.ts';
import {
  serverUrls,
  type ConnectionInfo,
  type HostSnapshot,
  type RepoState,
  type WorktreeState,
} from '../../shared/model.ts';
import { AppDatabase, FIRST_WORKTREE_PORT, newToken } from './app-database.ts';
import { discoverRepo, type DiscoveredWorktree } from './worktree-discovery.ts';
import { forkLauncher, type WorktreeLauncher } from './worktree-launcher.ts';
import { WorktreeSupervisor } from './worktree-supervisor.ts';

export interface HostOptions {
  /** Directory of the app database and settings. */
  dataDir: string;
  launcher?: WorktreeLauncher;
  /** First port handed to new worktrees (default FIRST_WORKTREE_PORT; env GROVE_FIRST_PORT). */
  firstPort?: number;
}

/** A command refers to something that does not exist (unknown worktree id...). */
export class HostCommandError extends Error {
  override name = 'HostCommandError';
}

interface OpenWorktree {
  id: string;
  repoId: string;
  discovered: DiscoveredWorktree;
  token: string;
  portNotice: string | null;
  supervisor: WorktreeSupervisor;
}

interface OpenRepo {
  id: string;
  path: string;
  worktrees: OpenWorktree[];
}

export class Host {
  private readonly db: AppDatabase;
  private readonly launcher: WorktreeLauncher;
  private readonly firstPort: number;
  private readonly events = new EventEmitter<{ event: [HostEvent] }>();
  private readonly repos: OpenRepo[] = [];
  private closed = false;

  private constructor(db: AppDatabase, options: HostOptions) {
    this.db = db;
    this.launcher = options.launcher ?? forkLauncher;
    this.firstPort = options.firstPort ?? FIRST_WORKTREE_PORT;
  }

  static async open(options: HostOptions): Promise<Host> {
    return new Host(await AppDatabase.open(options.dataDir), options);
  }

  /**
   * Opens the repository containing `repoPath` (any path inside one of its worktrees) and every
   * worktree it has. Opening an already open repo returns it unchanged. Servers are not started:
   * call startAll() or startServer().
   */
  async addRepo(repoPath: string): Promise<RepoState> {
    const discovered = await discoverRepo(repoPath);
    const known = this.repos.find((repo) => repo.path === discovered.path);
    if (known) return this.repoState(known);
    const repoRow = this.db.upsertRepo(discovered.path);
    const repo: OpenRepo = { id: String(repoRow.id), path: discovered.path, worktrees: [] };
    for (const worktree of discovered.worktrees) {
      const row = this.db.ensureWorktree(repoRow.id, worktree.path, this.firstPort);
      const open: OpenWorktree = {
        id: String(row.id),
        repoId: repo.id,
        discovered: worktree,
        token: row.token,
        portNotice: null,
        supervisor: new WorktreeSupervisor({
          root: worktree.path,
          port: row.port,
          token: row.token,
          launcher: this.launcher,
          onStatus: () => this.emitWorktree(open),
          onPortMoved: (port, requestedPort) => {
            this.db.setWorktreePort(row.id, port);
            open.portNotice = `port ${requestedPort} was in use; moved to ${port}`;
          },
        }),
      };
      repo.worktrees.push(open);
    }
    this.repos.push(repo);
    this.emit({ type: 'snapshot', snapshot: this.snapshot() });
    return this.repoState(repo);
  }

  /** Starts every worktree server that is not running; resolves when all have settled. */
  async startAll(): Promise<void> {
    await Promise.all(this.allWorktrees().map((worktree) => worktree.supervisor.start()));
  }

  async startServer(worktreeId: string): Promise<void> {
    await this.worktree(worktreeId).supervisor.start();
  }

  async stopServer(worktreeId: string): Promise<void> {
    await this.worktree(worktreeId).supervisor.stop();
  }

  /** The token that protects the UI's HostApi under `grove serve`; stable across restarts. */
  uiToken(): string {
    return this.db.getOrCreateSetting('ui-token', newToken);
  }

  getConnectionInfo(worktreeId: string): ConnectionInfo {
    const worktree = this.worktree(worktreeId);
    return { worktreeId, urls: serverUrls(worktree.supervisor.port), token: worktree.token };
  }

  /** The OS process id of a worktree's server process, while it has one. */
  processId(worktreeId: string): number | undefined {
    return this.worktree(worktreeId).supervisor.pid;
  }

  snapshot(): HostSnapshot {
    return { repos: this.repos.map((repo) => this.repoState(repo)) };
  }

  /** Subscribes to host events; the listener first receives a full snapshot. */
  onEvent(listener: (event: HostEvent) => void): () => void {
    listener({ type: 'snapshot', snapshot: this.snapshot() });
    this.events.on('event', listener);
    return () => this.events.off('event', listener);
  }

  /** Stops every server and closes the app database. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.allWorktrees().map((worktree) => worktree.supervisor.stop()));
    this.events.removeAllListeners();
    this.db.close();
  }

  private allWorktrees(): OpenWorktree[] {
    return this.repos.flatMap((repo) => repo.worktrees);
  }

  private worktree(worktreeId: string): OpenWorktree {
    const found = this.allWorktrees().find((worktree) => worktree.id === worktreeId);
    if (!found) throw new HostCommandError(`unknown worktree id: ${worktreeId}`);
    return found;
  }

  private repoState(repo: OpenRepo): RepoState {
    return {
      id: repo.id,
      path: repo.path,
      name: path.basename(repo.path),
      worktrees: repo.worktrees.map((worktree) => this.worktreeState(worktree)),
    };
  }

  private worktreeState(worktree: OpenWorktree): WorktreeState {
    const port = worktree.supervisor.port;
    return {
      id: worktree.id,
      repoId: worktree.repoId,
      path: worktree.discovered.path,
      branch: worktree.discovered.branch,
      isMain: worktree.discovered.isMain,
      port,
      portNotice: worktree.portNotice,
      status: worktree.supervisor.status,
      urls: serverUrls(port),
    };
  }

  private emitWorktree(worktree: OpenWorktree): void {
    this.emit({ type: 'worktree-changed', worktree: this.worktreeState(worktree) });
  }

  private emit(event: HostEvent): void {
    this.events.emit('event', event);
  }
}
