// Applies the watcher's path events to a live-index snapshot (live-index.ts) without scanning the
// worktree again: for each path that moved, git's listing (a new untracked file is listed unless
// git ignores it: one `git check-ignore --stdin` for the batch), the files each spec governs and
// the content hashes change for that path only; a spec file that moved is parsed again and its
// globs matched again, the other specs kept as they were (spec-loader.ts, reloadSpecs). What this
// cannot vouch for gives the reason instead, and the caller scans everything as before: a directory (made,
// removed or renamed), a special file, a path under a listed symlink, submodule or nested
// repository, one under node_modules/, a name that is not valid UTF-8, or git failing.
//
// Tracked files keep their place in the listing (it comes from git's index, which no worktree
// write changes), but what changed vs the base (a `git diff` with rename detection, which pairs
// paths) is dropped when one of them moves and asked of git again by the next computation.
import path from 'node:path';
import { entryKind, lstatNoFollowInsideRoot } from '../../platform/confined-fs.ts';
import { runGit } from '../../platform/git/run-git.ts';
import { compareUtf8, hasSortedUtf8, lowerBoundUtf8 } from '../../platform/path-order.ts';
import type { ChangedEntry, WorktreeFiles } from './git-queries.ts';
import {
  governs,
  isSpecPath,
  reloadSpecs,
  type SpecSet,
  type ValidSpec,
} from '../specs/spec-loader.ts';

/** The results of one scan, valid while nothing has moved since it began. */
export interface ScanSnapshot {
  listing?: WorktreeFiles;
  specs?: SpecSet;
  /** Base name as given -> its commit. */
  bases: Map<string, string>;
  /** Commit -> tracked changes vs the working tree. */
  changed: Map<string, ChangedEntry[]>;
  /** Path -> its content hash (BLAKE3, hex), as the scan read it or the stat fast path vouched. */
  hashes: Map<string, string>;
  /**
   * The hashes of `hashes` that were read from the file's bytes (by a scan or a mark), not taken
   * from a stat row: only these are recorded by mark_reconciled without reading, since an edit
   * that keeps size, mtime and inode fools the stat fast path, and a read then mends the row.
   */
  read: Map<string, string>;
  /** Spec path -> the listed files its globs govern (matching 20,000 paths per spec costs). */
  governed: Map<string, string[]>;
}

/** More paths than this in one batch (a checkout, a build): a full scan is cheaper and safer. */
export const MAX_INCREMENTAL_PATHS = 1_000;

/** True if some listed path lies under `directory` (it is, or was, a directory). */
function hasUnder(list: readonly string[], directory: string): boolean {
  const prefix = `${directory}/`;
  return list[lowerBoundUtf8(list, prefix)]?.startsWith(prefix) ?? false;
}

function insertSorted(list: string[], item: string): void {
  const at = lowerBoundUtf8(list, item);
  if (list[at] !== item) list.splice(at, 0, item);
}

function removeSorted(list: string[], item: string): void {
  const at = lowerBoundUtf8(list, item);
  if (list[at] === item) list.splice(at, 1);
}

/** Which of `paths` (untracked candidates) git ignores; undefined if git cannot say. */
async function ignoredPaths(
  root: string,
  paths: readonly string[],
): Promise<Set<string> | undefined> {
  if (paths.length === 0) return new Set();
  // `./` first, so a leading `:` is never read as pathspec magic; paths go through stdin.
  const output = await runGit(['check-ignore', '--stdin', '-z'], {
    cwd: root,
    ceiling: path.dirname(root),
    input: Buffer.from(paths.map((file) => `./${file}\0`).join(''), 'utf8'),
  });
  // 0: some ignored, 1: none; anything else (a path inside a submodule...): cannot say.
  if (output.code !== 0 && output.code !== 1) return undefined;
  const ignored = new Set<string>();
  for (const reported of output.stdout.toString('utf8').split('\0')) {
    if (reported !== '') ignored.add(reported.startsWith('./') ? reported.slice(2) : reported);
  }
  return ignored;
}

/**
 * The snapshot after the files at `paths` (POSIX, relative, none in git's directory or the cache
 * directory; see LiveIndex.noteEvents) were created, edited or deleted; `fallback` (why) when a
 * full scan is needed. `base` is not changed, except that the content hashes of `paths` are forgotten (the
 * hash maps are shared: an entry there only ever saves a read).
 */
/**
 * Why a file with more than one name (a hard link) ends the snapshot: a write through its other
 * name, perhaps outside the worktree, sends no event for this one, so nothing kept for it could be
 * vouched for; every call then scans (docs/decisions.md, "The sync tap").
 */
export const linkedFallback = (file: string): string =>
  `${file} has more than one name (a hard link): a write through another name sends no event here`;

export async function applyPathChanges(
  root: string,
  base: ScanSnapshot,
  paths: readonly string[],
): Promise<ScanSnapshot | { fallback: string }> {
  const listing = base.listing;
  if (!listing) return { fallback: 'no listing to apply to' };
  if (paths.length > MAX_INCREMENTAL_PATHS) return { fallback: `${paths.length} paths at once` };
  const listed = listing.present;
  const removed: string[] = [];
  const candidates: string[] = [];
  const changedSpecs = new Set<string>();
  let trackedMoved = false;
  for (const file of [...new Set(paths)].sort(compareUtf8)) {
    if (file === '' || file.includes('\ufffd') || file.split('/').includes('node_modules')) {
      return { fallback: `an unwatched or unnamed path: ${file}` };
    }
    // Under something git lists as one entry (a symlink, a submodule, a nested repository)?
    for (let slash = file.indexOf('/'); slash >= 0; slash = file.indexOf('/', slash + 1)) {
      const directory = file.slice(0, slash);
      if (hasSortedUtf8(listed, directory) || hasSortedUtf8(listed, `${directory}/`)) {
        return { fallback: `${file} is under ${directory}, which git lists as one entry` };
      }
    }
    if (hasUnder(listed, file)) return { fallback: `${file} held listed files` };
    let info: ReturnType<typeof lstatNoFollowInsideRoot>;
    try {
      info = lstatNoFollowInsideRoot(root, file);
    } catch {
      return { fallback: `${file} is under a symlinked directory` };
    }
    const kind = entryKind(info);
    if (kind === 'directory' || kind === 'special') return { fallback: `${file} is a ${kind}` };
    if (kind === 'file' && (info?.nlink ?? 1) > 1) return { fallback: linkedFallback(file) };
    base.hashes.delete(file);
    base.read.delete(file);
    if (isSpecPath(file)) changedSpecs.add(file);
    const isListed = hasSortedUtf8(listed, file);
    if (isListed && !listing.untracked.has(file)) trackedMoved = true;
    else if (isListed && kind === 'missing') removed.push(file);
    else if (!isListed && kind !== 'missing') candidates.push(file);
  }
  const ignored = await ignoredPaths(root, candidates);
  if (!ignored) return { fallback: 'git check-ignore failed' };
  const added = candidates.filter((file) => !ignored.has(file));

  let specs: SpecSet | undefined = base.specs;
  if (changedSpecs.size > 0 && specs) specs = await reloadSpecs(root, specs, changedSpecs);
  // Governed sets of specs kept as they were; a spec parsed again is matched again by its reader.
  const validNow = new Map<string, ValidSpec>(
    (specs?.valid ?? []).map((spec) => [spec.path, spec]),
  );
  const validBefore = new Set<ValidSpec>(base.specs?.valid ?? []);
  const governed = new Map<string, string[]>();
  for (const [specPath, files] of base.governed) {
    const spec = validNow.get(specPath);
    if (!spec || !validBefore.has(spec)) continue;
    let next: string[] | undefined;
    for (const file of removed) {
      if (!governs(spec, file)) continue;
      next ??= files.slice();
      removeSorted(next, file);
    }
    for (const file of added) {
      if (!governs(spec, file)) continue;
      next ??= files.slice();
      insertSorted(next, file);
    }
    governed.set(specPath, next ?? files);
  }

  let nextListing: WorktreeFiles = listing;
  if (removed.length > 0 || added.length > 0) {
    const present = listed.slice();
    const untracked = new Set(listing.untracked);
    for (const file of removed) {
      removeSorted(present, file);
      untracked.delete(file);
    }
    for (const file of added) {
      insertSorted(present, file);
      untracked.add(file);
    }
    nextListing = { present, untracked, deleted: listing.deleted };
  }
  return {
    listing: nextListing,
    ...(specs ? { specs } : {}),
    bases: new Map(base.bases),
    // Tracked changes vs a base hold rename pairs: asked of git again once a tracked file moved.
    changed: trackedMoved ? new Map() : new Map(base.changed),
    hashes: base.hashes,
    read: base.read,
    governed,
  };
}
