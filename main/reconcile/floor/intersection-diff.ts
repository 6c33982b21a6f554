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
import { gitInWorktree } from './git-queries.ts';

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
    return await gitInWorktree(
      root,
      ['diff', '--cached', '-M', '--no-color', '--no-ext-diff', '--no-textconv', baseSha, '--'],
      options,
    );
  });
}
