// search_files on a real repository: glob semantics, tracked + untracked without ignored files,
// nested repositories, symlinks listed but never followed, a swapped-in symlinked directory left
// out, the cap, and the hints.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, writeFiles } from '../testing/temp-repo.ts';
import { searchFilesTool, type SearchFilesResult } from './search-files.ts';
import { UserError } from '../platform/errors.ts';
import { expectNoLeak, makeToolFixture, type ToolFixture } from '../testing/tool-calls.ts';
import { rm } from 'node:fs/promises';

let fixture: ToolFixture;

async function search(args: Record<string, unknown>, root?: string): Promise<SearchFilesResult> {
  const result = await searchFilesTool.handler(args as never, {
    root: root ?? fixture.root,
    signal: new AbortController().signal,
  });
  expectNoLeak(result);
  return searchFilesTool.outputSchema.parse(result) as SearchFilesResult;
}

beforeAll(async () => {
  fixture = await makeToolFixture();
});

afterAll(async () => {
  await fixture.cleanup();
});

describe('search_files', () => {
  it('finds tracked and untracked files, leaving out ignored ones', async () => {
    const all = await search({ patterns: ['**'] });
    expect(all.files).toEqual([
      '.github/ci.yml',
      '.gitignore',
      'README.md',
      'bytes/f\ufffd.txt',
      'data/blob.bin',
      'docs/guide.md',
      'link-file',
      'link-in',
      'link-out',
      'nested/.gitignore',
      'nested/inner.txt',
      'notes/todo.txt',
      'src/app.test.ts',
      'src/deep/nested/x.ts',
      'src/index.ts',
      'src/util.ts',
      'swap', // now an untracked symlink
      'ünïcode/файл.txt',
    ]);
    expect(all.total_matches).toBe(18);
    expect(all.truncated).toBe(false);
    expect(all.files_considered).toBe(18);
    // Never: ignored (build/, app.log, nested/skip.tmp), .git, deleted (gone.txt), or the
    // tracked swap/inner.txt whose directory is now a symlink out.
  });

  it('applies glob semantics: * within a segment, ** across, dotfiles, case', async () => {
    expect((await search({ patterns: ['*.md'] })).files).toEqual(['README.md']);
    expect((await search({ patterns: ['**/*.ts'] })).files).toEqual([
      'src/app.test.ts',
      'src/deep/nested/x.ts',
      'src/index.ts',
      'src/util.ts',
    ]);
    expect((await search({ patterns: ['src/*.ts'] })).files).toHaveLength(3);
    expect((await search({ patterns: ['**/*.yml'] })).files).toEqual(['.github/ci.yml']);
    expect((await search({ patterns: ['**/*.TS'] })).files).toEqual([]);
    expect((await search({ patterns: ['ünïcode/*'] })).files).toEqual(['ünïcode/файл.txt']);
  });

  it('excludes, narrows to a path (patterns still from the root), and caps', async () => {
    const excluded = await search({ patterns: ['**/*.ts'], exclude: ['**/*.test.ts'] });
    expect(excluded.files).not.toContain('src/app.test.ts');
    const under = await search({ patterns: ['**/*.ts'], path: 'src/deep' });
    expect(under).toMatchObject({ path: 'src/deep', files: ['src/deep/nested/x.ts'] });
    const capped = await search({ patterns: ['**'], max_results: 3 });
    expect(capped.files).toEqual(['.github/ci.yml', '.gitignore', 'README.md']);
    expect(capped).toMatchObject({ total_matches: 18, truncated: true });
  });

  it('hints at the usual mistakes when nothing matches', async () => {
    const rootOnly = await search({ patterns: ['*.txt'] });
    expect(rootOnly.files).toEqual([]);
    expect(rootOnly.hint).toMatch(/"\*\*\/\*\.txt" for any depth/);
    const relative = await search({ patterns: ['nested/*.ts'], path: 'src' });
    expect(relative.hint).toMatch(/try "src\/nested\/\*\.ts"/);
    expect((await search({ patterns: ['**/*.ts'] })).hint).toBeUndefined();
  });

  it('lists everything inside an ignored directory when asked for it', async () => {
    expect((await search({ patterns: ['**'], path: 'build' })).files).toEqual(['build/out.js']);
  });

  it('lists symlinks as files without following them', async () => {
    // A symlinked directory is a file here: `swap` names it (`swap/**` is what is inside it).
    const links = await search({ patterns: ['link-*', 'link-*/**', 'swap', 'swap/**'] });
    expect(links.files).toEqual(['link-file', 'link-in', 'link-out', 'swap']);
    const through = await search({ patterns: ['**'], path: 'link-in' });
    expect(through.path).toBe('src'); // a symlink inside resolves to its real path
  });

  it('refuses a file as path, and bad arguments', async () => {
    await expect(search({ patterns: ['**'], path: 'README.md' })).rejects.toThrow(
      /not a directory: "README.md"; search_files searches under a directory/,
    );
    await expect(search({ patterns: [] })).rejects.toThrow(/invalid arguments/);
    await expect(search({ patterns: [''] })).rejects.toThrow(UserError);
    await expect(search({ patterns: ['**'], max_results: 0 })).rejects.toThrow(/invalid/);
  });

  it('lists every file of a directory that is not a git repository', async () => {
    const plain = await makeTempDir('grove-plain-');
    try {
      await writeFiles(plain, { '.gitignore': '*.log\n', 'a.log': 'x', 'd/b.txt': 'y' });
      const result = await search({ patterns: ['**'] }, plain);
      expect(result.files).toEqual(['.gitignore', 'a.log', 'd/b.txt']);
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });
});
