// get_changed_artifacts: a spec's governed files (of one artifact category if asked) that changed
// since they were reconciled (NotarAI's rule: the hash cache alone), and those invalidated with the
// spec when it or a spec file it governs changed. After a sync, the live index's listing and the
// engine's kept classification answer (classify.ts classifyFiles: what moved since the last call
// is classified again); without the index, git lists the files and every one is classified.
import type { ChangedArtifactsResult } from '../../../shared/reconcile-results.ts';
import { entryKindInsideRoot } from '../../platform/confined-fs.ts';
import { filterInSlices, nextSlice, sliceDue } from '../../platform/time-slices.ts';
import { classifyFiles, type EngineParts, type FileClasses } from '../floor/classify.ts';
import { listWorktreeFileSets, type WorktreeFiles } from '../floor/git-queries.ts';
import { formatSpecError, governs, isSpecPath } from '../specs/spec-loader.ts';
import { checkSpecPath, loadValidSpec } from '../specs/spec-request.ts';

/** Most files lstat'ed to find the deleted ones among those changed (more: git lists them). */
const MAX_LSTATS = 256;

/** get_changed_artifacts; warnings come apart, for the engine to add the cache's. */
export async function changedArtifacts(
  parts: EngineParts,
  request: { spec_path: string; artifact_type?: string | undefined },
  signal?: AbortSignal,
): Promise<{ result: ChangedArtifactsResult; warnings: string[] }> {
  const specPath = await checkSpecPath(parts.root, request.spec_path);
  const spec = await loadValidSpec(parts.root, specPath);
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
  // After a sync, the live index's listing and the kept classification answer (what moved
  // since the last call classified again); else git lists and every file is classified.
  const index = parts.index;
  const sequence = index?.hasSnapshot ? await index.sync() : undefined;
  const known = index?.snapshot(sequence);
  const generation = known ? index?.generation : undefined;
  const listing = known?.listing;
  const files =
    listing ??
    (await listWorktreeFileSets(parts.root, { deleted: true, ...(signal ? { signal } : {}) }));
  // In slices, as every loop over the listing (platform/time-slices.ts).
  let governed =
    (listing && request.artifact_type === undefined ? known?.governed.get(specPath) : undefined) ??
    (await filterInSlices(files.present, matcher, signal));
  await parts.cache.create(); // as NotarAI's get_changed_artifacts does
  const reconciled = await parts.cache.readReconciled();
  const version = parts.cache.reconciledVersion; // (after the rows: see notarai-inputs.ts)
  const classification = await classifyFiles(
    parts,
    governed,
    [specPath],
    reconciled,
    version,
    listing ? known : undefined,
    generation,
    signal,
  );
  await index?.recordHashes(sequence, classification.hashes, classification.read);
  // The index lists tracked files deleted from the disk (git's own listing here leaves them
  // out): those the classification cannot count as missing (no row) are left out here.
  if (listing) governed = await withoutDeleted(parts.root, governed, files, classification, signal);
  const specFiles = await filterInSlices(governed, isSpecPath, signal);
  const artifacts = await filterInSlices(governed, (file) => !isSpecPath(file), signal);
  const invalidated =
    classification.isChanged(specPath) || specFiles.some((file) => classification.isChanged(file));
  await parts.cache.recordStats(classification.stats);
  return {
    result: {
      changed_artifacts: await filterInSlices(
        artifacts,
        (file) => classification.isChanged(file),
        signal,
      ),
      spec_invalidated: invalidated
        ? await filterInSlices(artifacts, (file) => classification.isUnchanged(file), signal)
        : [],
    },
    warnings: [...spec.warnings.map(formatSpecError), ...notes],
  };
}

/**
 * `governed` (from the live index's listing, which keeps tracked files deleted from the disk)
 * without those deleted ones `classes` counts as changed (no row; one with a row is missing, left
 * out by the caller): git's own listing with --deleted leaves them out. Found by an lstat of the
 * tracked changed files (git's test: lstat fails), or by git when they are many.
 */
async function withoutDeleted(
  root: string,
  governed: string[],
  listing: WorktreeFiles,
  classes: FileClasses,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const suspects = await filterInSlices(
    governed,
    (file) => classes.isChanged(file) && !listing.untracked.has(file),
    signal,
  );
  if (suspects.length === 0) return governed;
  let gone: ReadonlySet<string> | undefined;
  if (suspects.length <= MAX_LSTATS) {
    try {
      const found = new Set<string>();
      for (const file of suspects) {
        if (entryKindInsideRoot(root, file) === 'missing') found.add(file);
        if (sliceDue()) await nextSlice(signal);
      }
      gone = found;
    } catch {
      // A symlinked directory on the way, a directory Grove cannot open: git says.
    }
  }
  gone ??= (await listWorktreeFileSets(root, { deleted: true, ...(signal ? { signal } : {}) }))
    .deleted;
  const deleted = gone;
  return deleted.size === 0
    ? governed
    : filterInSlices(governed, (file) => !deleted.has(file), signal);
}
