// Test fixtures: real git repositories in temporary directories. Used by unit, integration and e2e
// tests alike; never by production code.
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Runs git in `cwd` with a fixed identity and no user or system config. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, {
    cwd,
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Grove Test',
      GIT_AUTHOR_EMAIL: 'test@grove.invalid',
      GIT_COMMITTER_NAME: 'Grove Test',
      GIT_COMMITTER_EMAIL: 'test@grove.invalid',
    },
  });
  return stdout;
}

/** Makes a fresh temporary directory (real path, symlinks resolved). */
export async function makeTempDir(prefix = 'grove-test-'): Promise<string> {
  return realpath(await mkdtemp(path.join(tmpdir(), prefix)));
}

/** Writes files (path relative to root -> content), creating parent directories. */
export async function writeFiles(
  root: string,
  files: Record<string, string | Buffer>,
): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(root, relative);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}

export interface TempRepo {
  /** Parent temp directory: holds the repo and anything a test puts beside it. */
  dir: string;
  /** The repository's main worktree. */
  root: string;
  cleanup(): Promise<void>;
}

/**
 * Creates a git repository on branch `main` with the given files committed.
 * The repo lives at `<dir>/repo` so tests can create siblings (`<dir>/repo-evil`, linked worktrees).
 */
export async function makeTempRepo(files: Record<string, string | Buffer> = {}): Promise<TempRepo> {
  const dir = await makeTempDir();
  const root = path.join(dir, 'repo');
  await mkdir(root);
  await git(root, 'init', '-q', '-b', 'main');
  await writeFiles(root, { 'README.md': '# test repo\n', ...files });
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'initial');
  return { dir, root, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Adds a linked worktree on a new branch at `<repo.dir>/<name>`; returns its path. */
export async function addWorktree(repo: TempRepo, name: string, branch = name): Promise<string> {
  const target = path.join(repo.dir, name);
  await git(repo.root, 'worktree', 'add', '-q', '-b', branch, target);
  return target;
}

/** A valid spec governing `src/**` with one behavior: what most tests of the tools start from. */
export const SRC_SPEC = `schema_version: '0.8'
intent: The app.
artifacts:
  code:
    - path: src/**
behaviors:
  - name: runs
    given: input
    then: output
`;

/** A valid spec named `name` governing `glob`, with one behavior (tests that vary the globs). */
export const specGoverning = (name: string, glob: string): string => `schema_version: '0.8'
intent: ${name}.
behaviors:
  - name: works
    given: a call
    then: an answer
artifacts:
  code:
    - path: ${glob}
`;
