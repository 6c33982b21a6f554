// The Reconciliation tab's pure helpers: spec order and diff line kinds.
import { describe, expect, test } from 'vitest';
import type { SpecReconcileState } from '../../../shared/reconcile.ts';
import { diffLineKind, orderSpecs, specRows } from './reconcile-format.ts';

function spec(path: string, overrides: Partial<SpecReconcileState> = {}): SpecReconcileState {
  return {
    path,
    title: path,
    intent: path,
    behaviors: [],
    constraints: [],
    invariants: [],
    subsystems: [],
    tier: 'full',
    isSystemSpec: false,
    governedFiles: 0,
    changedSinceReconciled: 0,
    changedSinceReconciledPaths: [],
    specInvalidated: false,
    affected: false,
    affectedFiles: 0,
    affectedPaths: [],
    lastReconciledAt: null,
    reconciledBy: null,
    ...overrides,
  };
}

describe('orderSpecs', () => {
  test('puts the system spec first, then the others by path', () => {
    const ordered = orderSpecs([
      spec('.notarai/b.spec.yaml'),
      spec('.notarai/system.spec.yaml', { isSystemSpec: true }),
      spec('.notarai/a.spec.yaml'),
    ]);
    expect(ordered.map((s) => s.path)).toEqual([
      '.notarai/system.spec.yaml',
      '.notarai/a.spec.yaml',
      '.notarai/b.spec.yaml',
    ]);
  });
});

describe('specRows', () => {
  test('nests the subsystems the system spec lists under it, in its order', () => {
    const rows = specRows([
      spec('.notarai/z-other.spec.yaml'),
      spec('.notarai/b.spec.yaml'),
      spec('.notarai/system.spec.yaml', {
        isSystemSpec: true,
        subsystems: ['.notarai/b.spec.yaml', '.notarai/a.spec.yaml', '.notarai/missing.spec.yaml'],
      }),
      spec('.notarai/a.spec.yaml'),
    ]);
    expect(rows.map((row) => [row.spec.path, row.depth])).toEqual([
      ['.notarai/system.spec.yaml', 0],
      ['.notarai/b.spec.yaml', 1],
      ['.notarai/a.spec.yaml', 1],
      ['.notarai/z-other.spec.yaml', 0],
    ]);
  });

  test('without a system spec, lists every spec by path', () => {
    expect(specRows([spec('b'), spec('a')]).map((row) => row.spec.path)).toEqual(['a', 'b']);
  });
});

describe('diffLineKind', () => {
  test('classifies unified diff lines', () => {
    expect(diffLineKind('diff --git a/x b/x')).toBe('meta');
    expect(diffLineKind('index 1..2 100644')).toBe('meta');
    expect(diffLineKind('--- a/x')).toBe('file');
    expect(diffLineKind('+++ b/x')).toBe('file');
    expect(diffLineKind('@@ -1 +1 @@')).toBe('hunk');
    expect(diffLineKind('+added')).toBe('add');
    expect(diffLineKind('-removed')).toBe('del');
    expect(diffLineKind('---removed dashes')).toBe('del');
    expect(diffLineKind(' context')).toBe('context');
    expect(diffLineKind('\\ No newline at end of file')).toBe('meta');
  });
});
