// The unified diff, vs the base commit, of a chosen set of paths only (the governed files that
// changed), without ever putting a path on git's command line. git diff has no
// --pathspec-from-file, so the set goes in through stdin instead: a temporary index is filled
// from the base tree (`read-tree`), the chosen paths are replaced by their working-tree content
// or removed when deleted (`update-index -z --force-remove --stdin` for the paths git reported
// missing, then `--add --remove --replace --stdin` for the rest, the paths on stdin; `--replace`
// lets a directory of the base become a file or a symlink, and back); blobs go
// to a temporary object directory layered over the repository's with
// GIT_ALTERNATE_OBJECT_DIRECTORIES), and
// `git diff --cached -M <base>` prints exactly those changes, renames detected. The repository,
// its index and its object store are never written to.
import path from 'node:path';
import { withScratchDirectory } from '../../platform/scratch-directory.ts';
import { compareUtf8 } from '../../platform/path-order.ts';
import { gitInWorktree, type GitOptions } from './git-queries.ts';

export interface DiffRequest {
  /** POSIX paths relative to the root whose working-tree state is diffed against the base. */
  paths: readonly string[];
  /** Absolute path of the repository's (common) object directory. */
  objectsDir: string;
  /**
   * Those of `paths` git reported missing from the working tree: dropped from the index without
   * looking at the disk (one under a directory that became a symlink cannot be looked up there).
   */
  deleted?: ReadonlySet<string>;
  signal?: AbortSignal;
}

/** `git diff <base>` limited to `paths` (present files with their current content, missing ones as deleted). */
export async function diffPathsAgainstBase(
  root: string,
  baseSha: string,
  request: DiffRequest,
): Promise<string> {
  if (request.paths.length === 0) return '';
  return withPathsIndexed(root, baseSha, request, (options) =>
    gitInWorktree(root, diffArgs(baseSha), options),
  );
}

/**
 * diffPathsAgainstBase for several sets of paths (export-context's specs), with one temporary
 * index for their union and one diff: each set's diff is the sections of its own files, in git's
 * order. That is exact while the union's diff pairs no two paths: a rename needs a deleted path,
 * so when git reports one deleted, renamed or copied, each set is diffed alone as before.
 */
export async function diffPathSetsAgainstBase(
  root: string,
  baseSha: string,
  request: Omit<DiffRequest, 'paths' | 'deleted'> & { sets: readonly (readonly string[])[] },
): Promise<string[]> {
  const { sets, ...rest } = request;
  const alone = () =>
    Promise.all(sets.map((paths) => diffPathsAgainstBase(root, baseSha, { ...rest, paths })));
  const union = [...new Set(sets.flat())].sort(compareUtf8);
  if (sets.length < 2 || union.length === 0) return alone();
  const sections = await withPathsIndexed(
    root,
    baseSha,
    { ...rest, paths: union },
    async (options) => {
      const raw = await gitInWorktree(
        root,
        ['diff', '--cached', '-M', '--raw', '-z', baseSha, '--'],
        options,
      );
      const patch = await gitInWorktree(root, diffArgs(baseSha), options);
      return sectionsByPath(raw, patch, new Set(union));
    },
  );
  if (sections === undefined) return alone();
  // In the order git printed them, as a diff of the set alone would.
  return sets.map((paths) =>
    paths
      .flatMap((file) => sections.get(file) ?? [])
      .sort((a, b) => a.at - b.at)
      .map((section) => section.text)
      .join(''),
  );
}

function diffArgs(baseSha: string): string[] {
  return ['diff', '--cached', '-M', '--no-color', '--no-ext-diff', '--no-textconv', baseSha, '--'];
}

/** A changed path's part of a diff, and where it starts there. */
interface DiffSection {
  at: number;
  text: string;
}

/**
 * Each changed path's part of `patch`, from the same diff's `--raw -z` listing (same order: one
 * section per path, two for a type change, which git prints as a deletion and an addition), or
 * undefined when a path was deleted, renamed or copied, is not one of `asked` (a name git spells
 * otherwise), or the two do not line up.
 */
function sectionsByPath(
  raw: string,
  patch: string,
  asked: ReadonlySet<string>,
): Map<string, DiffSection> | undefined {
  const fields = raw.split('\0');
  const changes: { path: string; sections: number }[] = [];
  for (let at = 0; at + 1 < fields.length; at += 2) {
    const status = fields[at]!.slice(fields[at]!.lastIndexOf(' ') + 1);
    if (/^[DRC]/.test(status) || !asked.has(fields[at + 1]!)) return undefined;
    changes.push({ path: fields[at + 1]!, sections: status === 'T' ? 2 : 1 });
  }
  const starts: number[] = [];
  if (patch.startsWith('diff --git ')) starts.push(0);
  for (
    let at = patch.indexOf('\ndiff --git ');
    at !== -1;
    at = patch.indexOf('\ndiff --git ', at + 1)
  ) {
    starts.push(at + 1);
  }
  const wanted = changes.reduce((sum, change) => sum + change.sections, 0);
  if (starts.length !== wanted) return undefined;
  starts.push(patch.length);
  const byPath = new Map<string, DiffSection>();
  let section = 0;
  for (const change of changes) {
    const at = starts[section]!;
    byPath.set(change.path, { at, text: patch.slice(at, starts[section + change.sections]) });
    section += change.sections;
  }
  return byPath;
}

/**
 * Runs `diff` with git pointed at a temporary index holding the base tree with `paths` replaced by
 * their working-tree state, and a temporary object directory layered over the repository's.
 */
function withPathsIndexed<T>(
  root: string,
  baseSha: string,
  request: DiffRequest,
  diff: (options: GitOptions) => Promise<T>,
): Promise<T> {
  return withScratchDirectory('grove-diff-', ['objects'], async (scratch) => {
    const objects = path.join(scratch, 'objects');
    const signal = request.signal;
    const options = {
      env: {
        GIT_INDEX_FILE: path.join(scratch, 'index'),
        GIT_OBJECT_DIRECTORY: objects,
        GIT_ALTERNATE_OBJECT_DIRECTORIES: request.objectsDir,
      },
      ...(signal ? { signal } : {}),
    };
    await gitInWorktree(root, ['read-tree', baseSha], options);
    // git hashes each path's working-tree file (clean filters, modes and symlinks as git sees
    // them) into the scratch object directory, adds new files and drops missing ones.
    const stdin = (paths: readonly string[]) =>
      Buffer.from(paths.map((file) => `${file}\0`).join(''), 'utf8');
    const deleted = request.paths.filter((file) => request.deleted?.has(file));
    const present = request.paths.filter((file) => !request.deleted?.has(file));
    if (deleted.length > 0) {
      await gitInWorktree(root, ['update-index', '-z', '--force-remove', '--stdin'], {
        ...options,
        input: stdin(deleted),
      });
    }
    if (present.length > 0) {
      await gitInWorktree(
        root,
        ['update-index', '-z', '--add', '--remove', '--replace', '--stdin'],
        {
          ...options,
          input: stdin(present),
        },
      );
    }
    return await diff(options);
  });
}
