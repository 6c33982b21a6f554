// directory_tree on a real repository: depth-first order, depth limit with file counts, entry cap,
// .gitignore, nested repositories, symlinks shown as symlinks and never followed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directoryTreeTool, type DirectoryTreeResult } from './directory-tree.ts';
import { expectNoLeak, makeToolFixture, type ToolFixture } from '../testing/tool-calls.ts';

let fixture: ToolFixture;

async function tree(args: Record<string, unknown>): Promise<DirectoryTreeResult> {
  const result = await fixture.call(directoryTreeTool, args);
  expectNoLeak(result);
  return directoryTreeTool.outputSchema.parse(result) as DirectoryTreeResult;
}

beforeAll(async () => {
  fixture = await makeToolFixture();
});

afterAll(async () => {
  await fixture.cleanup();
});

describe('directory_tree', () => {
  it('lists the tree depth-first, directories first, without ignored files', async () => {
    const result = await tree({ max_depth: 2 });
    expect(result.entries.map((entry) => `${'  '.repeat(entry.depth - 1)}${entry.path}`)).toEqual([
      '.github',
      '  .github/ci.yml',
      'bytes',
      '  bytes/f\ufffd.txt',
      'data',
      '  data/blob.bin',
      'docs',
      '  docs/guide.md',
      'nested',
      '  nested/.gitignore',
      '  nested/inner.txt',
      'notes',
      '  notes/todo.txt',
      'src',
      '  src/deep',
      '  src/app.test.ts',
      '  src/index.ts',
      '  src/util.ts',
      'ünïcode',
      '  ünïcode/файл.txt',
      '.gitignore',
      'README.md',
      'link-file',
      'link-in',
      'link-out',
      'swap',
    ]);
    expect(result).toMatchObject({ path: '.', total_files: 18, truncated: false });
    expect(result.total_entries).toBe(result.entries.length);
  });

  it('gives types, sizes and file counts; symlinks are shown, not followed', async () => {
    const result = await tree({ max_depth: 1 });
    const byPath = new Map(result.entries.map((entry) => [entry.path, entry]));
    expect(byPath.get('src')).toEqual({ path: 'src', type: 'directory', depth: 1, file_count: 4 });
    expect(byPath.get('README.md')).toEqual({
      path: 'README.md',
      type: 'file',
      depth: 1,
      size: 12,
    });
    for (const link of ['link-out', 'link-in', 'link-file', 'swap']) {
      expect(byPath.get(link)).toEqual({ path: link, type: 'symlink', depth: 1 });
    }
    expect(result.entries.some((entry) => entry.path.startsWith('build'))).toBe(false);
    expect(result.entries.some((entry) => entry.path === '.git')).toBe(false);
  });

  it('starts at a subdirectory and limits depth, still counting deeper files', async () => {
    const result = await tree({ path: 'src', max_depth: 1 });
    expect(result.entries).toEqual([
      { path: 'src/deep', type: 'directory', depth: 1, file_count: 1 },
      { path: 'src/app.test.ts', type: 'file', depth: 1, size: 12 },
      { path: 'src/index.ts', type: 'file', depth: 1, size: 60 },
      { path: 'src/util.ts', type: 'file', depth: 1, size: 48 },
    ]);
    expect(result.total_files).toBe(4);
    const deep = await tree({ path: 'src', max_depth: 5 });
    expect(deep.entries.map((entry) => entry.path)).toContain('src/deep/nested/x.ts');
  });

  it('caps the entries and says so', async () => {
    const result = await tree({ max_depth: 5, max_entries: 5 });
    expect(result.entries).toHaveLength(5);
    expect(result.truncated).toBe(true);
    expect(result.total_entries).toBeGreaterThan(5);
  });

  it('refuses a file and bad arguments', async () => {
    await expect(tree({ path: 'README.md' })).rejects.toThrow(
      /not a directory: "README.md"; directory_tree shows a directory/,
    );
    await expect(tree({ max_depth: 0 })).rejects.toThrow(/invalid arguments/);
    await expect(tree({ max_entries: 100_000 })).rejects.toThrow(/invalid arguments/);
  });
});
