// The git status of one file, from `git status --porcelain=v2 -z` limited to that file (a literal
// pathspec, run in the file's own directory so a nested repository answers for its files).
import path from 'node:path';
import { runGit, splitNul } from './run-git.ts';

export type FileGitState =
  | 'unmodified'
  | 'modified'
  | 'added'
  | 'deleted'
  | 'renamed'
  | 'copied'
  | 'type_changed'
  | 'untracked'
  | 'ignored'
  | 'conflicted';

export interface FileGitStatus {
  state: FileGitState;
  /** The index differs from HEAD for this file (a change is staged). */
  staged: boolean;
  /** The working tree differs from the index (a change is not staged). */
  unstaged: boolean;
}

const STATE_BY_CODE: Record<string, FileGitState> = {
  M: 'modified',
  A: 'added',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type_changed',
};

/** Reads an XY pair from a porcelain v2 record ("1 XY ...", "2 XY ..."). */
function fromPair(x: string, y: string): FileGitStatus {
  const code = x !== '.' ? x : y;
  return {
    state: STATE_BY_CODE[code] ?? 'modified',
    staged: x !== '.',
    unstaged: y !== '.',
  };
}

/**
 * The status of the file at `file` (an absolute, real path). Resolves to null when it is not in a
 * git work tree or git fails.
 */
export async function fileGitStatus(
  file: string,
  options: { ceiling: string; signal?: AbortSignal },
): Promise<FileGitStatus | null> {
  const output = await runGit(
    [
      'status',
      '--porcelain=v2',
      '-z',
      '--ignored=matching',
      '--untracked-files=all',
      '--no-renames',
      '--',
      `:(literal)${path.basename(file)}`,
    ],
    { cwd: path.dirname(file), ceiling: options.ceiling, signal: options.signal },
  );
  if (output.code !== 0) return null;
  const first = splitNul(output.stdout)[0]?.toString('utf8');
  if (first === undefined) return { state: 'unmodified', staged: false, unstaged: false };
  switch (first[0]) {
    case '?':
      return { state: 'untracked', staged: false, unstaged: false };
    case '!':
      return { state: 'ignored', staged: false, unstaged: false };
    case 'u':
      return { state: 'conflicted', staged: false, unstaged: true };
    case '1':
    case '2':
      return fromPair(first[2] ?? '.', first[3] ?? '.');
    default:
      return null;
  }
}
