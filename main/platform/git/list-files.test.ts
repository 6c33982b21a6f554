// listGitFiles against real repositories: tracked + untracked without ignored files, deleted files,
// unmerged paths once, nested repositories and submodules reported apart, non-UTF-8 names kept as
// bytes, and null outside a repository.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  git,
  makeTempDir,
  makeTempRepo,
  writeFiles,
  type TempRepo,
} from '../../testing/temp-repo.ts';
import { listGitFiles } from './list-files.ts';

let repo: TempRepo;

const names = (files: { path: string }[]): string[] => files.map((file) => file.path).sort();

beforeAll(async () => {
  repo = await makeTempRepo({ '.gitignore': '*.log\n', 'a.txt': 'a\n', 'conflict.txt': 'base\n' });
  const { root } = repo;
  // An unmerged path: three index stages.
  await git(root, 'checkout', '-q', '-b', 'other');
  await writeFile(path.join(root, 'conflict.txt'), 'other\n');
  await git(root, 'commit', '-q', '-am', 'other');
  await git(root, 'checkout', '-q', 'main');
  await writeFile(path.join(root, 'conflict.txt'), 'main\n');
  await git(root, 'commit', '-q', '-am', 'main');
  await git(root, 'merge', '-q', 'other').catch(() => undefined);
  await writeFiles(root, { 'new.txt': 'n', 'skip.log': 'ignored', 'gone.txt': 'g' });
  await git(root, 'add', 'gone.txt');
  await rm(path.join(root, 'gone.txt'));
  await writeFile(Buffer.from(`${root}/\x6c\xe9.txt`, 'latin1'), 'latin-1 name');
  const nested = path.join(root, 'inner');
  await mkdir(nested);
  await git(nested, 'init', '-q');
  await writeFiles(nested, { 'x.txt': 'x' });
});

afterAll(async () => {
  await repo.cleanup();
});

describe('listGitFiles', () => {
  it('lists tracked and untracked files once, nested repositories apart', async () => {
    const listing = await listGitFiles(repo.root, { ceiling: repo.dir });
    expect(names(listing!.files)).toEqual([
      '.gitignore',
      'README.md',
      'a.txt',
      'conflict.txt',
      'gone.txt',
      'l\ufffd.txt',
      'new.txt',
    ]);
    expect(names(listing!.nestedRepositories)).toEqual(['inner']);
    const latin = listing!.files.find((file) => file.path === 'l\ufffd.txt');
    expect(latin?.raw).toEqual(Buffer.from([0x6c, 0xe9, 0x2e, 0x74, 0x78, 0x74]));
  });

  it('leaves out deleted files on request, and lists ignored ones on request', async () => {
    const present = await listGitFiles(repo.root, { ceiling: repo.dir, excludeDeleted: true });
    expect(names(present!.files)).not.toContain('gone.txt');
    const all = await listGitFiles(repo.root, { ceiling: repo.dir, includeIgnored: true });
    expect(names(all!.files)).toContain('skip.log');
  });

  it('answers null outside a repository', async () => {
    const plain = await makeTempDir('grove-plain-');
    try {
      expect(await listGitFiles(plain, { ceiling: path.dirname(plain) })).toBeNull();
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });
});
