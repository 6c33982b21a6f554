// Grove's own scratch space: a private temporary directory (mode 0700, under the OS temp dir,
// never inside a worktree) that lives for one piece of work and is removed afterwards, whatever
// happens. The one place outside confined-fs.ts where the worktree process creates files.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Runs `use` with a fresh private temp directory (`<tmp>/<prefix>XXXXXX`, with the empty
 * `subdirectories` made), then removes it.
 */
export async function withScratchDirectory<T>(
  prefix: string,
  subdirectories: readonly string[],
  use: (directory: string) => Promise<T>,
): Promise<T> {
  const directory = await mkdtemp(path.join(tmpdir(), prefix));
  try {
    for (const name of subdirectories) await mkdir(path.join(directory, name));
    return await use(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
