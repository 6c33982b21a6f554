// list_directory against real repositories: types, sizes and order; what git ignores (nested
// .gitignore, .git/info/exclude, nested repositories); .git hidden; symlinks listed, not followed;
// the entry cap; plain (non-git) directories.
import { execFile } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, makeTempDir, makeTempRepo, writeFiles, type TempRepo } from '../testing/temp-repo.ts';
import { MAX_LIST_ENTRIES, listDirectoryTool, type ListDirectoryResult } from './list-directory.ts';
import { readFileTool } from './read-file.ts';
import { UserError } from '../platform/errors.ts';

let repo: TempRepo;
let plain: string;

async function list(args: Record<string, unknown>, root = repo.root): Promise<ListDirectoryResult> {
  const result = await listDirectoryTool.handler(args as never, {
    root,
    signal: new AbortController().signal,
  });
  // Every result must satisfy the declared output schema.
  return listDirectoryTool.outputSchema.parse(result) as unknown as ListDirectoryResult;
}

async function refusal(args: Record<string, unknown>, root = repo.root): Promise<string> {
  const error: unknown = await list(args, root).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(UserError);
  return (error as UserError).message;
}

const names = (listing: ListDirectoryResult): string[] =>
  listing.entries.map((entry) => entry.name);

beforeAll(async () => {
  repo = await makeTempRepo({
    '.gitignore': 'build/\n*.log\n/root-only.txt\n',
    'src/index.ts': 'export const x = 1;\n',
    'src/util.ts': 'export {};\n',
    'src/debug.log': 'tracked on purpose\n', // tracked, so shown although *.log is ignored
    'sub/.gitignore': 'local-secret.txt\n',
    'sub/keep.txt': 'kept\n',
    'sub/deeper/.gitignore': '!*.log\n',
    'b.txt': 'bee\n',
    'a.txt': 'a\n',
    'Z-upper.txt': 'z\n',
  });
  await git(repo.root, 'add', '-f', 'src/debug.log');
  await git(repo.root, 'commit', '-q', '-m', 'track a log');
  await writeFiles(repo.root, {
    'build/output.js': 'built\n',
    'build/nested/more.js': 'built\n',
    'app.log': 'noise\n',
    'root-only.txt': 'ignored at the root only\n',
    'sub/root-only.txt': 'not ignored here\n',
    'sub/local-secret.txt': 'ignored by sub/.gitignore\n',
    'sub/deeper/wanted.log': 're-included by sub/deeper/.gitignore\n',
    'excluded.txt': 'ignored by .git/info/exclude\n',
    'outside-target/secret.txt': 'x',
    'empty-dir/.keep': '',
  });
  await writeFile(path.join(repo.root, '.git', 'info', 'exclude'), 'excluded.txt\n');
  await rm(path.join(repo.root, 'empty-dir', '.keep'));
  await writeFiles(repo.dir, { 'outside/secret-name.txt': 'outside\n' });
  await symlink('../outside', path.join(repo.root, 'link-out'));
  await symlink('src', path.join(repo.root, 'link-src'));
  await promisify(execFile)('mkfifo', [path.join(repo.root, 'fifo')]);
  // A nested repository with its own ignore rules.
  await mkdir(path.join(repo.root, 'nested'));
  await git(path.join(repo.root, 'nested'), 'init', '-q');
  await writeFiles(path.join(repo.root, 'nested'), {
    '.gitignore': 'inner.tmp\n',
    'inner.tmp': 'ignored by the nested repo\n',
    'inner.txt': 'shown\n',
  });

  plain = await makeTempDir('grove-plain-');
  await writeFiles(plain, {
    '.gitignore': '*.log\n',
    'a.log': 'not a repository, so nothing is ignored\n',
    'dir/file.txt': 'x',
  });
});

afterAll(async () => {
  await repo.cleanup();
  await rm(plain, { recursive: true, force: true });
});

describe('list_directory', () => {
  it('lists the root: types, sizes, directories first, then by name', async () => {
    const listing = await list({});
    expect(listing.path).toBe('.');
    expect(listing.entries).toEqual([
      { name: 'empty-dir', path: 'empty-dir', type: 'directory' },
      { name: 'nested', path: 'nested', type: 'directory' },
      { name: 'outside-target', path: 'outside-target', type: 'directory' },
      { name: 'src', path: 'src', type: 'directory' },
      { name: 'sub', path: 'sub', type: 'directory' },
      { name: '.gitignore', path: '.gitignore', type: 'file', size: 28 },
      { name: 'README.md', path: 'README.md', type: 'file', size: 12 },
      { name: 'Z-upper.txt', path: 'Z-upper.txt', type: 'file', size: 2 },
      { name: 'a.txt', path: 'a.txt', type: 'file', size: 2 },
      { name: 'b.txt', path: 'b.txt', type: 'file', size: 4 },
      { name: 'fifo', path: 'fifo', type: 'other' },
      { name: 'link-out', path: 'link-out', type: 'symlink' },
      { name: 'link-src', path: 'link-src', type: 'symlink' },
    ]);
    expect(listing.truncated).toBe(false);
    expect(listing.total_entries).toBe(13);
    // build/, app.log, root-only.txt, excluded.txt
    expect(listing.ignored_entries).toBe(4);
  });

  it('respects nested .gitignore files and keeps tracked files', async () => {
    expect(names(await list({ path: 'sub' }))).toEqual([
      'deeper',
      '.gitignore',
      'keep.txt',
      'root-only.txt',
    ]);
    expect(names(await list({ path: 'sub/deeper' }))).toEqual(['.gitignore', 'wanted.log']);
    const src = await list({ path: 'src' });
    expect(src.entries.map((entry) => entry.path)).toEqual([
      'src/debug.log',
      'src/index.ts',
      'src/util.ts',
    ]);
    expect(src.ignored_entries).toBe(0);
  });

  it('lists everything inside a directory that is itself ignored', async () => {
    const build = await list({ path: 'build' });
    expect(build.entries).toEqual([
      { name: 'nested', path: 'build/nested', type: 'directory' },
      { name: 'output.js', path: 'build/output.js', type: 'file', size: 6 },
    ]);
    expect(build.ignored_entries).toBe(0);
  });

  it("applies a nested repository's own rules and hides its .git", async () => {
    const nested = await list({ path: 'nested' });
    expect(names(nested)).toEqual(['.gitignore', 'inner.txt']);
    expect(nested.ignored_entries).toBe(1);
  });

  it('never lists .git', async () => {
    expect(names(await list({ path: '.' }))).not.toContain('.git');
    expect(names(await list({ path: 'nested' }))).not.toContain('.git');
  });

  it('lists a symlink pointing out as a symlink and never follows it', async () => {
    const entry = (await list({})).entries.find((candidate) => candidate.name === 'link-out');
    expect(entry).toEqual({ name: 'link-out', path: 'link-out', type: 'symlink' });
    expect(await refusal({ path: 'link-out' })).toMatch(/through a symbolic link/);
    expect(JSON.stringify(await list({}))).not.toContain('secret-name');
  });

  it('follows a symlink that stays inside, reporting the real path', async () => {
    const listing = await list({ path: 'link-src' });
    expect(listing.path).toBe('src');
    expect(listing.entries[0]?.path).toBe('src/debug.log');
  });

  it('accepts the forms of the root and of a subdirectory', async () => {
    for (const root of ['.', './', '', undefined, repo.root, `${repo.root}/`]) {
      if (root === '') {
        expect(await refusal({ path: root })).toMatch(/path is empty; use "\."/);
        continue;
      }
      expect((await list(root === undefined ? {} : { path: root })).path).toBe('.');
    }
    expect((await list({ path: 'sub/deeper/' })).path).toBe('sub/deeper');
    expect((await list({ path: 'empty-dir' })).entries).toEqual([]);
  });

  it('refuses a path that does not exist, or is a file', async () => {
    expect(await refusal({ path: 'no-such-dir' })).toBe(
      'no such file or directory in the worktree: "no-such-dir"',
    );
    expect(await refusal({ path: 'a.txt' })).toMatch(/not a directory: "a.txt"; use read_file/);
    expect(await refusal({ path: 'src', recursive: true })).toMatch(/invalid arguments/);
  });

  it('lists everything in a directory that is not a git repository', async () => {
    const listing = await list({}, plain);
    expect(names(listing)).toEqual(['dir', '.gitignore', 'a.log']);
    expect(listing.ignored_entries).toBe(0);
  });

  it('lists a non-UTF-8 file name (lossily) without failing', async () => {
    const dir = path.join(repo.root, 'bytes');
    await mkdir(dir);
    const rawName = Buffer.concat([Buffer.from(dir + '/'), Buffer.from([0x66, 0xe9, 0x2e, 0x74])]);
    await writeFile(rawName, 'latin-1 name\n');
    const listing = await list({ path: 'bytes' });
    expect(listing.entries).toEqual([
      { name: 'f\ufffd.t', path: 'bytes/f\ufffd.t', type: 'file', size: 13 },
    ]);
    await expect(
      readFileTool.handler({ path: 'bytes/f\ufffd.t' } as never, {
        root: repo.root,
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow(/no such file or directory in the worktree/);
  });

  it(`caps a listing at ${MAX_LIST_ENTRIES} entries, directories first`, async () => {
    const dir = path.join(repo.root, 'many');
    await mkdir(path.join(dir, 'zz-directory'), { recursive: true });
    await Promise.all(
      Array.from({ length: MAX_LIST_ENTRIES + 4 }, (_, index) =>
        writeFile(path.join(dir, `file-${String(index).padStart(5, '0')}.txt`), ''),
      ),
    );
    const listing = await list({ path: 'many' });
    expect(listing.truncated).toBe(true);
    expect(listing.total_entries).toBe(MAX_LIST_ENTRIES + 5);
    expect(listing.entries).toHaveLength(MAX_LIST_ENTRIES);
    expect(listing.entries[0]).toEqual({
      name: 'zz-directory',
      path: 'many/zz-directory',
      type: 'directory',
    });
    expect(listing.entries[1]).toMatchObject({ name: 'file-00000.txt', size: 0 });
  });

  it('declares itself read-only, with schemas that accept its own results', async () => {
    expect(listDirectoryTool.name).toBe('list_directory');
    expect(listDirectoryTool.annotations.readOnlyHint).toBe(true);
    expect(listDirectoryTool.inputSchema.parse({})).toEqual({ path: '.' });
    const result = await list({ path: 'src' });
    expect(listDirectoryTool.outputSchema.parse(result)).toEqual(result);
  });
});
