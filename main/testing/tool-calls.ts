// Test fixture for the tools that list many files (search_files, grep, directory_tree): a real
// repository with tracked, untracked and ignored files, a binary file, non-ASCII and non-UTF-8
// names, a nested repository, a deleted tracked file, symlinks pointing out, and a tracked
// directory replaced by a symlink to a directory of secrets (git still lists its files from the
// index). Never used by production code.
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { git, makeTempRepo, writeFiles, type TempRepo } from './temp-repo.ts';
import type { ToolDefinition } from '../tools/tool-definition.ts';

const OUTSIDE_SECRET = 'GROVE-OUTSIDE-SECRET-7c41';

/** Bytes of a file name that is not valid UTF-8 ("f\xe9.txt", Latin-1). */
export const LATIN1_NAME = Buffer.from([0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]);

export interface ToolFixture extends TempRepo {
  call(tool: ToolDefinition, args: Record<string, unknown>): Promise<unknown>;
}

export async function makeToolFixture(): Promise<ToolFixture> {
  const repo = await makeTempRepo({
    '.gitignore': 'build/\n*.log\n',
    'src/index.ts': 'export const needle = 1;\nconst other = 2;\n// Needle in caps\n',
    'src/util.ts': 'export function helper() {\n  return "needle";\n}\n',
    'src/deep/nested/x.ts': 'deep needle\n',
    'src/app.test.ts': 'test needle\n',
    'docs/guide.md': '# Guide\n\nFind the needle here.\n',
    '.github/ci.yml': 'name: ci # needle\n',
    'data/blob.bin': Buffer.from([0x00, 0x01, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0xff]),
    'ünïcode/файл.txt': 'юникод needle\n',
    'swap/inner.txt': 'inside before the swap\n',
    'gone.txt': 'deleted needle\n',
  });
  const { root, dir } = repo;
  await writeFiles(dir, {
    'outside/secret.txt': `${OUTSIDE_SECRET} needle\n`,
    'outside/inner.txt': `${OUTSIDE_SECRET} needle\n`,
  });
  await writeFiles(root, {
    'notes/todo.txt': 'untracked needle\n',
    'build/out.js': 'ignored needle\n',
    'app.log': 'ignored needle\n',
  });
  await mkdir(path.join(root, 'bytes'));
  await writeFile(Buffer.concat([Buffer.from(`${root}/bytes/`), LATIN1_NAME]), 'latin needle\n');
  await symlink('../outside', path.join(root, 'link-out'));
  await symlink('../outside/secret.txt', path.join(root, 'link-file'));
  await symlink('src', path.join(root, 'link-in'));
  // A tracked directory replaced by a symlink out: `git ls-files` still lists swap/inner.txt.
  await rm(path.join(root, 'swap'), { recursive: true });
  await symlink('../outside', path.join(root, 'swap'));
  await rm(path.join(root, 'gone.txt'));
  // A nested repository with its own ignore rules.
  const nested = path.join(root, 'nested');
  await mkdir(nested);
  await git(nested, 'init', '-q');
  await writeFiles(nested, {
    '.gitignore': '*.tmp\n',
    'inner.txt': 'nested needle\n',
    'skip.tmp': 'nested ignored needle\n',
  });
  return {
    ...repo,
    call: (tool, args) =>
      tool.handler(args as never, { root, signal: new AbortController().signal }),
  };
}

/** Fails if anything from outside the root shows up in a result. */
export function expectNoLeak(value: unknown): void {
  expect(JSON.stringify(value)).not.toContain(OUTSIDE_SECRET);
}
