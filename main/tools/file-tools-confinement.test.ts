// Escape attempts against the sandbox, through every tool that takes a path (each entry of
// read_multiple_files too), in a real repository with secrets beside it: every attempt must be
// refused with a UserError (or a per-entry error) naming the reason, and no secret (file content or
// outside file name) may appear in anything a tool returns.
import { execFile } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addWorktree, git, makeTempRepo, writeFiles, type TempRepo } from '../testing/temp-repo.ts';
import { directoryTreeTool } from './directory-tree.ts';
import { getFileInfoTool } from './get-file-info.ts';
import { grepTool } from './grep.ts';
import { listDirectoryTool } from './list-directory.ts';
import { readFileTool } from './read-file.ts';
import { readMultipleFilesTool } from './read-multiple-files.ts';
import { searchFilesTool } from './search-files.ts';
import {
  MAX_PATH_LENGTH,
  SYNC_READ_BUDGET,
  isInsideRoot,
  openFileInsideRoot,
  resolveInsideRoot,
  toRelativePosix,
} from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';
import { type ToolDefinition } from './tool-definition.ts';

const SECRET = 'GROVE-OUTSIDE-SECRET-5d1e0c7b';
const OUTSIDE_NAME = 'outside-only-entry-9f2a.txt';

let repo: TempRepo;
let worktree: string;

async function call(tool: ToolDefinition, args: unknown, root = repo.root): Promise<unknown> {
  return tool.handler(args as never, { root, signal: new AbortController().signal });
}

beforeAll(async () => {
  repo = await makeTempRepo({
    'src/index.ts': 'export const inside = true;\n',
    'sub/deep/file.txt': 'deep inside\n',
  });
  const { dir, root } = repo;
  // Secrets beside the repository.
  await writeFiles(dir, {
    'outside-secret.txt': `${SECRET}\n`,
    [`outside-dir/secret.txt`]: `${SECRET}\n`,
    [`outside-dir/${OUTSIDE_NAME}`]: `${SECRET}\n`,
    'repo-evil/secret.txt': `${SECRET}\n`,
    [`repo-evil/${OUTSIDE_NAME}`]: `${SECRET}\n`,
  });
  await git(root, 'config', 'grove.secret', SECRET); // .git/config now holds the secret
  await writeFile(path.join(root, '.git', 'description'), `${SECRET}\n`);
  worktree = await addWorktree(repo, 'wt');

  const links: Record<string, string> = {
    'link-out-file': '../outside-secret.txt',
    'link-out-abs': path.join(dir, 'outside-secret.txt'),
    'link-out-dir': '../outside-dir',
    'chain-1': 'chain-2',
    'chain-2': 'sub/chain-3',
    'sub/chain-3': '../../outside-secret.txt',
    'link-parent': '..',
    'link-evil': '../repo-evil',
    'link-wt': '../wt',
    'link-root': '/',
    'link-etc': '/etc',
    'dangling-out': path.join(dir, 'no-such-outside-file'),
    'dangling-chain': 'dangling-out',
    'sub/link-up2': '../..',
    'link-git': '.git',
    'link-git-config': '.git/config',
    'loop-a': 'loop-b',
    'loop-b': 'loop-a',
    'link-in': 'sub/deep/file.txt',
  };
  for (const [name, target] of Object.entries(links)) {
    await symlink(target, path.join(root, name));
  }
  await symlink(root, path.join(dir, 'alias')); // another spelling of the root
});

afterAll(async () => {
  await repo.cleanup();
});

type Reason =
  | 'dotdot'
  | 'absolute'
  | 'symlink'
  | 'nul'
  | 'git'
  | 'missing'
  | 'long'
  | 'loop'
  | 'type'
  | 'empty';

const reasons: Record<Reason, RegExp> = {
  dotdot: /path escapes the worktree root with "\.\."/,
  absolute: /absolute path is outside the worktree root/,
  symlink: /outside the worktree root through a symbolic link/,
  nul: /NUL byte/,
  git: /\.git.*is not readable/,
  missing: /no such file or directory in the worktree/,
  long: /too long/,
  loop: /too many levels of symbolic links/,
  type: /invalid arguments|must be a string/,
  empty: /path is empty|invalid arguments/,
};

interface EscapeCase {
  label: string;
  /** The path argument, computed once the fixture exists. */
  path: () => unknown;
  reason: Reason;
  /** Serve the linked worktree instead of the main one. */
  inWorktree?: boolean;
}

const attempts: EscapeCase[] = [
  // `..` in its many spellings
  { label: '..', path: () => '..', reason: 'dotdot' },
  { label: '../', path: () => '../', reason: 'dotdot' },
  { label: '../.', path: () => '../.', reason: 'dotdot' },
  { label: '..//', path: () => '..//', reason: 'dotdot' },
  { label: '../outside-secret.txt', path: () => '../outside-secret.txt', reason: 'dotdot' },
  { label: '../../etc/passwd', path: () => '../../etc/passwd', reason: 'dotdot' },
  {
    label: 'deep ../ chain to /etc/passwd',
    path: () => '../'.repeat(30) + 'etc/passwd',
    reason: 'dotdot',
  },
  { label: 'a/../../x', path: () => 'a/../../x', reason: 'dotdot' },
  {
    label: 'src/../../outside-secret.txt',
    path: () => 'src/../../outside-secret.txt',
    reason: 'dotdot',
  },
  { label: './../', path: () => './../', reason: 'dotdot' },
  { label: './../outside-secret.txt', path: () => './../outside-secret.txt', reason: 'dotdot' },
  {
    label: 'sub/deep/../../../outside-secret.txt',
    path: () => 'sub/deep/../../../outside-secret.txt',
    reason: 'dotdot',
  },
  {
    label: '../repo/README.md (out and back in)',
    path: () => '../repo/README.md',
    reason: 'dotdot',
  },
  {
    label: '../repo-evil/secret.txt (sibling sharing the prefix)',
    path: () => '../repo-evil/secret.txt',
    reason: 'dotdot',
  },
  { label: '../repo-evil (sibling directory)', path: () => '../repo-evil', reason: 'dotdot' },
  { label: '../wt (sibling worktree)', path: () => '../wt', reason: 'dotdot' },
  { label: '~/../.. ', path: () => '~/../..', reason: 'dotdot' },
  // backslashes count as separators for `..`
  { label: '..\\outside-secret.txt', path: () => '..\\outside-secret.txt', reason: 'dotdot' },
  {
    label: 'src\\..\\..\\outside-secret.txt',
    path: () => 'src\\..\\..\\outside-secret.txt',
    reason: 'dotdot',
  },
  { label: '..\\..\\etc\\passwd', path: () => '..\\..\\etc\\passwd', reason: 'dotdot' },
  // absolute paths outside the root
  { label: '/etc/passwd', path: () => '/etc/passwd', reason: 'absolute' },
  { label: '/', path: () => '/', reason: 'absolute' },
  { label: '//etc/passwd', path: () => '//etc/passwd', reason: 'absolute' },
  { label: '/../../etc/passwd', path: () => '/../../etc/passwd', reason: 'absolute' },
  {
    label: 'absolute outside secret',
    path: () => path.join(repo.dir, 'outside-secret.txt'),
    reason: 'absolute',
  },
  {
    label: 'absolute <root>/../outside-secret.txt',
    path: () => `${repo.root}/../outside-secret.txt`,
    reason: 'absolute',
  },
  {
    label: 'absolute sibling <root>-evil/secret.txt',
    path: () => `${repo.root}-evil/secret.txt`,
    reason: 'absolute',
  },
  {
    label: 'absolute sibling directory <root>-evil',
    path: () => `${repo.root}-evil`,
    reason: 'absolute',
  },
  { label: 'absolute temp parent directory', path: () => repo.dir, reason: 'absolute' },
  {
    label: 'absolute missing outside file',
    path: () => path.join(repo.dir, 'no-such-file'),
    reason: 'absolute',
  },
  {
    label: 'absolute via alias, then ..',
    path: () => `${repo.dir}/alias/../outside-secret.txt`,
    reason: 'absolute',
  },
  // symlinks pointing out
  {
    label: 'symlink to an outside file (relative target)',
    path: () => 'link-out-file',
    reason: 'symlink',
  },
  {
    label: 'symlink to an outside file (absolute target)',
    path: () => 'link-out-abs',
    reason: 'symlink',
  },
  {
    label: 'symlink to an outside file, trailing slash',
    path: () => 'link-out-file/',
    reason: 'symlink',
  },
  { label: 'symlink to an outside directory', path: () => 'link-out-dir', reason: 'symlink' },
  {
    label: 'symlink to an outside directory, trailing slash',
    path: () => 'link-out-dir/',
    reason: 'symlink',
  },
  { label: 'symlink to an outside directory, /.', path: () => 'link-out-dir/.', reason: 'symlink' },
  {
    label: 'file through a symlinked outside directory',
    path: () => 'link-out-dir/secret.txt',
    reason: 'symlink',
  },
  {
    label: 'missing file through a symlinked outside directory',
    path: () => 'link-out-dir/nope.txt',
    reason: 'symlink',
  },
  { label: 'chain of symlinks ending outside', path: () => 'chain-1', reason: 'symlink' },
  { label: 'symlink to ..', path: () => 'link-parent', reason: 'symlink' },
  {
    label: 'file through a symlink to ..',
    path: () => 'link-parent/outside-secret.txt',
    reason: 'symlink',
  },
  {
    label: 'sibling through a symlink to ..',
    path: () => 'link-parent/repo-evil/secret.txt',
    reason: 'symlink',
  },
  {
    label: 'symlink to the prefix-sharing sibling',
    path: () => 'link-evil/secret.txt',
    reason: 'symlink',
  },
  { label: 'symlink to the sibling worktree', path: () => 'link-wt/README.md', reason: 'symlink' },
  { label: 'symlink to /', path: () => 'link-root/etc/passwd', reason: 'symlink' },
  { label: 'symlink to /etc', path: () => 'link-etc', reason: 'symlink' },
  { label: 'dangling symlink to an outside path', path: () => 'dangling-out', reason: 'symlink' },
  { label: 'dangling chain to an outside path', path: () => 'dangling-chain', reason: 'symlink' },
  {
    label: 'nested relative symlink climbing out',
    path: () => 'sub/link-up2/outside-secret.txt',
    reason: 'symlink',
  },
  {
    label: 'absolute path inside the root through a symlink out',
    path: () => `${repo.root}/link-out-file`,
    reason: 'symlink',
  },
  { label: 'symlink loop', path: () => 'loop-a', reason: 'loop' },
  // NUL bytes
  { label: 'NUL after a name', path: () => 'README.md\0', reason: 'nul' },
  { label: 'NUL then ../', path: () => 'README.md\0/../../outside-secret.txt', reason: 'nul' },
  { label: 'only a NUL', path: () => '\0', reason: 'nul' },
  // .git
  { label: '.git', path: () => '.git', reason: 'git' },
  { label: '.git/', path: () => '.git/', reason: 'git' },
  { label: './.git', path: () => './.git', reason: 'git' },
  { label: '.git/config', path: () => '.git/config', reason: 'git' },
  { label: '.git/HEAD', path: () => '.git/HEAD', reason: 'git' },
  { label: '.git/description', path: () => '.git/description', reason: 'git' },
  { label: '.git/../README.md', path: () => '.git/../README.md', reason: 'git' },
  { label: 'sub/../.git/config', path: () => 'sub/../.git/config', reason: 'git' },
  { label: '.GIT/config (case variant)', path: () => '.GIT/config', reason: 'git' },
  { label: '.git. (Windows alias)', path: () => '.git./config', reason: 'git' },
  { label: '.git\\config', path: () => '.git\\config', reason: 'git' },
  { label: 'absolute <root>/.git/config', path: () => `${repo.root}/.git/config`, reason: 'git' },
  { label: 'symlink to .git', path: () => 'link-git', reason: 'git' },
  { label: 'file through a symlink to .git', path: () => 'link-git/config', reason: 'git' },
  { label: 'symlink to .git/config', path: () => 'link-git-config', reason: 'git' },
  { label: "linked worktree's .git file", path: () => '.git', reason: 'git', inWorktree: true },
  { label: "linked worktree's ./.git file", path: () => './.git', reason: 'git', inWorktree: true },
  {
    label: "linked worktree's .git, absolute",
    path: () => `${worktree}/.git`,
    reason: 'git',
    inWorktree: true,
  },
  {
    label: 'linked worktree: main repo via ..',
    path: () => '../repo/.git/config',
    reason: 'dotdot',
    inWorktree: true,
  },
  {
    label: 'linked worktree: main repo absolute',
    path: () => `${repo.root}/README.md`,
    reason: 'absolute',
    inWorktree: true,
  },
  // encodings and look-alikes are plain (non-existent) names, never decoded
  {
    label: '%2e%2e/outside-secret.txt',
    path: () => '%2e%2e/outside-secret.txt',
    reason: 'missing',
  },
  { label: '..%2foutside-secret.txt', path: () => '..%2foutside-secret.txt', reason: 'missing' },
  {
    label: '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    path: () => '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    reason: 'missing',
  },
  {
    label: '%252e%252e/ (double-encoded)',
    path: () => '%252e%252e/outside-secret.txt',
    reason: 'missing',
  },
  { label: '%2egit/config', path: () => '%2egit/config', reason: 'missing' },
  { label: 'file:///etc/passwd', path: () => 'file:///etc/passwd', reason: 'missing' },
  { label: '~/.ssh/id_rsa', path: () => '~/.ssh/id_rsa', reason: 'missing' },
  { label: '~', path: () => '~', reason: 'missing' },
  { label: '... (three dots is a name)', path: () => '.../outside-secret.txt', reason: 'missing' },
  { label: 'two-dot leader ‥', path: () => '\u2025/outside-secret.txt', reason: 'missing' },
  { label: 'one-dot leaders ․․', path: () => '\u2024\u2024/outside-secret.txt', reason: 'missing' },
  {
    label: 'fullwidth dots ．．',
    path: () => '\uff0e\uff0e/outside-secret.txt',
    reason: 'missing',
  },
  { label: 'fullwidth solidus ..／', path: () => '..\uff0foutside-secret.txt', reason: 'missing' },
  { label: 'division slash ..∕', path: () => '..\u2215outside-secret.txt', reason: 'missing' },
  { label: 'zero-width space .​.', path: () => '.\u200b./outside-secret.txt', reason: 'missing' },
  { label: 'zero-width joiner in .git', path: () => '.gi\u200dt/config', reason: 'missing' },
  // sizes and types
  {
    label: `path longer than ${MAX_PATH_LENGTH} characters`,
    path: () => 'a/'.repeat(3000),
    reason: 'long',
  },
  { label: 'long ../ chain', path: () => '../'.repeat(2000) + 'etc/passwd', reason: 'long' },
  {
    label: 'a single name longer than the file system allows',
    path: () => 'x'.repeat(300),
    reason: 'long',
  },
  { label: 'empty string', path: () => '', reason: 'empty' },
  { label: 'number', path: () => 42, reason: 'type' },
  { label: 'null', path: () => null, reason: 'type' },
  { label: 'array', path: () => ['..'], reason: 'type' },
  { label: 'object', path: () => ({ toString: () => '../outside-secret.txt' }), reason: 'type' },
];

/** A tool and how to put the attempted path into its arguments. */
type PathArgument = [string, ToolDefinition, (path: unknown) => Record<string, unknown>];

const tools: PathArgument[] = [
  ['read_file', readFileTool, (path) => ({ path })],
  ['list_directory', listDirectoryTool, (path) => ({ path })],
  ['get_file_info', getFileInfoTool, (path) => ({ path })],
  ['directory_tree', directoryTreeTool, (path) => ({ path })],
  ['search_files', searchFilesTool, (path) => ({ path, patterns: ['**'] })],
  ['grep', grepTool, (path) => ({ path, pattern: 'GROVE|root', ignore_case: true })],
];

/** Everything a tool produced, result or error, as one string to search for leaks. */
async function outcome(tool: ToolDefinition, args: unknown, root: string): Promise<unknown> {
  try {
    return { result: await call(tool, args, root) };
  } catch (error) {
    return { error };
  }
}

function assertNoLeak(value: unknown): void {
  const text = JSON.stringify(value, (_key, v: unknown) =>
    v instanceof Error ? { name: v.name, message: v.message } : v,
  );
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(OUTSIDE_NAME);
  expect(text).not.toContain('root:x:0:0'); // /etc/passwd
}

describe.each(tools)('%s refuses escape attempts', (_name, tool, args) => {
  it.each(attempts)('$label', async ({ path: makePath, reason, inWorktree }) => {
    const root = inWorktree ? worktree : repo.root;
    const result = await outcome(tool, args(makePath()), root);
    assertNoLeak(result);
    expect(result).toHaveProperty('error');
    const { error } = result as { error: unknown };
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toMatch(reasons[reason]);
  });
});

describe('read_multiple_files refuses each escaping entry on its own', () => {
  it.each(attempts)('$label', async ({ path: makePath, reason, inWorktree }) => {
    const root = inWorktree ? worktree : repo.root;
    const attempt = makePath();
    const result = await outcome(readMultipleFilesTool, { paths: ['README.md', attempt] }, root);
    assertNoLeak(result);
    if ('error' in (result as object)) {
      // Only a path that is not a string at all fails the whole call (schema validation).
      expect(typeof attempt).not.toBe('string');
      expect((result as { error: UserError }).error.message).toMatch(reasons[reason]);
      return;
    }
    const { files } = (result as { result: { files: { content?: string; error?: string }[] } })
      .result;
    expect(files[0]).toMatchObject({ content: '# test repo\n' });
    expect(files[1]?.content).toBeUndefined();
    expect(files[1]?.error).toMatch(reasons[reason]);
  });
});

describe('escape attempts also fail with range arguments (read_file)', () => {
  it.each(attempts.filter((attempt) => attempt.reason === 'symlink'))(
    '$label with head: 1',
    async ({ path: makePath }) => {
      const result = await outcome(readFileTool, { path: makePath(), head: 1 }, repo.root);
      assertNoLeak(result);
      expect((result as { error: unknown }).error).toBeInstanceOf(UserError);
    },
  );
});

describe('controls: the same fixture serves what is inside', () => {
  it('reads inside files, absolute inside paths and inside symlinks', async () => {
    const readme = { path: 'README.md', content: '# test repo\n' };
    expect(await call(readFileTool, { path: 'README.md' })).toMatchObject(readme);
    expect(await call(readFileTool, { path: './sub/../README.md' })).toMatchObject(readme);
    expect(await call(readFileTool, { path: `${repo.root}/README.md` })).toMatchObject(readme);
    expect(await call(readFileTool, { path: `${repo.dir}/alias/README.md` })).toMatchObject(readme);
    expect(await call(readFileTool, { path: 'link-in' })).toMatchObject({
      path: 'sub/deep/file.txt',
      content: 'deep inside\n',
    });
    expect(await call(readFileTool, { path: 'README.md', head: 1 }, worktree)).toMatchObject(
      readme,
    );
  });

  it('lists the root with the escaping symlinks shown as symlinks only', async () => {
    const listing = (await call(listDirectoryTool, { path: '.' })) as {
      entries: { name: string; type: string; size?: number }[];
    };
    assertNoLeak(listing);
    const byName = new Map(listing.entries.map((entry) => [entry.name, entry]));
    for (const name of ['link-out-file', 'link-out-dir', 'link-parent', 'link-git', 'chain-1']) {
      expect(byName.get(name)).toEqual({ name, path: name, type: 'symlink' });
    }
    expect(byName.has('.git')).toBe(false);
    expect(byName.get('src')?.type).toBe('directory');
  });

  it('lists the linked worktree without its .git file', async () => {
    const listing = (await call(listDirectoryTool, {}, worktree)) as {
      entries: { name: string }[];
    };
    expect(listing.entries.map((entry) => entry.name)).toEqual(['src', 'sub', 'README.md']);
  });
});

describe('sandbox helpers', () => {
  it('compares by path segments, not string prefixes', () => {
    expect(isInsideRoot('/x/repo', '/x/repo')).toBe(true);
    expect(isInsideRoot('/x/repo', '/x/repo/a/b')).toBe(true);
    expect(isInsideRoot('/x/repo', '/x/repo/..a')).toBe(true);
    expect(isInsideRoot('/x/repo', '/x/repo-evil')).toBe(false);
    expect(isInsideRoot('/x/repo', '/x/repo-evil/a')).toBe(false);
    expect(isInsideRoot('/x/repo', '/x')).toBe(false);
    expect(isInsideRoot('/x/repo', '/')).toBe(false);
    expect(toRelativePosix('/x/repo', '/x/repo')).toBe('.');
    expect(toRelativePosix('/x/repo', '/x/repo/a/b')).toBe('a/b');
  });

  it('resolves to the real path and a POSIX relative path', async () => {
    await expect(resolveInsideRoot(repo.root, 'link-in')).resolves.toEqual({
      realPath: path.join(repo.root, 'sub', 'deep', 'file.txt'),
      relativePath: 'sub/deep/file.txt',
    });
    await expect(resolveInsideRoot(repo.root, '.')).resolves.toEqual({
      realPath: repo.root,
      relativePath: '.',
    });
    await expect(resolveInsideRoot(repo.root, 'sub/deep/')).resolves.toMatchObject({
      relativePath: 'sub/deep',
    });
  });

  it('refuses a trailing slash on a file', async () => {
    await expect(resolveInsideRoot(repo.root, 'README.md/')).rejects.toThrow(/not a directory/);
  });

  it('opens a file and hands back its handle', async () => {
    const opened = await openFileInsideRoot(repo.root, 'sub/deep/file.txt');
    try {
      expect(opened.stats.isFile()).toBe(true);
      const buffer = Buffer.alloc(64);
      const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, 0);
      expect(buffer.subarray(0, bytesRead).toString()).toBe('deep inside\n');
    } finally {
      await opened.handle.close();
    }
  });

  it('reads a file past the synchronous read budget whole and in order', async () => {
    const content = Buffer.from(
      Array.from({ length: 60_000 }, (_, line) => `line ${line}\n`).join(''),
    );
    expect(content.length).toBeGreaterThan(SYNC_READ_BUDGET * 2);
    await writeFile(path.join(repo.root, 'big.txt'), content);
    const opened = await openFileInsideRoot(repo.root, 'big.txt');
    const chunks: Buffer[] = [];
    try {
      for (let position = 0; position < opened.stats.size;) {
        const chunk = Buffer.alloc(48 * 1024);
        const { bytesRead } = await opened.handle.read(chunk, 0, chunk.length, position);
        if (bytesRead === 0) break;
        chunks.push(chunk.subarray(0, bytesRead));
        position += bytesRead;
      }
    } finally {
      await opened.handle.close();
      await opened.handle.close(); // a second close is harmless
    }
    expect(Buffer.concat(chunks).equals(content)).toBe(true);
  });

  it('lets other work run while a call reads more than the synchronous budget', async () => {
    const names = Array.from({ length: 12 }, (_, index) => `many/part-${index}.bin`);
    await mkdir(path.join(repo.root, 'many'), { recursive: true });
    for (const name of names)
      await writeFile(path.join(repo.root, name), Buffer.alloc(64 * 1024, 1));
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = true));
    const ranBeforeEachRead: boolean[] = [];
    for (const name of names) {
      const opened = await openFileInsideRoot(repo.root, name);
      try {
        ranBeforeEachRead.push(otherWorkRan);
        await opened.handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, 0);
      } finally {
        await opened.handle.close();
      }
    }
    // 12 x 64 KiB is three times the budget: the loop got a turn before the reading ended.
    expect(ranBeforeEachRead.at(-1)).toBe(true);
  });

  it('refuses FIFOs without blocking', async () => {
    await mkdir(path.join(repo.root, 'special'), { recursive: true });
    await promisify(execFile)('mkfifo', [path.join(repo.root, 'special', 'pipe')]);
    await expect(openFileInsideRoot(repo.root, 'special/pipe')).rejects.toThrow(
      /not a regular file/,
    );
  });
});
