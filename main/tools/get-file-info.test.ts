// get_file_info on a real repository: types, sizes, times, line counts, binary detection, and the
// git status of tracked, modified, staged, untracked, ignored and nested-repository files.
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, makeTempDir, makeTempRepo, writeFiles, type TempRepo } from '../testing/temp-repo.ts';
import { getFileInfoTool, type GetFileInfoResult } from './get-file-info.ts';

let repo: TempRepo;

async function info(filePath: string, root = repo.root): Promise<GetFileInfoResult> {
  const result = await getFileInfoTool.handler({ path: filePath } as never, {
    root,
    signal: new AbortController().signal,
  });
  return getFileInfoTool.outputSchema.parse(result) as GetFileInfoResult;
}

beforeAll(async () => {
  repo = await makeTempRepo({
    '.gitignore': '*.log\n',
    'clean.txt': 'one\ntwo\nthree\n',
    'no-final-newline.txt': 'one\ntwo',
    'modified.txt': 'before\n',
    'staged.txt': 'before\n',
    'both.txt': 'before\n',
    'image.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x0a, 0x0a]),
    'empty.txt': '',
    'src/a.ts': 'x\n',
  });
  const { root } = repo;
  await writeFile(path.join(root, 'modified.txt'), 'after\n');
  await writeFile(path.join(root, 'staged.txt'), 'after\n');
  await git(root, 'add', 'staged.txt');
  await writeFile(path.join(root, 'both.txt'), 'staged\n');
  await git(root, 'add', 'both.txt');
  await writeFile(path.join(root, 'both.txt'), 'and unstaged\n');
  await writeFiles(root, {
    'new.txt': 'untracked\n',
    'debug.log': 'ignored\n',
    'added.txt': 'added\n',
    'ünï €.txt': 'ä\nö\n',
  });
  await git(root, 'add', 'added.txt');
  await chmod(path.join(root, 'clean.txt'), 0o640);
  const nested = path.join(root, 'nested');
  await mkdir(nested);
  await git(nested, 'init', '-q');
  await writeFiles(nested, { 'inner.txt': 'inner\n' });
});

afterAll(async () => {
  await repo.cleanup();
});

describe('get_file_info', () => {
  it('describes a clean tracked text file', async () => {
    const result = await info('clean.txt');
    expect(result).toMatchObject({
      path: 'clean.txt',
      type: 'file',
      size_bytes: 14,
      permissions: '640',
      binary: false,
      line_count: 3,
      git: { state: 'unmodified', staged: false, unstaged: false },
    });
    expect(Date.parse(result.modified)).toBeGreaterThan(Date.now() - 600_000);
  });

  it('counts lines like read_file, and reports binary files without a count', async () => {
    expect((await info('no-final-newline.txt')).line_count).toBe(2);
    expect((await info('empty.txt')).line_count).toBe(0);
    expect(await info('image.bin')).toMatchObject({ binary: true, line_count: null });
    expect((await info('ünï €.txt')).line_count).toBe(2);
  });

  it('reports the git status of each kind of file', async () => {
    expect((await info('modified.txt')).git).toEqual({
      state: 'modified',
      staged: false,
      unstaged: true,
    });
    expect((await info('staged.txt')).git).toEqual({
      state: 'modified',
      staged: true,
      unstaged: false,
    });
    expect((await info('both.txt')).git).toEqual({
      state: 'modified',
      staged: true,
      unstaged: true,
    });
    expect((await info('added.txt')).git).toEqual({
      state: 'added',
      staged: true,
      unstaged: false,
    });
    expect((await info('new.txt')).git?.state).toBe('untracked');
    expect((await info('debug.log')).git?.state).toBe('ignored');
    expect((await info('ünï €.txt')).git?.state).toBe('untracked');
    // A nested repository answers for its own files.
    expect((await info('nested/inner.txt')).git?.state).toBe('untracked');
  });

  it('describes directories without file-only fields', async () => {
    const result = await info('src');
    expect(result).toMatchObject({ path: 'src', type: 'directory' });
    expect(result.git).toBeUndefined();
    expect(result.line_count).toBeUndefined();
    expect((await info('.')).path).toBe('.');
  });

  it('has no git status outside a repository', async () => {
    const plain = await makeTempDir('grove-plain-');
    try {
      await writeFiles(plain, { 'a.txt': 'a\n' });
      expect((await info('a.txt', plain)).git).toBeNull();
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });

  it('refuses what does not exist', async () => {
    await expect(info('missing.txt')).rejects.toThrow(/no such file or directory/);
  });
});
