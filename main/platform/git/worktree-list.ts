// `git worktree list --porcelain -z`, parsed: used by worktree discovery (the host) and by
// get_project_context (a worktree's own view of its siblings).

/** One entry of `git worktree list`, as git reports it. */
export interface ListedWorktree {
  /** Absolute path of the worktree root (discoverRepo resolves symlinks). */
  path: string;
  /** Branch name (without refs/heads/), or null when HEAD is detached. */
  branch: string | null;
  /** HEAD commit, or null in a repository without commits. */
  head: string | null;
  isMain: boolean;
  /** True when git reports the worktree's directory as gone (`prunable`). */
  missing: boolean;
}

/** Parses `git worktree list --porcelain -z` output. Bare entries are left out. */
export function parseWorktreeList(output: string): ListedWorktree[] {
  const worktrees: ListedWorktree[] = [];
  // Records are separated by an empty field (two NULs); fields are "key value" or "key".
  const records = output.split('\0\0');
  for (const [index, record] of records.entries()) {
    const fields = record.split('\0').filter((field) => field.length > 0);
    if (fields.length === 0) continue;
    const entry = new Map<string, string>();
    for (const field of fields) {
      const space = field.indexOf(' ');
      entry.set(
        space === -1 ? field : field.slice(0, space),
        space === -1 ? '' : field.slice(space + 1),
      );
    }
    const worktreePath = entry.get('worktree');
    if (!worktreePath || entry.has('bare')) continue;
    const branchRef = entry.get('branch');
    worktrees.push({
      path: worktreePath,
      branch: branchRef ? branchRef.replace(/^refs\/heads\//, '') : null,
      head: entry.get('HEAD') && !/^0+$/.test(entry.get('HEAD')!) ? entry.get('HEAD')! : null,
      isMain: index === 0, // git always lists the main worktree first
      missing: entry.has('prunable'),
    });
  }
  return worktrees;
}
