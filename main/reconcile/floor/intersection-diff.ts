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
// its index and its object store are never written to. Several sets of tracked changes at once
// (export-context's specs): one `git diff <base>` of the working tree, cut by path.
import path from 'node:path';
import { withScratchDirectory } from '../../platform/scratch-directory.ts';
import { GitCommandError } from '../../platform/git/run-git.ts';
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
    gitInWorktree(root, ['diff', '--cached', '-M', ...DIFF_OPTIONS, baseSha, '--'], options),
  );
}

/**
 * For several sets of tracked paths (export-context's specs: the changes `git diff <base>` lists),
 * each set's part of `git diff <base>`, from one diff cut into its files' sections: NotarAI's
 * `git diff <base> -- <files>` for each set, in one run and without a path on the command line.
 * When the sets hold at least half of the `trackedChanges` paths that diff lists, it is the
 * working tree's own diff (the repository's index read, never written: GIT_OPTIONAL_LOCKS=0);
 * else the diff of a temporary index holding their union, so that a branch's thousands of changes
 * no spec governs are not diffed for nothing. No rename is paired (a path of one set with one of
 * another); a whole diff over WHOLE_DIFF_MAX_BYTES gives way to the union's. When a path asked
 * for is deleted or unmerged there, or the diff cannot be cut (git's two listings disagree, an
 * output over the cap), each set is diffed alone by diffPathsAgainstBase.
 */
export async function diffPathSetsAgainstBase(
  root: string,
  baseSha: string,
  request: Omit<DiffRequest, 'paths' | 'deleted'> & {
    sets: readonly (readonly string[])[];
    trackedChanges: number;
  },
): Promise<string[]> {
  const { sets, trackedChanges, ...rest } = request;
  const alone = () =>
    Promise.all(sets.map((paths) => diffPathsAgainstBase(root, baseSha, { ...rest, paths })));
  const union = [...new Set(sets.flat())];
  if (union.length === 0) return sets.map(() => '');
  const cut = ['--no-renames', '--raw', '-z', '-p', ...DIFF_OPTIONS, baseSha, '--'];
  const signal = rest.signal ? { signal: rest.signal } : {};
  const whole = () =>
    gitInWorktree(root, ['diff', ...cut], { ...signal, maxOutputBytes: WHOLE_DIFF_MAX_BYTES });
  const ofUnion = () =>
    withPathsIndexed(root, baseSha, { ...rest, paths: union }, (options) =>
      gitInWorktree(root, ['diff', '--cached', ...cut], options),
    );
  for (const attempt of union.length * 2 >= trackedChanges ? [whole, ofUnion] : [ofUnion]) {
    let output: string;
    try {
      output = await attempt();
    } catch (error) {
      rest.signal?.throwIfAborted();
      if (error instanceof GitCommandError) continue; // over a cap: the next way, or each alone
      throw error;
    }
    const sections = sectionsByPath(output, new Set(union));
    if (sections === undefined) break; // a path deleted or unmerged: the union's diff says so too
    // In the order git printed them, as a diff of the set alone would.
    return sets.map((paths) =>
      paths
        .flatMap((file) => sections.get(file) ?? [])
        .sort((left, right) => left.at - right.at)
        .map((section) => section.text)
        .join(''),
    );
  }
  return alone();
}

/**
 * The most the working tree's whole diff may print (the changes no spec governs included, a
 * committed 200 MB text file among them): beyond it, the union's temporary index, which diffs
 * the specs' files only.
 */
const WHOLE_DIFF_MAX_BYTES = 32 * 1024 * 1024;

/** What every diff Grove shows passes: git's own text, whatever the user's configuration adds. */
const DIFF_OPTIONS = ['--no-color', '--no-ext-diff', '--no-textconv'];

/** A changed path's part of a diff, and where it starts there. */
interface DiffSection {
  at: number;
  text: string;
}

/**
 * Each changed path's part of `git diff --raw -z -p` output: its `--raw` records (NUL-terminated
 * fields), a NUL, then the patch, in the same order — one section per path, two for a type change
 * (git prints it as a deletion and an addition). Undefined when a path of `asked` is deleted or
 * other than modified, added or type-changed, or the two parts do not line up.
 */
function sectionsByPath(
  output: string,
  asked: ReadonlySet<string>,
): Map<string, DiffSection> | undefined {
  const changes: { path: string; sections: number }[] = [];
  let at = 0;
  while (output.startsWith(':', at)) {
    const metaEnd = output.indexOf('\0', at);
    const pathEnd = metaEnd === -1 ? -1 : output.indexOf('\0', metaEnd + 1);
    if (pathEnd === -1) return undefined;
    const status = output.slice(output.lastIndexOf(' ', metaEnd) + 1, metaEnd);
    const file = output.slice(metaEnd + 1, pathEnd);
    if (asked.has(file) && !/^[MAT]$/.test(status)) return undefined;
    changes.push({ path: file, sections: status === 'T' ? 2 : 1 });
    at = pathEnd + 1;
  }
  if (changes.length === 0) return output === '' ? new Map() : undefined;
  if (output[at] !== '\0') return undefined;
  const patchStart = at + 1;
  const starts: number[] = [];
  for (let next = output.indexOf('diff --git ', patchStart); next !== -1;) {
    starts.push(next);
    next = output.indexOf('\ndiff --git ', next);
    if (next !== -1) next += 1;
  }
  const wanted = changes.reduce((sum, change) => sum + change.sections, 0);
  if (starts[0] !== patchStart || starts.length !== wanted) return undefined;
  starts.push(output.length);
  const byPath = new Map<string, DiffSection>();
  let section = 0;
  for (const change of changes) {
    const start = starts[section]!;
    if (asked.has(change.path)) {
      byPath.set(change.path, {
        at: start,
        text: output.slice(start, starts[section + change.sections]),
      });
    }
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
