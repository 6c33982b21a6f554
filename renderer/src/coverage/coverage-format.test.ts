// The Coverage tab's pure helpers: the folder tree and its rows, the percent a bar and its numbers
// show, the findings grouped by type in NotarAI's order, and where a finding's link points.
import { describe, expect, test } from 'vitest';
import { CHECK_FINDING_TYPES, type CheckFinding } from '../../../shared/notarai-check.ts';
import {
  changedCountNote,
  coveragePercent,
  coverageWords,
  excerptRange,
  folderTree,
  groupFindings,
  initiallyExpanded,
  specLocation,
  visibleFolders,
} from './coverage-format.ts';

function finding(overrides: Partial<CheckFinding>): CheckFinding {
  return {
    type: 'coverage_gap',
    tier: 'housekeeping',
    severity: 'warning',
    message: 'm',
    spec_path: null,
    file_path: null,
    glob_pattern: null,
    line: null,
    ...overrides,
  };
}

describe('folderTree', () => {
  test('puts each folder under its parent, siblings by name, whatever the input order', () => {
    // UTF-8 order puts "a-b" between "a" and "a/c": a flat list is not a tree order.
    const root = folderTree([
      { path: '', files: 6, governed: 3 },
      { path: 'a', files: 3, governed: 2 },
      { path: 'a-b', files: 1, governed: 0 },
      { path: 'a/c', files: 2, governed: 2 },
      { path: 'a/c/d', files: 1, governed: 1 },
    ])!;
    const rows = visibleFolders(root, new Set(['', 'a', 'a/c']));
    expect(rows.map((row) => [row.path, row.name, row.depth])).toEqual([
      ['', '', 0],
      ['a', 'a', 1],
      ['a/c', 'c', 2],
      ['a/c/d', 'd', 3],
      ['a-b', 'a-b', 1],
    ]);
  });

  test('shows a collapsed folder without its children', () => {
    const root = folderTree([
      { path: '', files: 2, governed: 1 },
      { path: 'src', files: 2, governed: 1 },
      { path: 'src/lib', files: 1, governed: 1 },
    ])!;
    expect(visibleFolders(root, new Set([''])).map((row) => row.path)).toEqual(['', 'src']);
  });

  test('hangs a folder whose parent was cut from its nearest listed ancestor', () => {
    const root = folderTree([
      { path: '', files: 1, governed: 0 },
      { path: 'deep/er/still', files: 1, governed: 0 },
    ])!;
    expect(root.children.map((child) => child.path)).toEqual(['deep/er/still']);
  });

  test('is null without folders (no project files)', () => {
    expect(folderTree([])).toBeNull();
  });

  test('expands every folder of a small tree, only the root of a big one', () => {
    const small = folderTree([
      { path: '', files: 2, governed: 0 },
      { path: 'a', files: 1, governed: 0 },
      { path: 'a/b', files: 1, governed: 0 },
    ])!;
    expect([...initiallyExpanded(small)].sort()).toEqual(['', 'a']);
    const big = folderTree([
      { path: '', files: 50, governed: 0 },
      ...Array.from({ length: 50 }, (_, i) => ({ path: `f${i}`, files: 1, governed: 0 })),
      ...Array.from({ length: 50 }, (_, i) => ({ path: `f${i}/x`, files: 1, governed: 0 })),
    ])!;
    expect([...initiallyExpanded(big)]).toEqual(['']);
  });
});

describe('coveragePercent', () => {
  test('never rounds a gap away nor a governed file to nothing', () => {
    expect(coveragePercent(999, 1000)).toBe(99);
    expect(coveragePercent(1, 1000)).toBe(1);
    expect(coveragePercent(0, 3)).toBe(0);
    expect(coveragePercent(3, 3)).toBe(100);
    expect(coveragePercent(3, 4)).toBe(75);
    expect(coveragePercent(0, 0)).toBe(100);
  });

  test('says the numbers in words', () => {
    expect(coverageWords(3, 4)).toBe('3 of 4 files governed, 75%');
    expect(coverageWords(0, 1)).toBe('0 of 1 file governed, 0%');
    expect(coverageWords(20_000, 20_001)).toBe('20,000 of 20,001 files governed, 99%');
  });
});

describe('groupFindings', () => {
  test("groups by type in NotarAI's order and counts errors and warnings", () => {
    const groups = groupFindings([
      finding({ type: 'coverage_gap', file_path: 'a' }),
      finding({ type: 'orphaned_glob', tier: 'critical', severity: 'error' }),
      finding({ type: 'coverage_gap', file_path: 'b' }),
      finding({ type: 'lint_l010', severity: 'warning' }),
      finding({ type: 'spec_invalid', severity: 'error' }),
      finding({ type: 'circular_ref', severity: 'error' }),
      finding({ type: 'overlapping_coverage' }),
    ]);
    expect(groups.map((group) => group.type)).toEqual([
      'spec_invalid',
      'coverage_gap',
      'orphaned_glob',
      'overlapping_coverage',
      'circular_ref',
      'lint_l010',
    ]);
    const gaps = groups[1]!;
    expect(gaps.title).toBe('Uncovered files');
    expect(gaps.findings.map((item) => item.file_path)).toEqual(['a', 'b']);
    expect([gaps.errors, gaps.warnings]).toEqual([0, 2]);
    expect(groups[2]).toMatchObject({ title: 'Orphaned globs', errors: 1, warnings: 0 });
    expect(groups[5]!.title).toBe('Lint L010: duplicate behavior names');
  });

  test('has a heading for every finding type', () => {
    const types = CHECK_FINDING_TYPES;
    const groups = groupFindings(types.map((type) => finding({ type })));
    expect(groups).toHaveLength(types.length);
    for (const group of groups) expect(group.title).toMatch(/\w/);
  });
});

describe('links', () => {
  test('point at the spec and its line when there is one', () => {
    expect(specLocation({ spec_path: '.notarai/a.spec.yaml', line: 7 })).toBe(
      '.notarai/a.spec.yaml:7',
    );
    expect(specLocation({ spec_path: '.notarai/a.spec.yaml', line: null })).toBe(
      '.notarai/a.spec.yaml',
    );
    expect(specLocation({ spec_path: null, line: null })).toBeNull();
  });

  test('show the lines around the finding, from the top when it has none', () => {
    expect(excerptRange(3)).toEqual({ start_line: 1, end_line: 9 });
    expect(excerptRange(20)).toEqual({ start_line: 14, end_line: 26 });
    expect(excerptRange(null)).toEqual({ start_line: 1, end_line: 13 });
  });
});

describe('changedCountNote', () => {
  test('says nothing when the window and grove check count the same', () => {
    expect(
      changedCountNote({ changedSinceReconciled: 3, changedByCacheAlone: 3 }, true),
    ).toBeNull();
    expect(changedCountNote({}, true)).toBeNull(); // a state from before the counts existed
  });

  test('gives both counts in one sentence, and how to get the window’s from the CLI', () => {
    expect(changedCountNote({ changedSinceReconciled: 12, changedByCacheAlone: 2058 }, true)).toBe(
      "12 files changed since reconciled (this machine's marks, and the committed snapshot for " +
        'files not marked here); `grove check` here reports 2,058: like NotarAI, it counts only ' +
        'what this machine marked (`--with-snapshot` gives this count).',
    );
  });

  test('without a hash cache, grove check reports no changed file at all', () => {
    expect(changedCountNote({ changedSinceReconciled: 1, changedByCacheAlone: null }, true)).toBe(
      "1 file changed since reconciled (this machine's marks, and the committed snapshot for " +
        'files not marked here); `grove check` here reports none: like NotarAI, it counts ' +
        'changed files only once this machine has a hash cache (.notarai/.cache/notarai.db).',
    );
  });
});
