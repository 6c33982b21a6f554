// A spec review's pure helpers: the files listed from get_spec_diff (statuses, deletions apart,
// renames once), the folder tree with counts and folding, the path filter, each file's part of
// the diff, and what a mark covers and when it asks first.
import { describe, expect, test } from 'vitest';
import type { SpecDiffResult } from '../../../shared/reconcile-results.ts';
import {
  filterFiles,
  markPlan,
  reviewFiles,
  splitDiff,
  treeRows,
  type ReviewFile,
} from './review-files.ts';

const DIFF = [
  'diff --git a/src/a.ts b/src/a.ts',
  'index 1..2 100644',
  '--- a/src/a.ts',
  '+++ b/src/a.ts',
  '@@ -1 +1 @@',
  '-old',
  '+new',
  'diff --git a/src/gone.ts b/src/gone.ts',
  'deleted file mode 100644',
  '--- a/src/gone.ts',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
].join('\n');

function result(overrides: Partial<SpecDiffResult> = {}): SpecDiffResult {
  return {
    diff: DIFF,
    files: ['src/a.ts', 'src/lib/b.ts', 'src/new.ts', 'README.md'],
    skipped: [],
    excluded: [],
    spec_changes: [{ path: '.notarai/api.spec.yaml', content: 'intent: x\n' }],
    system_spec: null,
    binary_changes: [],
    file_categories: {},
    spec_invalidated: [],
    deleted_files: ['src/gone.ts', 'src/old.ts'],
    review: {
      status: {
        'src/a.ts': 'modified',
        'src/lib/b.ts': 'unchanged',
        'src/new.ts': 'renamed',
        'README.md': 'untracked',
        'src/gone.ts': 'deleted',
        '.notarai/api.spec.yaml': 'modified',
      },
      renamed_from: { 'src/new.ts': 'src/old.ts' },
      never_reconciled: ['README.md'],
      other_specs: { 'README.md': ['.notarai/docs.spec.yaml'] },
    },
    ...overrides,
  };
}

describe('reviewFiles', () => {
  test('lists changed files, spec files and deletions, a rename once, sorted', () => {
    const files = reviewFiles(result());
    expect(files.map((file) => [file.path, file.status, file.markable])).toEqual([
      ['.notarai/api.spec.yaml', 'modified', true],
      ['README.md', 'untracked', true],
      ['src/a.ts', 'modified', true],
      ['src/gone.ts', 'deleted', false],
      ['src/lib/b.ts', 'unchanged', true],
      ['src/new.ts', 'renamed', true],
    ]);
    const readme = files.find((file) => file.path === 'README.md')!;
    expect(readme.neverReconciled).toBe(true);
    expect(readme.otherSpecs).toEqual(['.notarai/docs.spec.yaml']);
    expect(files.find((file) => file.path === 'src/new.ts')?.from).toBe('src/old.ts');
    expect(files[0]!.specFile).toBe(true);
  });
});

describe('treeRows', () => {
  const files = reviewFiles(result());
  test('folders first with their counts, then files; a fold hides its content', () => {
    const rows = treeRows(files, new Set());
    expect(
      rows.map((row) => (row.kind === 'folder' ? `${row.name}/ ${row.count}` : row.name)),
    ).toEqual([
      '.notarai/ 1',
      'api.spec.yaml',
      'src/ 4',
      'lib/ 1',
      'b.ts',
      'a.ts',
      'gone.ts',
      'new.ts',
      'README.md',
    ]);
    const folded = treeRows(files, new Set(['src']));
    expect(folded.map((row) => (row.kind === 'folder' ? row.path : row.file.path))).toEqual([
      '.notarai',
      '.notarai/api.spec.yaml',
      'src',
      'README.md',
    ]);
  });

  test('a chain of folders holding one folder reads as one row', () => {
    const deep = reviewFiles(
      result({ files: ['a/b/c/x.ts', 'a/b/c/y.ts'], spec_changes: [], deleted_files: [] }),
    );
    const rows = treeRows(deep, new Set());
    expect(rows[0]).toMatchObject({ kind: 'folder', name: 'a/b/c', path: 'a/b/c', count: 2 });
    expect(rows).toHaveLength(3);
  });

  test('20,000 files in a few folders: every one has a row', () => {
    const many = Array.from({ length: 20_000 }, (_, index) => `pkg${index % 4}/f${index}.ts`);
    const rows = treeRows(
      reviewFiles(result({ files: many, spec_changes: [], deleted_files: [] })),
      new Set(),
    );
    expect(rows.filter((row) => row.kind === 'file')).toHaveLength(20_000);
    expect(
      rows.filter((row) => row.kind === 'folder').map((row) => row.kind === 'folder' && row.count),
    ).toEqual([5000, 5000, 5000, 5000]);
  });
});

describe('filterFiles', () => {
  const files = reviewFiles(result());
  test('keeps paths containing every word, case-insensitively', () => {
    expect(filterFiles(files, 'SRC ts').map((file) => file.path)).toEqual([
      'src/a.ts',
      'src/gone.ts',
      'src/lib/b.ts',
      'src/new.ts',
    ]);
    expect(filterFiles(files, 'lib').map((file) => file.path)).toEqual(['src/lib/b.ts']);
    expect(filterFiles(files, '  ')).toBe(files);
  });
});

describe('splitDiff', () => {
  test("each file's part, keyed by its path", () => {
    const parts = splitDiff(DIFF);
    expect([...parts.keys()]).toEqual(['src/a.ts', 'src/gone.ts']);
    expect(parts.get('src/a.ts')).toContain('+new');
    expect(parts.get('src/a.ts')).not.toContain('bye');
    expect(splitDiff('').size).toBe(0);
  });
});

describe('markPlan', () => {
  const files: ReviewFile[] = reviewFiles(result());
  const markable = files.filter((file) => file.markable).map((file) => file.path);
  const base = {
    files,
    shown: new Set<string>(),
    specPath: '.notarai/api.spec.yaml',
    specInvalidated: false,
  };

  test('the viewed files, without asking when they are a handful', () => {
    const viewed = new Set(['src/a.ts']);
    const plan = markPlan({ ...base, chosen: viewed, viewed, shown: viewed });
    expect(plan).toMatchObject({
      files: ['src/a.ts'],
      neverShown: 0,
      notViewed: 0,
      ask: false,
      withSpec: false,
    });
  });

  test('every file: asks, counts the unseen, names the other specs, and adds nothing twice', () => {
    const plan = markPlan({
      ...base,
      chosen: new Set(markable),
      viewed: new Set(['src/a.ts']),
      shown: new Set(['src/a.ts']),
    });
    expect(plan.files).toEqual(markable); // the spec file is among them already
    expect(plan.neverShown).toBe(4);
    expect(plan.notViewed).toBe(4);
    expect(plan.ask).toBe(true);
    expect([...plan.otherSpecs]).toEqual([['.notarai/docs.spec.yaml', ['README.md']]]);
  });

  test('the spec file joins a mark covering every changed file', () => {
    const plain = files.filter((file) => !file.specFile);
    const all = new Set(plain.filter((file) => file.markable).map((file) => file.path));
    const plan = markPlan({ ...base, files: plain, chosen: all, viewed: all, shown: all });
    expect(plan.withSpec).toBe(true);
    expect(plan.files.at(-1)).toBe('.notarai/api.spec.yaml');
    expect(plan.ask).toBe(false);
  });

  test('more than a handful asks even when all were viewed', () => {
    const many = Array.from({ length: 6 }, (_, index) => `f${index}.ts`);
    const manyFiles = reviewFiles(
      result({ files: many, spec_changes: [], deleted_files: [], review: undefined }),
    );
    const all = new Set(many);
    expect(markPlan({ ...base, files: manyFiles, chosen: all, viewed: all, shown: all }).ask).toBe(
      true,
    );
  });
});
