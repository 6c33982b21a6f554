// Pure helpers of a spec's review (spec-detail.tsx): the files to review from get_spec_diff's
// answer (each with its status vs the base, whether it was ever reconciled, the other specs that
// govern it), the folder tree the list shows (with counts, collapsible, filtered by path), each
// file's part of the unified diff, and what "Mark reconciled" covers. Kept apart from the views so
// they are unit-tested without a DOM.
import type { FileReviewStatus, SpecDiffResult } from '../../../shared/reconcile-results.ts';

export interface ReviewFile {
  path: string;
  status: FileReviewStatus;
  /** A rename's path in the base. */
  from?: string;
  /** No reconciled fingerprint at all (never marked here, not in the committed snapshot). */
  neverReconciled: boolean;
  /** Other specs governing it: marking it reconciles it for them too. */
  otherSpecs: readonly string[];
  binary: boolean;
  /** A spec file (its content comes whole, not as a diff). */
  specFile: boolean;
  /** Changed since reconciled (can be marked); false for a deletion vs the base. */
  markable: boolean;
}

/** `2,000 files`: a count with its noun, thousands separated. */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** Code-point order: the order git and the engine list paths in, for ASCII names. */
const byPath = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The files a spec's review lists: changed since reconciled (specs included), then deletions. */
export function reviewFiles(diff: SpecDiffResult): ReviewFile[] {
  const review = diff.review;
  const never = new Set(review?.never_reconciled ?? []);
  const binary = new Set(diff.binary_changes);
  const specFiles = new Set(diff.spec_changes.map((change) => change.path));
  const out: ReviewFile[] = [];
  const add = (path: string, markable: boolean, fallback: FileReviewStatus): void => {
    const from = review?.renamed_from[path];
    out.push({
      path,
      status: review?.status[path] ?? fallback,
      ...(from === undefined ? {} : { from }),
      neverReconciled: never.has(path),
      otherSpecs: review?.other_specs[path] ?? [],
      binary: binary.has(path),
      specFile: specFiles.has(path),
      markable,
    });
  };
  for (const path of diff.files) add(path, true, 'modified');
  for (const path of specFiles) add(path, true, 'modified');
  const renamedAway = new Set(Object.values(review?.renamed_from ?? {}));
  for (const path of diff.deleted_files) {
    if (!renamedAway.has(path) && !specFiles.has(path)) add(path, false, 'deleted');
  }
  return out.sort((a, b) => byPath(a.path, b.path));
}

/** What a status reads as in the list (short) and in words. */
export const STATUS_LABEL: Readonly<Record<FileReviewStatus, { tag: string; words: string }>> = {
  added: { tag: 'A', words: 'added' },
  modified: { tag: 'M', words: 'modified' },
  deleted: { tag: 'D', words: 'deleted' },
  renamed: { tag: 'R', words: 'renamed' },
  untracked: { tag: 'U', words: 'new, untracked' },
  unchanged: { tag: '=', words: 'same as the base' },
};

/** The files whose path contains `filter` (case-insensitive; words separated by spaces all match). */
export function filterFiles(files: readonly ReviewFile[], filter: string): readonly ReviewFile[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return files;
  return files.filter((file) => {
    const path = file.path.toLowerCase();
    return words.every((word) => path.includes(word));
  });
}

export type TreeRow =
  | { kind: 'folder'; path: string; name: string; depth: number; count: number; open: boolean }
  | { kind: 'file'; file: ReviewFile; name: string; depth: number };

interface Folder {
  folders: Map<string, Folder>;
  files: ReviewFile[];
  count: number;
}

/**
 * The rows of the folder tree over `files` (sorted by path): each folder with how many files it
 * holds, then its subfolders and its files; a folder in `collapsed` shows without its content.
 * A chain of folders holding only one folder reads as one row (`src/main/java`).
 */
export function treeRows(files: readonly ReviewFile[], collapsed: ReadonlySet<string>): TreeRow[] {
  const root: Folder = { folders: new Map(), files: [], count: 0 };
  for (const file of files) {
    const parts = file.path.split('/');
    let folder = root;
    folder.count++;
    for (let index = 0; index < parts.length - 1; index++) {
      const name = parts[index]!;
      let next = folder.folders.get(name);
      if (!next) {
        next = { folders: new Map(), files: [], count: 0 };
        folder.folders.set(name, next);
      }
      next.count++;
      folder = next;
    }
    folder.files.push(file);
  }
  const rows: TreeRow[] = [];
  const walk = (folder: Folder, prefix: string, depth: number): void => {
    for (const name of [...folder.folders.keys()].sort(byPath)) {
      let child = folder.folders.get(name)!;
      let label = name;
      // One row for a chain of folders that hold nothing but one folder.
      while (child.files.length === 0 && child.folders.size === 1) {
        const [only, next] = [...child.folders][0]!;
        label = `${label}/${only}`;
        child = next;
      }
      const path = `${prefix}${label}`;
      const open = !collapsed.has(path);
      rows.push({ kind: 'folder', path, name: label, depth, count: child.count, open });
      if (open) walk(child, `${path}/`, depth + 1);
    }
    for (const file of folder.files) {
      rows.push({ kind: 'file', file, name: file.path.slice(prefix.length), depth });
    }
  };
  walk(root, '', 0);
  return rows;
}

/** Each file's part of a unified diff (`diff --git a/X b/Y` ... up to the next), keyed by Y. */
export function splitDiff(diff: string): Map<string, string> {
  const parts = new Map<string, string>();
  if (diff.trim() === '') return parts;
  for (const part of diff.split(/^(?=diff --git )/m)) {
    const header = /^diff --git a\/(.*) b\/(.*)$/m.exec(part);
    if (header) parts.set(header[2]!, part.replace(/\n$/, ''));
  }
  return parts;
}

/** How many changed files "a handful" is: marking more asks first, even when all were viewed. */
export const HANDFUL = 5;

export interface MarkPlan {
  /** The paths sent to mark_reconciled. */
  files: string[];
  /** Of the changed files marked, those never shown in this review. */
  neverShown: number;
  /** Of the changed files marked, those not ticked Viewed. */
  notViewed: number;
  /** The spec file is marked with them (every changed file is covered). */
  withSpec: boolean;
  /** Other spec -> the marked files it also governs. */
  otherSpecs: Map<string, string[]>;
  /** Asks first: files nobody viewed, or more than a handful. */
  ask: boolean;
}

/**
 * What a mark covers: `chosen` (the viewed files, or every markable file), plus the spec file
 * itself when the mark covers every changed file (the spec is then reconciled with them) or the
 * spec changed and nothing else is left.
 */
export function markPlan(options: {
  files: readonly ReviewFile[];
  chosen: ReadonlySet<string>;
  viewed: ReadonlySet<string>;
  shown: ReadonlySet<string>;
  specPath: string;
  specInvalidated: boolean;
}): MarkPlan {
  const markable = options.files.filter((file) => file.markable);
  const picked = markable.filter((file) => options.chosen.has(file.path));
  const covered = picked.length === markable.length;
  const withSpec =
    covered &&
    (markable.length > 0 || options.specInvalidated) &&
    !picked.some((file) => file.path === options.specPath);
  const otherSpecs = new Map<string, string[]>();
  for (const file of picked) {
    for (const spec of file.otherSpecs) {
      const list = otherSpecs.get(spec) ?? [];
      list.push(file.path);
      otherSpecs.set(spec, list);
    }
  }
  const notViewed = picked.filter((file) => !options.viewed.has(file.path)).length;
  return {
    files: [...picked.map((file) => file.path), ...(withSpec ? [options.specPath] : [])],
    neverShown: picked.filter((file) => !options.shown.has(file.path)).length,
    notViewed,
    withSpec,
    otherSpecs,
    ask: notViewed > 0 || picked.length > HANDFUL,
  };
}
