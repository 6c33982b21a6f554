import { afterEach, describe, expect, it } from 'vitest';
import { git, makeTempRepo, writeFiles } from '../../testing/temp-repo.ts';
import type { TempRepo } from '../../testing/temp-repo.ts';
import { compareCodeUnits } from '../../platform/path-order.ts';
import {
  changedVsBase,
  defaultBase,
  listWorktreeFileSets,
  mergeSorted,
  resolveBase,
  withUntracked,
} from './git-queries.ts';

const repos: TempRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
});

async function repo(files: Record<string, string> = {}): Promise<TempRepo> {
  const made = await makeTempRepo(files);
  repos.push(made);
  return made;
}

describe('git queries', () => {
  it('merges sorted listings without duplicates, and sorts when they are not sorted', () => {
    expect(mergeSorted(['a', 'c', 'c', 'e'], ['b', 'd'])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(mergeSorted([], ['x'])).toEqual(['x']);
    expect(mergeSorted(['b', 'a'], ['c'])).toEqual(['a', 'b', 'c']);
    // In native order (the listing's when no path holds a code unit from U+D800), the same.
    expect(mergeSorted(['a', 'c', 'c', 'e'], ['b', 'd'], compareCodeUnits)).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
    ]);
    expect(mergeSorted(['b', 'a'], ['c'], compareCodeUnits)).toEqual(['a', 'b', 'c']);
  });

  it('merges a listing in UTF-8 order whichever names it holds', async () => {
    // git lists by bytes: U+FF01 before the emoji. JavaScript's own order puts the emoji first, so
    // merging the tracked U+FF01 with the untracked emoji by it would swap them.
    const { root } = await repo({ '！.txt': '1\n', 'a.txt': 'a\n' });
    await writeFiles(root, { '😀.txt': '2\n', 'b.txt': 'b\n' });
    const files = await listWorktreeFileSets(root);
    expect(files.present).toEqual(['README.md', 'a.txt', 'b.txt', '！.txt', '😀.txt']);
  });

  it('lists tracked and untracked files, leaving ignored ones out and finding deletions on request', async () => {
    const { root } = await repo({ '.gitignore': '*.log\n', 'a.txt': 'a\n', 'gone.txt': 'g\n' });
    await writeFiles(root, { 'new.txt': 'n\n', 'debug.log': 'x\n', 'dir/é.txt': 'e\n' });
    await git(root, 'rm', '-q', '--cached', 'gone.txt');
    await writeFiles(root, { 'gone.txt': 'back as untracked\n' });
    const files = await listWorktreeFileSets(root, { deleted: true });
    expect(files.present).toEqual([
      '.gitignore',
      'README.md',
      'a.txt',
      'dir/é.txt',
      'gone.txt',
      'new.txt',
    ]);
    expect([...files.untracked].sort()).toEqual(['dir/é.txt', 'gone.txt', 'new.txt']);
  });

  it('reports renames with both paths, deletions as gone, untracked as ?', async () => {
    const { root } = await repo({ 'old.txt': 'same content\nline two\n', 'del.txt': 'd\n' });
    await git(root, 'mv', 'old.txt', 'new.txt');
    await git(root, 'rm', '-q', 'del.txt');
    const changed = withUntracked(await changedVsBase(root, 'HEAD'), ['u.txt']);
    expect(changed.entries).toEqual(
      expect.arrayContaining([
        { status: 'R', path: 'new.txt', from: 'old.txt' },
        { status: 'D', path: 'del.txt' },
        { status: '?', path: 'u.txt' },
      ]),
    );
    expect(changed.paths).toEqual(['del.txt', 'new.txt', 'old.txt', 'u.txt']);
    expect([...changed.gone].sort()).toEqual(['del.txt', 'old.txt']);
  });

  it('validates bases and picks the default: origin/HEAD, else main, else master, else current', async () => {
    const { root } = await repo();
    expect(await resolveBase(root, 'main')).toMatch(/^[0-9a-f]{40}$/);
    await expect(resolveBase(root, '-x')).rejects.toThrow('must not start with "-"');
    await expect(resolveBase(root, 'nope')).rejects.toThrow('does not resolve');
    await expect(resolveBase(root, 'main\nx')).rejects.toThrow('NUL or newline');
    expect(await defaultBase(root)).toBe('main');
    await git(root, 'branch', '-m', 'main', 'trunk');
    expect(await defaultBase(root)).toBe('trunk');
    await git(root, 'branch', 'master');
    expect(await defaultBase(root)).toBe('master');
    await git(root, 'update-ref', 'refs/remotes/origin/develop', 'HEAD');
    await git(root, 'symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/develop');
    expect(await defaultBase(root)).toBe('origin/develop');
  });
});
