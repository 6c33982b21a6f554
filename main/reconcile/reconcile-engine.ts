// The reconciliation engine of one worktree: NotarAI's six operations (list_affected_specs,
// get_spec_diff, get_changed_artifacts, mark_reconciled, clear_cache, snapshot_state) and the
// ReconcileState the UI shows. Built once per worktree process and shared by every MCP session.
// Scale: git is asked once for the worktree's files and once for the paths changed vs the base;
// glob matching and the intersection with the governed set happen in-process; the diff is
// computed for that intersection only (intersection-diff.ts); files are hashed only when a cache
// row exists to compare with, and the stat fast path (hash-cache.ts) skips unchanged files.
import type {
  ChangedArtifactsResult,
  ListAffectedSpecsResult,
  MarkReconciledResult,
  SnapshotStateResult,
  SpecDiffResult,
} from '../../shared/reconcile-results.ts';
import path from 'node:path';
import type { ReconcileState, SpecReconcileState } from '../../shared/reconcile.ts';
import { RECONCILE_PATHS_CAP } from '../../shared/reconcile.ts';
import {
  isGitName,
  MAX_PATH_LENGTH,
  resolveInsideRoot,
  writeFileAtomicInsideRoot,
} from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';
import { GROVE_VERSION } from '../platform/version.ts';
import { hasNulByte, isBinaryByExtension } from './binary-files.ts';
import { FILE_CONCURRENCY, mapLimit } from './concurrency.ts';
import { FileJobRunner } from './file-job-runner.ts';
import type { WorkerPool } from '../platform/worker-pool.ts';
import { HASHED, HIT, KNOWN_STRIDE, MISSING } from './file-jobs.ts';
import {
  changedVsBase,
  currentBranch,
  defaultBase,
  gitDirectories,
  headSha,
  listUntracked,
  listWorktreeFileSets,
  objectFormat,
  resolveBase,
  withUntracked,
} from './git-queries.ts';
import type { ChangedEntry, ChangedVsBase } from './git-queries.ts';
import { compileExcludePatterns } from './exclude-patterns.ts';
import { HashCache } from './hash-cache.ts';
import type { ReconciledRow, StatRow } from './hash-cache.ts';
import { readCommittedSnapshot, STATE_FILE, withSnapshot } from './state-file.ts';
import { diffPathsAgainstBase } from './intersection-diff.ts';
import { compareUtf8, sortedUtf8 } from '../platform/path-order.ts';
import {
  categoryOf,
  formatSpecError,
  governs,
  isSpecPath,
  loadSpec,
  loadSpecs,
  NOTARAI_DIR,
} from './spec-loader.ts';
import type { SpecSet, ValidSpec } from './spec-loader.ts';
import { readSpecText } from './spec-paths.ts';

export { STATE_FILE };
type AffectedSpec = ListAffectedSpecsResult['affected_specs'][number];

export interface SpecDiffRequest {
  spec_path: string;
  base_branch: string;
  exclude_patterns?: string[] | undefined;
  bypass_cache?: boolean | undefined;
}

/** Which files match the cache: the answer of one classification pass. */
interface Classification {
  changed: Set<string>;
  unchanged: Set<string>;
  /** Had a cache row, but is no longer a readable file (deleted meanwhile). */
  missing: Set<string>;
  stats: StatRow[];
}

export interface ReconcileEngineOptions {
  /** Real path of the worktree root. */
  root: string;
  /** Wall clock in ms (tests). */
  now?: () => number;
  /** Worker threads for stat and hashing (default: the process-wide pool). */
  pool?: WorkerPool;
}

export class ReconcileEngine {
  readonly root: string;
  readonly cache: HashCache;
  readonly #files: FileJobRunner;
  readonly #now: () => number;
  #gitDirs: Promise<{ gitDir: string; commonDir: string; objectFormat: string }> | undefined;
  /** Milliseconds spent in each phase of the last get_spec_diff (benchmark and diagnostics). */
  lastTimings: Record<string, number> = {};

  constructor(options: ReconcileEngineOptions) {
    this.root = options.root;
    this.cache = new HashCache(options.root);
    this.#files = new FileJobRunner(options.pool);
    this.#now = options.now ?? Date.now;
  }

  close(): void {
    this.cache.close();
    this.#files.close();
  }

  /** The repository's default base: origin/HEAD, else main, else master, else the current branch. */
  defaultBase(): Promise<string> {
    return defaultBase(this.root);
  }

  /** Absolute git directory, common directory and object format (cached). */
  gitDirectories(): Promise<{ gitDir: string; commonDir: string; objectFormat: string }> {
    this.#gitDirs ??= (async () => {
      const dirs = await gitDirectories(this.root);
      return { ...dirs, objectFormat: await objectFormat(this.root) };
    })();
    this.#gitDirs.catch(() => {
      this.#gitDirs = undefined;
    });
    return this.#gitDirs;
  }

  // ---- list_affected_specs -------------------------------------------------------------------

  async listAffectedSpecs(base: string, signal?: AbortSignal): Promise<ListAffectedSpecsResult> {
    const sha = await resolveBase(this.root, base);
    // Two git processes at once: the tracked changes and the untracked files.
    const [tracked, untracked, specs] = await Promise.all([
      changedVsBase(this.root, sha, signal),
      listUntracked(this.root, signal),
      loadSpecs(this.root),
    ]);
    const changed = withUntracked(tracked, untracked);
    const affected_specs: AffectedSpec[] = [];
    for (const spec of specs.valid) {
      if (!changed.paths.some((file) => governs(spec, file))) continue;
      affected_specs.push({
        spec_path: spec.path,
        behaviors: spec.spec.behaviors ?? null,
        constraints: spec.spec.constraints ?? null,
        invariants: spec.spec.invariants ?? null,
      });
    }
    return this.#withWarnings(
      { changed_files: changed.paths, affected_specs, spec_errors: specs.errors },
      specs.warnings.map(formatSpecError),
    );
  }

  // ---- get_spec_diff -------------------------------------------------------------------------

  async getSpecDiff(request: SpecDiffRequest, signal?: AbortSignal): Promise<SpecDiffResult> {
    const lap = lapTimer((timings) => (this.lastTimings = timings));
    const specPath = await this.#checkSpecPath(request.spec_path);
    const spec = await this.#loadValidSpec(specPath);
    const sha = await resolveBase(this.root, request.base_branch);
    lap('spec+base');
    const bypass = request.bypass_cache === true;
    const excludePatterns = request.exclude_patterns ?? [];
    // git works out the changed set while the files are listed and checked against the cache.
    const trackedPromise = changedVsBase(this.root, sha, signal);
    trackedPromise.catch(() => undefined);
    const [files, specs] = await Promise.all([
      listWorktreeFileSets(this.root, signal ? { signal } : {}),
      loadSpecs(this.root),
    ]);
    lap('ls-files+specs');
    const governedListed = files.present.filter((file) => governs(spec, file));
    lap('globs');
    // NotarAI opens (so creates) its cache here unless the cache is bypassed or the spec governs
    // no file at all.
    if (!bypass && governedListed.length > 0) await this.cache.create();
    const reconciled: ReadonlyMap<string, ReconciledRow> = bypass
      ? new Map()
      : await this.cache.readReconciled();
    const classification = await this.#classify([...governedListed, specPath], reconciled, signal);
    lap('cache+classify');
    const changed = withUntracked(await trackedPromise, files.untracked);
    lap('changed-vs-base (wait)');
    // One pass over the governed files (200,000 of them in the benchmark).
    const filesOut: string[] = [];
    let skipped: string[] = [];
    const changedSpecs: string[] = [];
    for (const file of governedListed) {
      if (changed.gone.has(file) || classification.missing.has(file)) continue;
      const differs = classification.changed.has(file);
      if (isSpecPath(file)) {
        if (differs) changedSpecs.push(file);
      } else if (differs) {
        filesOut.push(file);
      } else if (classification.unchanged.has(file)) {
        skipped.push(file);
      }
    }
    const primaryChanged = !bypass && classification.changed.has(specPath);
    let specInvalidated: string[] = [];
    if (primaryChanged || changedSpecs.length > 0) {
      specInvalidated = skipped;
      skipped = [];
    }

    // The diff: files whose content differs from the cache AND from the base (untracked ones as
    // new files), plus governed paths deleted since the base (Grove: NotarAI's `git diff <base> --
    // <files>` shows neither); minus exclude_patterns, minus binaries. As in NotarAI, every file
    // of `files` with a binary extension is in binary_changes, whether or not it differs from the
    // base or is excluded; other binaries are found among the files diffed (a NUL byte, or git's
    // "Binary files ... differ").
    const changedSet = new Set(changed.paths);
    const deleted = [...changed.gone]
      .filter((file) => !isSpecPath(file) && governs(spec, file))
      .sort(compareUtf8);
    const excludes = compileExcludePatterns(excludePatterns);
    const binaryChanges: string[] = filesOut.filter((file) => isBinaryByExtension(file));
    const candidates = filesOut.filter(
      (file) => changedSet.has(file) && !isBinaryByExtension(file) && !excludes.test(file),
    );
    const textPaths: string[] = [];
    const sniffed = await mapLimit(
      candidates,
      FILE_CONCURRENCY,
      async (file) => hasNulByte(this.root, file),
      signal,
    );
    candidates.forEach((file, index) => (sniffed[index] ? binaryChanges : textPaths).push(file));
    for (const file of deleted) {
      if (excludes.test(file)) continue;
      (isBinaryByExtension(file) ? binaryChanges : textPaths).push(file);
    }
    lap('intersect+sniff');
    const dirs = await this.gitDirectories();
    const rawDiff = await diffPathsAgainstBase(this.root, sha, {
      paths: textPaths,
      deleted: new Set(deleted),
      objectsDir: path.join(dirs.commonDir, 'objects'),
      ...(signal ? { signal } : {}),
    });
    // Without git's final newline, as NotarAI returns it (it joins git's lines with "\n").
    const diff = withoutFinalNewline(stripBinaryNotices(rawDiff, binaryChanges));
    lap('diff');

    // Spec text through the confined layer: a spec that leads outside the worktree, or is a FIFO,
    // a device or oversized, gives empty content and a warning naming it, never its bytes.
    const unreadable: string[] = [];
    const specText = async (file: string): Promise<string> =>
      readSpecText(this.root, file).catch((error: unknown) => {
        unreadable.push(`cannot read spec ${file}: ${(error as Error).message}`);
        return '';
      });
    const spec_changes = await Promise.all(
      changedSpecs.map(async (file) => ({ path: file, content: await specText(file) })),
    );
    let system_spec: SpecDiffResult['system_spec'] = null;
    if (spec_changes.length > 0 && specs.systemSpec) {
      const systemPath = specs.systemSpec;
      system_spec = changedSpecs.includes(systemPath)
        ? { path: systemPath }
        : { path: systemPath, content: await specText(systemPath) };
    }
    const file_categories: Record<string, string> = {};
    for (const file of filesOut) {
      const category = categoryOf(spec, file);
      if (category !== null) file_categories[file] = category;
    }
    await this.cache.recordStats(classification.stats);
    lap('specs+record');
    return this.#withWarnings(
      {
        diff,
        files: filesOut,
        skipped,
        excluded: excludePatterns,
        spec_changes,
        system_spec,
        binary_changes: sortedUtf8(new Set(binaryChanges)),
        file_categories,
        spec_invalidated: specInvalidated,
        deleted_files: deleted,
      },
      [...spec.warnings.map(formatSpecError), ...unreadable],
    );
  }

  // ---- get_changed_artifacts -----------------------------------------------------------------

  async getChangedArtifacts(
    request: { spec_path: string; artifact_type?: string | undefined },
    signal?: AbortSignal,
  ): Promise<ChangedArtifactsResult> {
    const specPath = await this.#checkSpecPath(request.spec_path);
    const spec = await this.#loadValidSpec(specPath);
    let matcher = (file: string): boolean => governs(spec, file);
    const notes: string[] = [];
    if (request.artifact_type !== undefined) {
      const globs = spec.categories.get(request.artifact_type);
      // As in NotarAI, a category the spec does not declare governs no files: an empty answer,
      // not an error (with a warning naming the categories it has).
      matcher = globs ? (file) => globs.test(file) : () => false;
      if (!globs) {
        const known = [...spec.categories.keys()].join(', ') || '(none)';
        notes.push(
          `spec ${specPath} has no artifact category ${JSON.stringify(request.artifact_type)}, ` +
            `so nothing is listed; its categories: ${known}`,
        );
      }
    }
    const files = await listWorktreeFileSets(this.root, {
      deleted: true,
      ...(signal ? { signal } : {}),
    });
    const governed = files.present.filter(matcher);
    await this.cache.create(); // as NotarAI's get_changed_artifacts does
    const specFiles = governed.filter(isSpecPath);
    const artifacts = governed.filter((file) => !isSpecPath(file));
    const reconciled = await this.cache.readReconciled();
    const classification = await this.#classify(
      [...artifacts, ...specFiles, specPath],
      reconciled,
      signal,
    );
    const invalidated =
      classification.changed.has(specPath) ||
      specFiles.some((file) => classification.changed.has(file));
    await this.cache.recordStats(classification.stats);
    return this.#withWarnings(
      {
        changed_artifacts: artifacts.filter((file) => classification.changed.has(file)),
        spec_invalidated: invalidated
          ? artifacts.filter((file) => classification.unchanged.has(file))
          : [],
      },
      [...spec.warnings.map(formatSpecError), ...notes],
    );
  }

  // ---- mark_reconciled -----------------------------------------------------------------------

  async markReconciled(
    files: readonly string[],
    signal?: AbortSignal,
  ): Promise<MarkReconciledResult> {
    const rejections: { index: number; path: string; reason: string }[] = [];
    const order = new Map<string, number>();
    files.forEach((file, index) => {
      if (!order.has(file)) order.set(file, index);
    });
    const reject = (file: string, reason: string): void => {
      rejections.push({ index: order.get(file) ?? 0, path: file, reason });
    };
    // Plain relative paths go straight to the file workers, which check them with the sandbox's
    // own predicates; anything else (absolute, `..`, odd characters) and anything the workers
    // cannot prove to be inside goes through resolveInsideRoot, which also words the refusal.
    const direct: { requested: string; relative: string }[] = [];
    const viaSandbox: string[] = [];
    for (const requested of files) {
      const relative = simpleRelative(requested);
      if (relative === null) viaSandbox.push(requested);
      else direct.push({ requested, relative });
    }
    const outcomes = await this.#files.hashConfined(
      this.root,
      direct.map((entry) => entry.relative),
      signal,
    );
    const rows = new Map<string, StatRow>();
    direct.forEach((entry, index) => {
      const outcome = outcomes[index];
      switch (outcome?.code) {
        case 'hashed':
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
    });
    for (const requested of viaSandbox) {
      let resolved;
      try {
        resolved = await resolveInsideRoot(this.root, requested);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        // A path inside the worktree that does not exist is skipped, as NotarAI does.
        if (!(error instanceof UserError && reason.startsWith('no such file or directory'))) {
          reject(requested, reason);
        }
        continue;
      }
      const [outcome] = await this.#files.hashConfined(this.root, [resolved.relativePath], signal);
      const key = cacheKey(this.root, requested, resolved.relativePath);
      if (outcome?.code === 'hashed') {
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
    const updated = await this.cache.writeReconciled(
      hashed.map((row) => ({ path: row.path, hash: row.hash })),
      hashed,
      Math.floor(this.#now() / 1000),
    );
    const rejected = rejections
      .sort((a, b) => a.index - b.index)
      .map(({ path: file, reason }) => ({ path: file, reason }));
    return this.#withWarnings({ updated, rejected });
  }

  // ---- clear_cache / snapshot_state ----------------------------------------------------------

  async clearCache(): Promise<{ cleared: boolean }> {
    return { cleared: await this.cache.clear() };
  }

  async snapshotState(): Promise<SnapshotStateResult> {
    await this.cache.create(); // NotarAI snapshots through open_cache_db, which creates it
    const rows = await this.cache.readReconciled();
    const [gitHash, branch] = await Promise.all([headSha(this.root), currentBranch(this.root)]);
    const fileFingerprints: Record<string, { blake3: string }> = {};
    const specFingerprints: Record<string, string> = {};
    // NotarAI's BTreeMaps: keys in UTF-8 byte order.
    for (const file of sortedUtf8(rows.keys())) {
      const row = rows.get(file) as ReconciledRow;
      if (file.endsWith('.spec.yaml')) specFingerprints[file] = row.hash;
      else fileFingerprints[file] = { blake3: row.hash };
    }
    // NotarAI's ReconciliationState, field for field: git_hash and branch are null when HEAD names
    // no commit or no branch (detached); the tool's own answer says "" for a missing hash.
    const state = {
      schema_version: '1',
      cli_version: GROVE_VERSION,
      last_reconciliation: {
        timestamp: `${Math.floor(this.#now() / 1000)}Z`,
        git_hash: gitHash,
        branch,
      },
      file_fingerprints: fileFingerprints,
      spec_fingerprints: specFingerprints,
    };
    // Never through a symlink: a committed link at the state file's path is an error naming it.
    const statePath = await writeFileAtomicInsideRoot(
      this.root,
      STATE_FILE,
      `${JSON.stringify(state, null, 2)}\n`,
    );
    return {
      files: Object.keys(fileFingerprints).length,
      specs: Object.keys(specFingerprints).length,
      git_hash: gitHash ?? '',
      state_path: statePath,
    };
  }

  // ---- the UI's state ------------------------------------------------------------------------

  /** Computes the ReconcileState against `base` (errors about the base go in `baseError`). */
  async computeState(base: string, signal?: AbortSignal): Promise<ReconcileState> {
    const started = performance.now();
    let baseError: string | null = null;
    let trackedPromise: Promise<ChangedEntry[] | null>;
    try {
      const sha = await resolveBase(this.root, base);
      trackedPromise = changedVsBase(this.root, sha, signal);
    } catch (error) {
      baseError = error instanceof Error ? error.message : String(error);
      trackedPromise = Promise.resolve(null);
    }
    trackedPromise.catch(() => undefined);
    const [files, specs] = await Promise.all([
      listWorktreeFileSets(this.root, signal ? { signal } : {}),
      loadSpecs(this.root),
    ]);
    const listed = new Set<string>();
    for (const spec of specs.valid) {
      for (const file of files.present) if (governs(spec, file)) listed.add(file);
    }
    // The window's view: what the hash cache says was reconciled, and, for what it has no row
    // for, the committed snapshot (a fresh clone has only that).
    const committed = await readCommittedSnapshot(this.root);
    const cacheRows = await this.cache.readReconciled();
    const reconciled = withSnapshot(cacheRows, committed.snapshot);
    const classification = await this.#classify(
      [...listed, ...specs.valid.map((spec) => spec.path)],
      reconciled,
      signal,
    );
    let changed: ChangedVsBase | null = null;
    try {
      const tracked = await trackedPromise;
      if (tracked) changed = withUntracked(tracked, files.untracked);
    } catch (error) {
      baseError = error instanceof Error ? error.message : String(error);
    }
    const gone = changed?.gone ?? new Set<string>();
    const governedBySpec = new Map<string, string[]>();
    const governedUnion = new Set<string>();
    for (const spec of specs.valid) {
      const governed = [...listed].filter(
        (file) => governs(spec, file) && !gone.has(file) && !classification.missing.has(file),
      );
      governed.sort(compareUtf8);
      governedBySpec.set(spec.path, governed);
      for (const file of governed) governedUnion.add(file);
    }
    await this.cache.recordStats(classification.stats);
    const states = specs.valid.map((spec) =>
      specState(
        spec,
        specs,
        governedBySpec.get(spec.path) ?? [],
        classification,
        reconciled,
        cacheRows,
        changed,
      ),
    );
    const governedTotal = [...governedUnion];
    return {
      base,
      baseError,
      computedAt: this.#now(),
      durationMs: Math.max(0, performance.now() - started),
      systemSpec: specs.systemSpec,
      snapshot: committed.snapshot
        ? {
            at: committed.snapshot.at,
            gitHash: committed.snapshot.gitHash,
            branch: committed.snapshot.branch,
          }
        : null,
      specs: states,
      totals: {
        specs: specs.valid.length,
        invalidSpecs: specs.all.length - specs.valid.length,
        affectedSpecs: states.filter((state) => state.affected).length,
        specsNeedingReconciliation: states.filter((state) => state.changedSinceReconciled > 0)
          .length,
        governedFiles: governedTotal.length,
        changedSinceReconciled: governedTotal.filter((file) => classification.changed.has(file))
          .length,
        changedVsBase: changed?.paths.length ?? 0,
      },
      specErrors: specs.errors,
      warnings: [
        ...this.cache.takeWarnings(),
        ...specs.warnings.map(formatSpecError),
        ...(committed.warning ? [committed.warning] : []),
      ],
    };
  }

  // ---- internals -----------------------------------------------------------------------------

  /**
   * Which of `paths` match their cache row. A path without a row is changed (nothing is read);
   * one with a row is compared by hash, the hash coming from the stat fast path when valid.
   */
  async #classify(
    paths: readonly string[],
    reconciled: ReadonlyMap<string, ReconciledRow>,
    signal?: AbortSignal,
  ): Promise<Classification> {
    const result: Classification = {
      changed: new Set(),
      unchanged: new Set(),
      missing: new Set(),
      stats: [],
    };
    const toCheck: string[] = [];
    for (const file of new Set(paths)) {
      if (reconciled.has(file)) toCheck.push(file);
      else result.changed.add(file);
    }
    if (toCheck.length === 0) return result;
    const statRows = await this.cache.readStats();
    const known = new Float64Array(toCheck.length * KNOWN_STRIDE).fill(Number.NaN);
    const rowHashes: (string | undefined)[] = new Array<string | undefined>(toCheck.length);
    toCheck.forEach((file, index) => {
      const row = statRows.get(file);
      if (!row) return;
      const base = index * KNOWN_STRIDE;
      known[base] = row.size;
      known[base + 1] = row.mtimeMs;
      known[base + 2] = row.ino;
      known[base + 3] = row.recordedMs;
      rowHashes[index] = row.hash;
    });
    const { codes, hashed } = await this.#files.fingerprint(this.root, toCheck, known, signal);
    const fresh = new Map<number, string>();
    for (const entry of hashed) {
      const file = toCheck[entry.index] as string;
      fresh.set(entry.index, entry.hash);
      result.stats.push({
        path: file,
        size: entry.size,
        mtimeMs: entry.mtimeMs,
        ino: entry.ino,
        hash: entry.hash,
        recordedMs: entry.recordedMs,
      });
    }
    toCheck.forEach((file, index) => {
      const code = codes[index];
      if (code === MISSING) {
        result.missing.add(file);
        return;
      }
      const hash = code === HIT ? rowHashes[index] : code === HASHED ? fresh.get(index) : undefined;
      const matches = hash !== undefined && hash === reconciled.get(file)?.hash;
      (matches ? result.unchanged : result.changed).add(file);
    });
    return result;
  }

  /** Checks `spec_path`: inside the worktree, an existing `*.spec.yaml` under `.notarai/`. */
  async #checkSpecPath(requested: string): Promise<string> {
    let relative: string;
    try {
      relative = (await resolveInsideRoot(this.root, requested)).relativePath;
    } catch (error) {
      if (error instanceof UserError && error.message.startsWith('no such file or directory')) {
        throw new UserError(
          `spec not found: ${JSON.stringify(requested)}; list the specs with list_affected_specs ` +
            `or look under ${NOTARAI_DIR}/`,
        );
      }
      throw error;
    }
    if (!isSpecPath(relative)) {
      throw new UserError(
        `spec_path must name a *.spec.yaml file under ${NOTARAI_DIR}/ (got ${JSON.stringify(requested)})`,
      );
    }
    return relative;
  }

  async #loadValidSpec(relative: string): Promise<ValidSpec> {
    const loaded = await loadSpec(this.root, relative);
    if (!loaded.ok) {
      const problems = loaded.errors
        .map(
          (error) =>
            `  ${error.file}${error.line === null ? '' : `:${error.line}`}: ${error.message}`,
        )
        .join('\n');
      throw new UserError(`spec ${relative} is invalid:\n${problems}`);
    }
    return loaded;
  }

  #withWarnings<T extends object>(
    result: T,
    more: readonly string[] = [],
  ): T & { warnings?: string[] } {
    const warnings = [...this.cache.takeWarnings(), ...more];
    return warnings.length > 0 ? { ...result, warnings } : result;
  }
}

/** Calls `done` with the time since the previous lap (or the start) under each name. */
function lapTimer(done: (timings: Record<string, number>) => void): (name: string) => void {
  const timings: Record<string, number> = {};
  let last = performance.now();
  return (name) => {
    const now = performance.now();
    timings[name] = (timings[name] ?? 0) + (now - last);
    last = now;
    done(timings);
  };
}

const DIRECTORY_REFUSAL = 'is a directory: mark the files in it instead (get_spec_diff lists them)';

/**
 * `requested` as a plain POSIX path relative to the root (`./a` -> `a`), or null when it needs
 * the sandbox's full check: absolute, `..`, empty segments, backslashes, NUL, `.git`, too long.
 */
function simpleRelative(requested: string): string | null {
  if (requested.length === 0 || requested.length > MAX_PATH_LENGTH) return null;
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

/** `text` without one final "\n" (git ends a diff with one; NotarAI's text does not). */
function withoutFinalNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** Drops git's "Binary files a/x and b/x differ" lines, adding those paths to `binaries`. */
function stripBinaryNotices(diff: string, binaries: string[]): string {
  if (!diff.includes('Binary files ')) return diff;
  const kept: string[] = [];
  for (const line of diff.split('\n')) {
    const match = /^Binary files (?:a\/(.*)|\/dev\/null) and (?:b\/(.*)|\/dev\/null) differ$/.exec(
      line,
    );
    if (match) {
      const file = match[2] ?? match[1];
      if (file !== undefined) binaries.push(file);
      continue;
    }
    kept.push(line);
  }
  return kept.join('\n');
}

/** A `$ref` (relative to the spec file) as a POSIX path relative to the worktree root. */
function resolveSpecRef(specPath: string, ref: string): string {
  return path.posix.normalize(path.posix.join(path.posix.dirname(specPath), ref));
}

function firstLine(intent: string): string {
  const line =
    intent
      .split('\n')
      .find((text) => text.trim() !== '')
      ?.trim() ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

function specState(
  spec: ValidSpec,
  specs: SpecSet,
  governed: readonly string[],
  classification: Classification,
  reconciled: ReadonlyMap<string, ReconciledRow>,
  cacheRows: ReadonlyMap<string, ReconciledRow>,
  changed: ChangedVsBase | null,
): SpecReconcileState {
  const changedFiles = governed
    .filter((file) => classification.changed.has(file))
    .sort(compareUtf8);
  const affected = changed ? changed.paths.filter((file) => governs(spec, file)) : [];
  // A spec was reconciled when its own file was marked (the reconcile prompt marks the spec with
  // the files reviewed): another spec marking a shared file does not make this one reconciled.
  const own = reconciled.get(spec.path);
  const last = own ? own.updatedAt * 1000 : null;
  const reconciledBy = own ? (cacheRows.has(spec.path) ? 'cache' : 'snapshot') : null;
  const specInvalidated =
    classification.changed.has(spec.path) ||
    governed.some((file) => isSpecPath(file) && classification.changed.has(file));
  return {
    path: spec.path,
    title: firstLine(spec.spec.intent),
    intent: spec.spec.intent,
    behaviors: (spec.spec.behaviors ?? []).map(({ name, given, then }) => ({ name, given, then })),
    constraints: spec.spec.constraints ?? [],
    invariants: spec.spec.invariants ?? [],
    subsystems: (spec.spec.subsystems ?? []).map((ref) => resolveSpecRef(spec.path, ref.$ref)),
    tier: spec.spec.tier ?? 'full',
    isSystemSpec: specs.systemSpec === spec.path,
    governedFiles: governed.length,
    changedSinceReconciled: changedFiles.length,
    changedSinceReconciledPaths: changedFiles.slice(0, RECONCILE_PATHS_CAP),
    specInvalidated,
    affected: affected.length > 0,
    affectedFiles: affected.length,
    affectedPaths: affected.slice(0, RECONCILE_PATHS_CAP),
    lastReconciledAt: last,
    reconciledBy,
  };
}
