// Following an open repository while the host runs: `git worktree add/remove` opens and forgets
// worktrees, a worktree whose directory vanished goes to `error` (its server stopped) and comes
// back when the directory does, a branch switch is reported. The host's poll calls refreshRepo for
// every open repo (Host.refreshAll).
import { UserError } from '../platform/errors.ts';
import {
  discoverRepo,
  type DiscoveredRepo,
  type DiscoveredWorktree,
} from './worktree-discovery.ts';
import { unservableMessage, type OpenRepo, type OpenWorktree } from './open-worktree.ts';

/** What a refresh needs of the host. */
export interface RefreshContext {
  /** True once the host is closing: a refresh stops where it is. */
  closed(): boolean;
  /** False once the repo was removed while its worktrees were being read. */
  stillOpen(repo: OpenRepo): boolean;
  /** Opens a newly added worktree (a row in the app database, a supervisor, not started). */
  openWorktree(repo: OpenRepo, discovered: DiscoveredWorktree): OpenWorktree;
  /** Forgets a removed worktree's row (its port and token). */
  forgetWorktree(worktree: OpenWorktree): void;
  /** Reports a change to one worktree (a `worktree-changed` event). */
  worktreeChanged(worktree: OpenWorktree): void;
}

/**
 * Re-reads one repo's worktrees: new ones are opened (and started if autostart is on), removed
 * ones are stopped and forgotten, ones whose directory vanished go to `error`. True when the set
 * of worktrees changed (the host then sends a snapshot).
 */
export async function refreshRepo(context: RefreshContext, repo: OpenRepo): Promise<boolean> {
  if (context.closed()) return false;
  let discovered: DiscoveredRepo;
  try {
    discovered = await discoverRepo(repo.path);
  } catch (error) {
    // The main worktree itself is gone or no longer a repository: every server goes to error.
    const message = error instanceof UserError ? error.message : String(error);
    for (const worktree of repo.worktrees) await markMissing(context, worktree, message);
    return false;
  }
  if (context.closed() || !context.stillOpen(repo)) return false;
  let changed = false;
  const seen = new Set(discovered.worktrees.map((worktree) => worktree.path));
  for (const gone of repo.worktrees.filter((worktree) => !seen.has(worktree.discovered.path))) {
    await gone.supervisor.stop();
    context.forgetWorktree(gone);
    repo.worktrees.splice(repo.worktrees.indexOf(gone), 1);
    changed = true;
  }
  for (const found of discovered.worktrees) {
    const open = repo.worktrees.find((worktree) => worktree.discovered.path === found.path);
    if (!open) {
      const added = context.openWorktree(repo, found);
      repo.worktrees.push(added);
      changed = true;
      if (added.row.autostart && !added.missingMessage) void added.supervisor.start();
      continue;
    }
    const problem = unservableMessage(found);
    if (problem) {
      await markMissing(context, open, problem);
    } else if (open.missingMessage) {
      open.missingMessage = null; // the directory is back
      open.discovered = found;
      context.worktreeChanged(open);
      if (open.row.autostart) void open.supervisor.start();
    } else if (open.discovered.branch !== found.branch) {
      open.discovered = found;
      context.worktreeChanged(open);
    }
  }
  return changed;
}

async function markMissing(
  context: RefreshContext,
  worktree: OpenWorktree,
  message: string,
): Promise<void> {
  if (worktree.missingMessage === message) return;
  worktree.missingMessage = message;
  await worktree.supervisor.stop();
  context.worktreeChanged(worktree);
}
