// mark_reconciled: hashes the files a client reviewed and records them in the hash cache. Plain
// relative paths are hashed by the workers, which check them with the sandbox's own predicates;
// anything else goes through resolveInsideRoot, which also words the refusal. Missing files are
// skipped (as NotarAI does); directories, special files and paths outside are rejected, in the
// order given. The rows a mark replaced can be kept (MarkRecord) for the window's Undo.
import path from 'node:path';
import type { MarkReconciledResult } from '../../../shared/reconcile-results.ts';
import { isGitName, MAX_PATH_LENGTH, resolveInsideRoot } from '../../platform/confined-fs.ts';
import { UserError } from '../../platform/errors.ts';
import type { EngineParts } from '../floor/classify.ts';
import type { FileOutcome } from '../floor/file-jobs.ts';
import type { ReconciledRow, StatRow } from '../floor/hash-cache.ts';
import { listedFiles } from '../floor/live-index.ts';
import { stageMark } from '../../platform/stage-timings.ts';
import { forEachInSlices } from '../../platform/time-slices.ts';

/** What a mark wrote and the rows it replaced: enough to undo it (HashCache.restoreReconciled). */
export interface MarkRecord {
  written: { path: string; hash: string }[];
  /** Unix seconds, the `updated_at` of every row written. */
  updatedAt: number;
  /** Each path written -> its row before (null: it had none). */
  replaced: Map<string, ReconciledRow | null>;
}

export async function markFilesReconciled(
  parts: EngineParts,
  files: readonly string[],
  signal?: AbortSignal,
  /** Told how many files were read and how many the live index vouched for (diagnostics). */
  report?: (counts: { read: number; vouched: number }) => void,
  /** Given: told what the mark wrote and replaced (the window's Undo). */
  keep?: (record: MarkRecord) => void,
): Promise<MarkReconciledResult> {
  // The hashes read here describe the files as of now: the live index may keep them. Where it
  // already holds a file's hash and the watcher vouches that nothing moved since (a sync, whose
  // cookie is in flight while the other files are hashed), the file is not read again.
  const index = parts.index;
  const sequence = index?.current();
  const syncing = index?.hasSnapshot ? index.sync() : undefined;
  syncing?.catch(() => undefined);
  const snapshot = syncing ? index?.snapshot(sequence) : undefined;
  // Hashes read from the bytes: a stat row's can be fooled by an edit that keeps size and mtime.
  const known = snapshot?.read;
  // Only files git lists: any other can change without an event (live-index.ts, listedFiles).
  const listed = listedFiles(snapshot);
  const rejections: { index: number; path: string; reason: string }[] = [];
  let order: Map<string, number> | undefined;
  const reject = (file: string, reason: string): void => {
    if (!order) {
      const first = new Map<string, number>();
      files.forEach((name, position) => {
        if (!first.has(name)) first.set(name, position);
      });
      order = first;
    }
    rejections.push({ index: order.get(file) ?? 0, path: file, reason });
  };
  // Plain relative paths go straight to the file workers, which check them with the sandbox's
  // own predicates; anything else (absolute, `..`, odd characters) and anything the workers
  // cannot prove to be inside goes through resolveInsideRoot, which also words the refusal.
  const direct: { requested: string; relative: string }[] = [];
  const vouchable: { requested: string; relative: string; hash: string }[] = [];
  const viaSandbox: string[] = [];
  // Loops over every file named run in slices (platform/time-slices.ts).
  await forEachInSlices(
    files,
    (requested) => {
      const relative = simpleRelative(requested);
      if (relative === null) {
        viaSandbox.push(requested);
        return;
      }
      const hash = listed?.has(relative) ? known?.get(relative) : undefined;
      if (hash === undefined) direct.push({ requested, relative });
      else vouchable.push({ requested, relative, hash });
    },
    signal,
  );
  stageMark('checked'); // GROVE_STAGE_TIMINGS only (benchmarks)
  const outcomes = await parts.files.hashConfined(
    parts.root,
    direct.map((entry) => entry.relative),
    signal,
  );
  // Vouched for only when nothing moved up to the sync; otherwise these files are read as well.
  if (vouchable.length > 0 && (await syncing) !== sequence) {
    const rest = vouchable.splice(0);
    const more = await parts.files.hashConfined(
      parts.root,
      rest.map((entry) => entry.relative),
      signal,
    );
    // One at a time: spreading 200,000 arguments into push() overflows the stack.
    rest.forEach((entry, index) => {
      direct.push(entry);
      outcomes.push(more[index] as FileOutcome);
    });
  }
  stageMark('hashed');
  const rows = new Map<string, StatRow>();
  /** A file read here with more than one name: the live index may keep nothing (refuseLinked). */
  let linked: string | undefined;
  await forEachInSlices(
    direct,
    (entry, index) => {
      const outcome = outcomes[index];
      switch (outcome?.code) {
        case 'hashed':
          if (outcome.linked) linked ??= entry.relative;
          rows.set(entry.relative, {
            path: entry.relative,
            size: outcome.size,
            mtimeMs: outcome.mtimeMs,
            ino: outcome.ino,
            hash: outcome.hash,
            recordedMs: outcome.recordedMs,
          });
          return;
        case 'directory':
          reject(entry.requested, DIRECTORY_REFUSAL);
          return;
        case 'special':
          reject(entry.requested, 'not a regular file');
          return;
        case 'missing':
          return;
        default:
          viaSandbox.push(entry.requested);
      }
    },
    signal,
  );
  for (const requested of viaSandbox) {
    let resolved;
    try {
      resolved = await resolveInsideRoot(parts.root, requested);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      // A path inside the worktree that does not exist is skipped, as NotarAI does.
      if (!(error instanceof UserError && reason.startsWith('no such file or directory'))) {
        reject(requested, reason);
      }
      continue;
    }
    const [outcome] = await parts.files.hashConfined(parts.root, [resolved.relativePath], signal);
    const key = cacheKey(parts.root, requested, resolved.relativePath);
    if (outcome?.code === 'hashed') {
      if (outcome.linked) linked ??= resolved.relativePath;
      rows.set(key, {
        path: key,
        size: outcome.size,
        mtimeMs: outcome.mtimeMs,
        ino: outcome.ino,
        hash: outcome.hash,
        recordedMs: outcome.recordedMs,
      });
    } else if (outcome?.code === 'directory') {
      reject(requested, DIRECTORY_REFUSAL);
    } else if (outcome?.code !== 'missing') {
      reject(requested, 'not a regular file');
    }
  }
  const hashed = [...rows.values()];
  // A file with another name can change with no event for this one (a write through a name
  // outside the worktree): the index keeps nothing while there is one, as a scan that finds one.
  if (linked !== undefined) parts.index?.refuseLinked(linked);
  // Into the snapshot the mark began with, if nothing moved since: only files git lists.
  const listedNow = listedFiles(parts.index?.snapshot(sequence));
  if (listedNow) {
    const pairs = hashed.map((row) => [row.path, row.hash] as const);
    await parts.index?.recordHashes(sequence, pairs, pairs, (file) => listedNow.has(file));
  }
  // NotarAI's rows: the files read now, and those the index vouched for (no stat row: the scan
  // that hashed them wrote one, and a missing row only means a file is read again once).
  const reconciled = new Map<string, string>();
  for (const { relative, hash } of vouchable) reconciled.set(relative, hash);
  for (const row of hashed) reconciled.set(row.path, row.hash);
  report?.({ read: direct.length + viaSandbox.length, vouched: vouchable.length });
  stageMark('rows-built');
  const written = [...reconciled].map(([file, hash]) => ({ path: file, hash }));
  const updatedAt = Math.floor(parts.now() / 1000);
  const replaced = keep ? new Map<string, ReconciledRow | null>() : undefined;
  const updated = await parts.cache.writeReconciled(written, hashed, updatedAt, signal, replaced);
  if (keep && replaced) keep({ written, updatedAt, replaced });
  const rejected = rejections
    .sort((a, b) => a.index - b.index)
    .map(({ path: file, reason }) => ({ path: file, reason }));
  return { updated, rejected };
}

/** Segments of at least one character, none starting with '.', no backslash, NUL or '//'. */
const PLAIN_PATH = /^[^./\\\0][^/\\\0]*(?:\/[^./\\\0][^/\\\0]*)*$/;

const DIRECTORY_REFUSAL = 'is a directory: mark the files in it instead (get_spec_diff lists them)';

/**
 * `requested` as a plain POSIX path relative to the root (`./a` -> `a`), or null when it needs
 * the sandbox's full check: absolute, `..`, empty segments, backslashes, NUL, `.git`, too long.
 */
function simpleRelative(requested: string): string | null {
  if (requested.length === 0 || requested.length > MAX_PATH_LENGTH) return null;
  // The usual case, at a glance: no segment starts with '.' (so none is '.', '..' or '.git'), none
  // is empty, no backslash or NUL. As it is.
  if (PLAIN_PATH.test(requested)) return requested;
  if (/[\\\0]/.test(requested) || requested.startsWith('/')) return null;
  const segments = requested.split('/');
  while (segments[0] === '.' && segments.length > 1) segments.shift();
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..' || isGitName(segment)) return null;
  }
  return segments.join('/');
}

/** The cache key of a path a client asked to mark: `./a` -> `a`, relative and POSIX. */
function cacheKey(root: string, requested: string, realRelative: string): string {
  if (path.isAbsolute(requested)) {
    const relative = path.relative(root, requested);
    return relative.split(path.sep).join('/') || realRelative;
  }
  const normalized = path.posix.normalize(requested.replaceAll('\\', '/'));
  return normalized.replace(/^(\.\/)+/, '').replace(/\/+$/, '') || realRelative;
}
