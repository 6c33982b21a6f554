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
  UndoMarkResult,
} from '../../shared/reconcile-results.ts';
import path from 'node:path';
import type { ReconcileState } from '../../shared/reconcile.ts';
import type { CheckReport, DriftReport, ExportContext } from '../../shared/notarai-check.ts';
import {
  liveCheckWithParts,
  runCheckWithParts,
  type CheckOptions,
} from './notarai07/notarai-check.ts';
import { scoreSpecsWithParts, type ScoreOptions } from './notarai07/notarai-score.ts';
import {
  exportContextWithParts,
  renderContextMarkdown,
  type ExportedContexts,
} from './notarai07/notarai-export.ts';
import { writeFileAtomicInsideRoot } from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';
import { GROVE_VERSION } from '../platform/version.ts';
import { ClassificationMemo } from './floor/classification-memo.ts';
import { FileJobRunner } from './floor/file-job-runner.ts';
import type { LiveIndex } from './floor/live-index.ts';
import { classifyAgainstCache, type EngineParts } from './floor/classify.ts';
import { changedArtifacts } from './notarai05/changed-artifacts.ts';
import { markFilesReconciled, type MarkRecord } from './notarai05/mark-reconciled.ts';
import { computeReconcileState, summarizeDecisions } from './reconcile-state.ts';
import { computeSpecDiff, type SpecDiffRequest } from './notarai05/spec-diff.ts';
import type { WorkerPool } from '../platform/worker-pool.ts';
import {
  changedVsBase,
  currentBranch,
  defaultBase,
  gitDirectories,
  headSha,
  listUntracked,
  objectFormat,
  resolveBase,
  withUntracked,
} from './floor/git-queries.ts';
import { HashCache } from './floor/hash-cache.ts';
import {
  cliVersionToWrite,
  readCommittedSnapshot,
  snapshotChange,
  STATE_FILE,
  withSnapshot,
} from './floor/state-file.ts';
import { compareUtf8 } from '../platform/path-order.ts';
import {
  forEachInSlices,
  pauseAtSlices,
  pauseIfAsked,
  someInSlices,
  sortInSlices,
} from '../platform/time-slices.ts';
import { formatSpecError, governs, loadSpecs } from './specs/spec-loader.ts';

export { STATE_FILE };

/** How long background work waits for clients' calls that start while it pauses. */
export const LATER_CALLS_MAX_WAIT_MS = 1_000;
/** Longest one pause of background work (a safety valve: nothing should wait for paused work). */
export const BACKGROUND_PAUSE_MAX_MS = 10_000;

/** Grove's options of snapshot_state (ReconcileEngine.snapshotState). */
export interface SnapshotOptions {
  keepCommitted?: boolean;
  dryRun?: boolean;
}
type AffectedSpec = ListAffectedSpecsResult['affected_specs'][number];

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
  /** What the operations in classify.ts, mark-reconciled.ts and reconcile-state.ts work with. */
  readonly #parts: EngineParts;
  #gitDirs: Promise<{ gitDir: string; commonDir: string; objectFormat: string }> | undefined;
  /** Milliseconds spent in each phase of the last get_spec_diff (benchmark and diagnostics). */
  lastTimings: Record<string, number> = {};
  /** Files the last mark_reconciled read, and those the live index vouched for (diagnostics). */
  lastMark: { read: number; vouched: number } = { read: 0, vouched: 0 };
  /** The last mark_reconciled, with the rows it replaced: what undoMark restores. */
  #undoable: (MarkRecord & { id: string }) | undefined;
  #marks = 0;
  /** Clients' calls running now (every public operation but computeState), by number. */
  readonly #callsRunning = new Set<number>();
  #lastCall = 0;
  /** Told each time a call ends (whenNoCallsRunning). */
  readonly #callEndWaiters = new Set<() => void>();

  constructor(options: ReconcileEngineOptions) {
    this.root = options.root;
    this.cache = new HashCache(options.root);
    this.#files = new FileJobRunner(options.pool);
    this.#now = options.now ?? Date.now;
    this.#parts = {
      root: this.root,
      cache: this.cache,
      files: this.#files,
      now: this.#now,
      memo: new ClassificationMemo(classifyAgainstCache),
    };
  }

  /** Paths classified against the cache so far (diagnostics: an edit classifies one). */
  get classifiedPaths(): number {
    return this.#parts.memo?.classified ?? 0;
  }

  /**
   * A client came to a worktree of `governedFiles` governed files: if its calls will need the
   * pool's workers (more files than the main thread hashes), they start now, not in its first
   * call (they end after IDLE_MS unused, as ever). A process no client called starts none.
   */
  prestartWorkersFor(governedFiles: number): void {
    this.#files.prestartFor(governedFiles);
  }

  /** What the watcher vouches for between calls (reconcile-watcher.ts attaches it). */
  attachLiveIndex(index: LiveIndex): void {
    this.#parts.index = index;
  }

  close(): void {
    this.cache.close();
    this.#files.close();
  }

  /**
   * Resolves once no client's call is running; calls that start while it waits delay it by at
   * most `maxWaitMs`, the calls running when it was asked always end first (each is bounded by
   * its deadline). The window's background refresh (reconcile-watcher.ts) starts then, so it never
   * competes with a call for the event loop and the pool's workers: beside a 20,000-file
   * mark_reconciled on a loaded machine it doubled the mark's hashing time, for a state the mark's
   * own write made stale at once (docs/performance.md).
   */
  whenNoCallsRunning(maxWaitMs: number): Promise<void> {
    if (this.#callsRunning.size === 0) return Promise.resolve();
    const earlier = new Set(this.#callsRunning);
    return new Promise((resolve) => {
      let waitedEnough = false;
      const check = (): void => {
        for (const call of earlier) if (!this.#callsRunning.has(call)) earlier.delete(call);
        if (this.#callsRunning.size > 0 && !(waitedEnough && earlier.size === 0)) return;
        clearTimeout(timer);
        this.#callEndWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waitedEnough = true;
        check();
      }, maxWaitMs);
      this.#callEndWaiters.add(check);
    });
  }

  /**
   * The pause of background work: until the calls running now have ended (later ones: at most
   * LATER_CALLS_MAX_WAIT_MS more), and at most BACKGROUND_PAUSE_MAX_MS in all, a safety valve
   * should a call ever wait for the paused work.
   */
  async #callsFirst(): Promise<void> {
    if (this.#callsRunning.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.whenNoCallsRunning(LATER_CALLS_MAX_WAIT_MS),
      new Promise((resolve) => (timer = setTimeout(resolve, BACKGROUND_PAUSE_MAX_MS))),
    ]);
    clearTimeout(timer);
  }

  /** Runs a client's call, counted in #callsRunning. */
  async #call<T>(run: () => Promise<T>): Promise<T> {
    const call = ++this.#lastCall;
    this.#callsRunning.add(call);
    try {
      return await run();
    } finally {
      this.#callsRunning.delete(call);
      for (const check of [...this.#callEndWaiters]) check();
    }
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

  listAffectedSpecs(base: string, signal?: AbortSignal): Promise<ListAffectedSpecsResult> {
    return this.#call(() => this.#listAffectedSpecs(base, signal));
  }

  async #listAffectedSpecs(base: string, signal?: AbortSignal): Promise<ListAffectedSpecsResult> {
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
      // In slices, as every loop over the listing (platform/time-slices.ts).
      if (!(await someInSlices(changed.paths, (file) => governs(spec, file), signal))) continue;
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

  getSpecDiff(request: SpecDiffRequest, signal?: AbortSignal): Promise<SpecDiffResult> {
    return this.#call(() => this.#getSpecDiff(request, signal));
  }

  async #getSpecDiff(request: SpecDiffRequest, signal?: AbortSignal): Promise<SpecDiffResult> {
    const { result, warnings } = await computeSpecDiff(
      {
        ...this.#parts,
        gitDirectories: () => this.gitDirectories(),
        onTimings: (timings) => {
          this.lastTimings = timings;
        },
      },
      request,
      signal,
    );
    return this.#withWarnings(result, warnings);
  }

  // ---- get_changed_artifacts -----------------------------------------------------------------

  getChangedArtifacts(
    request: { spec_path: string; artifact_type?: string | undefined },
    signal?: AbortSignal,
  ): Promise<ChangedArtifactsResult> {
    return this.#call(() => this.#getChangedArtifacts(request, signal));
  }

  async #getChangedArtifacts(
    request: { spec_path: string; artifact_type?: string | undefined },
    signal?: AbortSignal,
  ): Promise<ChangedArtifactsResult> {
    const { result, warnings } = await changedArtifacts(this.#parts, request, signal);
    return this.#withWarnings(result, warnings);
  }

  // ---- mark_reconciled -----------------------------------------------------------------------

  /**
   * mark_reconciled. The rows it replaced are kept (the last mark only) under the `mark_id` it
   * returns, for undoMark.
   */
  markReconciled(files: readonly string[], signal?: AbortSignal): Promise<MarkReconciledResult> {
    const report = (counts: { read: number; vouched: number }) => (this.lastMark = counts);
    // Unique in this process, which alone keeps the mark (node:crypto stays unloaded at rest).
    const id = `mark-${++this.#marks}-${Date.now().toString(36)}`;
    const keep = (record: MarkRecord): void => {
      this.#undoable = { id, ...record };
    };
    return this.#call(() =>
      markFilesReconciled(this.#parts, files, signal, report, keep).then((result) =>
        this.#withWarnings({ ...result, mark_id: id }),
      ),
    );
  }

  /**
   * Undoes the last mark (`markId`, as mark_reconciled returned it): the cache rows it replaced
   * come back, the rows it added go. Refused (nothing written) for any other mark, after a
   * clear_cache, or when a row was written again since.
   */
  undoMark(markId: string, signal?: AbortSignal): Promise<UndoMarkResult> {
    return this.#call(async () => {
      const last = this.#undoable;
      if (!last || last.id !== markId) {
        throw new UserError(
          last
            ? 'another mark came after this one: only the last mark can be undone'
            : 'there is no mark to undo here (undone already, the cache cleared, or the server ' +
                'restarted since)',
        );
      }
      const result = await this.cache.restoreReconciled(
        last.written,
        last.updatedAt,
        last.replaced,
        signal,
      );
      if (this.#undoable === last) this.#undoable = undefined;
      return result;
    });
  }

  // ---- clear_cache / snapshot_state ----------------------------------------------------------

  clearCache(): Promise<{ cleared: boolean }> {
    this.#undoable = undefined;
    return this.#call(async () => ({ cleared: await this.cache.clear() }));
  }

  /**
   * NotarAI's snapshot_state: the cache's rows become the state file. Grove's options: `keepCommitted`
   * also keeps the state file's fingerprints of files the cache has no row for (a fresh clone's
   * empty cache then loses nothing that was committed), `dryRun` says what would be written
   * without writing (nor creating the cache).
   */
  snapshotState(options: SnapshotOptions = {}): Promise<SnapshotStateResult> {
    return this.#call(() => this.#snapshotState(options));
  }

  async #snapshotState(options: SnapshotOptions): Promise<SnapshotStateResult> {
    const groveOptions = options.keepCommitted !== undefined || options.dryRun !== undefined;
    // NotarAI snapshots through open_cache_db, which creates it; a dry run creates nothing.
    if (!options.dryRun) await this.cache.create();
    const cacheRows = await this.cache.readReconciled();
    // Read always: the cli_version written is never lower than the one committed.
    const committed = (await readCommittedSnapshot(this.root)).snapshot;
    const rows = options.keepCommitted ? withSnapshot(cacheRows, committed) : cacheRows;
    const [gitHash, branch] = await Promise.all([headSha(this.root), currentBranch(this.root)]);
    const fileFingerprints: Record<string, { blake3: string }> = {};
    const specFingerprints: Record<string, string> = {};
    // NotarAI's BTreeMaps: keys in UTF-8 byte order.
    // The rows as of now, taken in one pass (a mark writing meanwhile changes the map the cache
    // shares: a state file must not hold part of it), then sorted and written out in slices.
    const entries = [...rows];
    const sorted = await sortInSlices(entries, ([a], [b]) => compareUtf8(a, b));
    await forEachInSlices(sorted, ([file, row]) => {
      if (file.endsWith('.spec.yaml')) specFingerprints[file] = row.hash;
      else fileFingerprints[file] = { blake3: row.hash };
    });
    // NotarAI's ReconciliationState, field for field: git_hash and branch are null when HEAD names
    // no commit or no branch (detached); the tool's own answer says "" for a missing hash.
    const state = {
      schema_version: '1',
      cli_version: cliVersionToWrite(committed?.cliVersion, GROVE_VERSION),
      last_reconciliation: {
        timestamp: `${Math.floor(this.#now() / 1000)}Z`,
        git_hash: gitHash,
        branch,
      },
      file_fingerprints: fileFingerprints,
      spec_fingerprints: specFingerprints,
    };
    // Never through a symlink: a committed link at the state file's path is an error naming it.
    const statePath = options.dryRun
      ? path.join(this.root, ...STATE_FILE.split('/'))
      : await writeFileAtomicInsideRoot(
          this.root,
          STATE_FILE,
          `${JSON.stringify(state, null, 2)}\n`,
        );
    const result: SnapshotStateResult = {
      files: Object.keys(fileFingerprints).length,
      specs: Object.keys(specFingerprints).length,
      git_hash: gitHash ?? '',
      state_path: statePath,
    };
    if (!groveOptions) return result;
    return {
      ...result,
      written: !options.dryRun,
      cache_fingerprints: cacheRows.size,
      committed_fingerprints: committed ? committed.rows.size : null,
      kept_committed: rows.size - cacheRows.size,
      cli_version: state.cli_version,
      change: snapshotChange(committed, {
        cliVersion: state.cli_version,
        timestamp: state.last_reconciliation.timestamp,
        gitHash,
        branch,
        rows,
      }),
    };
  }

  // ---- the UI's state ------------------------------------------------------------------------

  /**
   * Computes the ReconcileState against `base` (errors about the base go in `baseError`), with
   * NotarAI 0.7's check summary, coverage and drift scores (from the same scan, via the live index).
   */
  async computeState(base: string, caller?: AbortSignal): Promise<ReconcileState> {
    // Background work: at each slice and before each pool job it steps aside while clients' calls
    // run (a recomputation started just before a mark took half the mark's workers and turns).
    const signal = caller ? AbortSignal.any([caller]) : new AbortController().signal;
    pauseAtSlices(signal, () => this.#callsFirst());
    await pauseIfAsked(signal);
    const computed = await computeReconcileState(this.#parts, base, signal);
    const state = { ...computed, decisions: await summarizeDecisions(this.root) };
    try {
      const live = await liveCheckWithParts(this.#parts, signal);
      const bySpec = new Map(live.drift.specs.map((spec) => [spec.spec_path, spec]));
      return {
        ...state,
        check: live.check,
        drift: live.drift,
        specs: state.specs.map((spec) => {
          const drift = bySpec.get(spec.path);
          return { ...spec, drift: drift ? { score: drift.score, status: drift.status } : null };
        }),
      };
    } catch (error) {
      if (signal?.aborted) throw error;
      const message = error instanceof Error ? error.message : String(error);
      return { ...state, warnings: [...state.warnings, `check failed: ${message}`] };
    }
  }

  // ---- NotarAI 0.7: check, score, export-context ----------------------------------------------

  /** `notarai check` (notarai-check.ts), answered from the live index when it vouches. */
  check(options: CheckOptions, signal?: AbortSignal): Promise<CheckReport> {
    return this.#call(() =>
      runCheckWithParts(this.#parts, { ...options, ...(signal ? { signal } : {}) }),
    );
  }

  /** `notarai score` (notarai-check.ts). */
  driftScore(options: ScoreOptions, signal?: AbortSignal): Promise<DriftReport> {
    return this.#call(() =>
      scoreSpecsWithParts(this.#parts, { ...options, ...(signal ? { signal } : {}) }),
    );
  }

  /** `notarai export-context` (notarai-export.ts). */
  exportContext(
    options: { baseBranch: string; specPath?: string },
    signal?: AbortSignal,
  ): Promise<ExportedContexts> {
    return this.#call(() =>
      exportContextWithParts(this.#parts, {
        ...options,
        objectsDir: async () => path.join((await this.gitDirectories()).commonDir, 'objects'),
        ...(signal ? { signal } : {}),
      }),
    );
  }

  /** NotarAI's reconcile-prompt markdown of contexts (notarai-export.ts). */
  renderContextMarkdown(contexts: readonly ExportContext[]): string {
    return renderContextMarkdown(contexts);
  }

  // ---- internals -----------------------------------------------------------------------------

  #withWarnings<T extends object>(
    result: T,
    more: readonly string[] = [],
  ): T & { warnings?: string[] } {
    const warnings = [...this.cache.takeWarnings(), ...more];
    return warnings.length > 0 ? { ...result, warnings } : result;
  }
}
