import { rm, symlink, chmod } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../../testing/cleanups.ts';
import { git, makeTempRepo, writeFiles } from '../../testing/temp-repo.ts';
import { diffPathSetsAgainstBase, diffPathsAgainstBase } from './intersection-diff.ts';

const cleanups = cleanupsAfterEach();

/** A repository whose base commit has `files`, then the working tree changed by `change`. */
async function changedRepo(
  files: Record<string, string>,
  change: (root: string) => Promise<void>,
): Promise<{ root: string; sha: string; objectsDir: string }> {
  const repo = await makeTempRepo(files);
  cleanups.push(() => repo.cleanup());
  const sha = (await git(repo.root, 'rev-parse', 'HEAD')).trim();
  await change(repo.root);
  return { root: repo.root, sha, objectsDir: path.join(repo.root, '.git', 'objects') };
}

describe('diffPathSetsAgainstBase', () => {
  it('gives each set the diff it would get alone: edits, new files, a type change, a mode change, names git quotes, sets that overlap', async () => {
    const { root, sha, objectsDir } = await changedRepo(
      {
        'a.txt': 'a\n',
        'b/x.txt': 'x\n',
        'b/y.txt': 'y\n',
        'é.txt': 'e\n',
        'tool.sh': 'echo\n',
        link: 'l\n',
        'same.txt': 's\n',
        'other.txt': 'o\n',
        'tab\tname.txt': 't\n',
      },
      async (root) => {
        await writeFiles(root, {
          'a.txt': 'a2\n',
          'other.txt': 'o2\n', // changed, in no set
          'b/x.txt': 'x2\n',
          'é.txt': 'e2\n',
          'new file.txt': 'n\n',
          'tab\tname.txt': 't2\n',
        });
        await git(root, 'add', 'new file.txt'); // a tracked change (export lists no untracked file)
        await writeFiles(root, { 'untracked.txt': 'u\n' });
        await chmod(path.join(root, 'tool.sh'), 0o755);
        await rm(path.join(root, 'link'));
        await symlink('a.txt', path.join(root, 'link'));
      },
    );
    const sets = [
      ['a.txt', 'b/x.txt', 'link'],
      ['b/x.txt', 'b/y.txt', 'new file.txt', 'same.txt'],
      ['é.txt', 'tab\tname.txt', 'tool.sh'],
      ['same.txt'],
    ];
    // The sets hold every tracked change (the working tree's diff), or few of them (a temporary
    // index with their union).
    const together = await diffPathSetsAgainstBase(root, sha, {
      sets,
      objectsDir,
      trackedChanges: 0,
    });
    const fromUnion = await diffPathSetsAgainstBase(root, sha, {
      sets,
      objectsDir,
      trackedChanges: 1_000,
    });
    expect(fromUnion).toEqual(together);
    const alone = await Promise.all(
      sets.map((paths) => diffPathsAgainstBase(root, sha, { paths, objectsDir })),
    );
    // NotarAI's command for each set: `git diff <base> -- <files>`.
    const notarai = await Promise.all(
      sets.map((paths) =>
        git(root, '-c', 'core.quotepath=false', 'diff', '--no-color', sha, '--', ...paths),
      ),
    );
    expect(together).toEqual(notarai);
    // The temporary-index diff of each set (get_spec_diff's) agrees.
    expect(together).toEqual(alone);
    // What each diff holds, so that equal answers are not both empty.
    expect(together[0]).toMatch(
      /^diff --git a\/a\.txt b\/a\.txt\n[^]*\ndiff --git a\/b\/x\.txt [^]*\ndiff --git a\/link b\/link\n[^]*\ndiff --git a\/link b\/link\n/,
    );
    expect(together[1]).toContain('new file mode');
    expect(together[1]).not.toContain('y.txt');
    expect(together[1]).not.toContain('untracked');
    expect(together.join('')).not.toContain('other.txt');
    expect(together[2]).toContain('diff --git a/é.txt b/é.txt');
    expect(together[2]).toContain('"a/tab\\tname.txt"');
    expect(together[2]).toContain('new mode 100755');
    expect(together[3]).toBe('');
  });

  it('diffs each set alone when a path asked for is gone from the disk', async () => {
    const body = 'the same lines\n'.repeat(20);
    const { root, sha, objectsDir } = await changedRepo(
      { 'old.txt': body, 'c.txt': 'c\n' },
      async (root) => {
        await rm(path.join(root, 'old.txt'));
        await writeFiles(root, { 'moved.txt': body, 'c.txt': 'c2\n' });
      },
    );
    const sets = [['old.txt'], ['moved.txt', 'c.txt']];
    const together = await diffPathSetsAgainstBase(root, sha, {
      sets,
      objectsDir,
      trackedChanges: 0,
    });
    expect(
      await diffPathSetsAgainstBase(root, sha, { sets, objectsDir, trackedChanges: 1_000 }),
    ).toEqual(together);
    expect(together[0]).toContain('deleted file mode');
    expect(together[1]).toContain('new file mode');
    expect(together[1]).not.toContain('rename');
    expect(together).toEqual(
      await Promise.all(
        sets.map((paths) => diffPathsAgainstBase(root, sha, { paths, objectsDir })),
      ),
    );
  });

  it('keeps to the sets when a change no set holds is bigger than the whole diff may be', async () => {
    const { root, sha, objectsDir } = await changedRepo(
      { 'a.txt': 'a\n', 'vendor/big.txt': 'small\n' },
      async (root) => {
        await writeFiles(root, {
          'a.txt': 'a2\n',
          'vendor/big.txt': 'a line of a vendored file\n'.repeat(1_600_000), // ~40 MiB
        });
      },
    );
    const sets = [['a.txt'], ['a.txt']];
    const together = await diffPathSetsAgainstBase(root, sha, {
      sets,
      objectsDir,
      trackedChanges: 2,
    });
    const notarai = await git(root, 'diff', '--no-color', sha, '--', 'a.txt');
    expect(notarai).toContain('+a2');
    expect(together).toEqual([notarai, notarai]);
  });
});
