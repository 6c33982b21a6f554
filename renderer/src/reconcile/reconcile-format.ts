// Pure helpers of the Reconciliation tab: the order of the specs and the kind of each unified-diff
// line (for its colour); a spec's review has its own (review-files.ts). Kept apart from the views
// so they are unit-tested without a DOM.
import type { SpecReconcileState } from '../../../shared/reconcile.ts';

/** The system spec first, then the others by path. */
export function orderSpecs(specs: readonly SpecReconcileState[]): SpecReconcileState[] {
  return [...specs].sort((a, b) =>
    a.isSystemSpec !== b.isSystemSpec ? (a.isSystemSpec ? -1 : 1) : a.path.localeCompare(b.path),
  );
}

/** A spec in the table, with its nesting depth (1: a subsystem listed by the system spec). */
export interface SpecRow {
  spec: SpecReconcileState;
  depth: 0 | 1;
}

/**
 * The table's rows: the system spec first with its subsystems nested under it (in the order it
 * lists them), then every other spec by path.
 */
export function specRows(specs: readonly SpecReconcileState[]): SpecRow[] {
  const ordered = orderSpecs(specs);
  const system = ordered[0]?.isSystemSpec ? ordered[0] : undefined;
  if (!system) return ordered.map((spec) => ({ spec, depth: 0 }));
  const byPath = new Map(ordered.map((spec) => [spec.path, spec]));
  const nested = system.subsystems
    .map((subsystem) => byPath.get(subsystem))
    .filter((spec): spec is SpecReconcileState => spec !== undefined && spec !== system);
  const nestedPaths = new Set(nested.map((spec) => spec.path));
  return [
    { spec: system, depth: 0 },
    ...nested.map((spec) => ({ spec, depth: 1 as const })),
    ...ordered
      .filter((spec) => spec !== system && !nestedPaths.has(spec.path))
      .map((spec) => ({ spec, depth: 0 as const })),
  ];
}

export type DiffLineKind = 'meta' | 'file' | 'hunk' | 'add' | 'del' | 'context';

const META_PREFIXES = [
  'diff ',
  'index ',
  'new file',
  'deleted file',
  'old mode',
  'new mode',
  'similarity ',
  'rename ',
  'Binary ',
  '\\',
];

export function diffLineKind(line: string): DiffLineKind {
  if (line.startsWith('+++ ') || line.startsWith('--- ')) return 'file';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  if (META_PREFIXES.some((prefix) => line.startsWith(prefix))) return 'meta';
  return 'context';
}
