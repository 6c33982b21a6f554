// How much of each folder the specs govern, for the window's Coverage tab (LiveCheck.coverage):
// every listed file but internal and excluded ones, counted in each folder above it. In a worktree
// process it is kept with the inputs' layout and brought up to date for the files the live index
// added to or removed from the listing (classification-memo.ts keepAlongListing), not counted again.
import type { CoverageFolder, LiveCheck } from '../../../shared/notarai-check.ts';
import { COVERAGE_FOLDERS_CAP } from '../../../shared/notarai-check-constants.ts';
import { compareUtf8 } from '../../platform/path-order.ts';
import { forEachInSlices } from '../../platform/time-slices.ts';
import type { EngineParts } from '../floor/classify.ts';
import { isInternal, type NotaraiInputs } from './notarai-inputs.ts';

/** Every folder's counts (entries never changed once a coverage was made from them). */
interface FolderCounts {
  folders: Map<string, CoverageFolder>;
  files: number;
  governed: number;
  coverage: LiveCheck['coverage'];
}

/** How much of each folder the specs govern (excluded and internal files left out). */
export async function coverageByFolder(
  inputs: NotaraiInputs,
  signal?: AbortSignal,
  parts?: EngineParts,
): Promise<LiveCheck['coverage']> {
  const counted = (file: string) => !isInternal(file) && !inputs.exclude.test(file);
  const compute = async (): Promise<FolderCounts> => {
    const counts = { folders: new Map<string, CoverageFolder>(), files: 0, governed: 0 };
    await forEachInSlices(
      inputs.listing.present,
      (file) => {
        if (counted(file)) count(counts, file, inputs.governedAll.has(file), 1);
      },
      signal,
    );
    return { ...counts, coverage: coverageOf(counts) };
  };
  if (!parts?.memo) return (await compute()).coverage;
  const kept = await parts.memo.keepAlongListing(
    parts,
    'coverage',
    [inputs.governedAll],
    inputs.listing,
    inputs.generation,
    compute,
    async (before, added, removed) => {
      const counts = {
        folders: new Map(before.folders),
        files: before.files,
        governed: before.governed,
      };
      const copied = new Set<string>();
      for (const file of removed) {
        if (counted(file)) count(counts, file, inputs.governedAll.has(file), -1, copied);
      }
      for (const file of added) {
        if (counted(file)) count(counts, file, inputs.governedAll.has(file), 1, copied);
      }
      return { ...counts, coverage: coverageOf(counts) };
    },
  );
  return kept.coverage;
}

/**
 * Counts `file` (`sign`: 1 added, -1 removed) in every folder above it. `copied`: entries already
 * copied in this update (the others are shared with an earlier coverage: copied before changing).
 */
function count(
  counts: Omit<FolderCounts, 'coverage'>,
  file: string,
  governed: boolean,
  sign: 1 | -1,
  copied?: Set<string>,
): void {
  counts.files += sign;
  if (governed) counts.governed += sign;
  let folder: string | null = '';
  for (let end = -1; folder !== null;) {
    let entry = counts.folders.get(folder);
    if (!entry || (copied && !copied.has(folder))) {
      entry = entry ? { ...entry } : { path: folder, files: 0, governed: 0 };
      counts.folders.set(folder, entry);
      copied?.add(folder);
    }
    entry.files += sign;
    if (governed) entry.governed += sign;
    if (entry.files === 0) counts.folders.delete(folder);
    const next = file.indexOf('/', end + 1);
    if (next < 0) folder = null;
    else {
      folder = file.slice(0, next);
      end = next;
    }
  }
}

/** The folders the window shows: the first COVERAGE_FOLDERS_CAP by depth, in UTF-8 order. */
function coverageOf(counts: Omit<FolderCounts, 'coverage'>): LiveCheck['coverage'] {
  let list = [...counts.folders.values()];
  const truncated = list.length > COVERAGE_FOLDERS_CAP;
  if (truncated) {
    const depth = (entry: CoverageFolder) => (entry.path === '' ? 0 : entry.path.split('/').length);
    list.sort((a, b) => depth(a) - depth(b) || compareUtf8(a.path, b.path));
    list = list.slice(0, COVERAGE_FOLDERS_CAP);
  }
  list.sort((a, b) => compareUtf8(a.path, b.path));
  return { files: counts.files, governed: counts.governed, folders: list, truncated };
}
