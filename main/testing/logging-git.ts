// A `git` that writes each command line it is given to a log, then runs the real git: put its
// directory first on PATH (the git runner passes PATH on) to count what a run asks git for.
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { makeTempDir } from './temp-repo.ts';

export interface LoggingGit {
  /** PATH with the logging git's directory first. */
  path: string;
  /** The command lines git was given so far (its own `-c` options included), in order. */
  runs: () => Promise<string[]>;
}

export async function makeLoggingGit(): Promise<LoggingGit> {
  const bin = await makeTempDir('grove-logging-git-');
  const log = path.join(bin, 'runs.log');
  await writeFile(log, '');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  await writeFile(
    path.join(bin, 'git'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realGit}' "$@"\n`,
    { mode: 0o755 },
  );
  return {
    path: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
    runs: async () => (await readFile(log, 'utf8')).split('\n').filter((line) => line !== ''),
  };
}
