// The Reconciliation tab's pure helpers: spec order, diff line kinds, what Mark reconciled sends.
import { describe, expect, test } from 'vitest';
import type { SpecReconcileState } from '../../../shared/reconcile.ts';
import { diffLineKind, filesToMark, orderSpecs, specRows } from './reconcile-format.ts';

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

describe('filesToMark', () => {
  const api = spec('.notarai/api.spec.yaml', {
    changedSinceReconciled: 2,
    changedSinceReconciledPaths: ['src/a.ts', 'src/b.ts'],
  });

  test('all changed files plus the spec file when nothing is picked', () => {
    expect(filesToMark(api, new Set(), null)).toEqual({
      files: ['src/a.ts', 'src/b.ts', '.notarai/api.spec.yaml'],
      all: true,
      changed: ['src/a.ts', 'src/b.ts'],
    });
  });

  test('only the picked files that are still changed', () => {
    const plan = filesToMark(api, new Set(['src/b.ts', 'src/gone.ts']), null);
    expect(plan.files).toEqual(['src/b.ts']);
    expect(plan.all).toBe(false);
  });

  test("the diff's full list when the store's list is capped", () => {
    const capped = spec('.notarai/api.spec.yaml', {
      changedSinceReconciled: 3,
      changedSinceReconciledPaths: ['src/a.ts'],
    });
    expect(filesToMark(capped, new Set(), ['src/a.ts', 'src/b.ts', 'src/c.ts']).files).toEqual([
      'src/a.ts',
      'src/b.ts',
      'src/c.ts',
      '.notarai/api.spec.yaml',
    ]);
  });

  test('nothing when nothing changed; the spec file alone when only it changed', () => {
    expect(filesToMark(spec('.notarai/x.spec.yaml'), new Set(), null).files).toEqual([]);
    expect(
      filesToMark(spec('.notarai/x.spec.yaml', { specInvalidated: true }), new Set(), null).files,
    ).toEqual(['.notarai/x.spec.yaml']);
  });
});
