// checkIgnoredNames against real repositories and a plain directory.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, makeTempRepo, writeFiles, type TempRepo } from '../../testing/temp-repo.ts';
import { checkIgnoredNames } from './check-ignore.ts';

let repo: TempRepo;
let plain: string;

beforeAll(async () => {
  repo = await makeTempRepo({ '.gitignore': '*.log\n:odd*\nvendor/\n' });
  await writeFiles(repo.root, { 'vendor/lib.js': 'x', 'a.log': 'x', ':odd name': 'x' });
  plain = await makeTempDir('grove-plain-');
});

afterAll(async () => {
  await repo.cleanup();
  await rm(plain, { recursive: true, force: true });
});

describe('checkIgnoredNames', () => {
  it('reports the ignored names of a directory', async () => {
    const result = await checkIgnoredNames(
      repo.root,
      ['a.log', 'README.md', ':odd name', 'vendor', 'line\nbreak.log'],
      { ceiling: repo.dir },
    );
    expect(result).toEqual({
      directoryIgnored: false,
      ignored: new Set(['a.log', ':odd name', 'vendor', 'line\nbreak.log']),
    });
  });

  it('says when the directory itself is ignored', async () => {
    const result = await checkIgnoredNames(path.join(repo.root, 'vendor'), ['lib.js'], {
      ceiling: repo.dir,
    });
    expect(result?.directoryIgnored).toBe(true);
  });

  it('answers null outside a repository, and for no names still works', async () => {
    expect(await checkIgnoredNames(plain, ['a.log'], { ceiling: path.dirname(plain) })).toBeNull();
    expect(await checkIgnoredNames(repo.root, [], { ceiling: repo.dir })).toEqual({
      directoryIgnored: false,
      ignored: new Set(),
    });
  });

  it('ignores GIT_DIR and friends inherited from the environment', async () => {
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = path.join(plain, 'not-a-repo');
    try {
      const result = await checkIgnoredNames(repo.root, ['a.log'], { ceiling: repo.dir });
      expect(result?.ignored.has('a.log')).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    }
  });
});
