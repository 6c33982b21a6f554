// Which changed files are binary, so their diff is left out of `get_spec_diff`'s text and they are
// listed in `binary_changes` instead: NotarAI's extension list, and (Grove) any file with a NUL
// byte in its first 8 KiB, git's own rule.
import { readHeadInsideRoot } from '../../platform/confined-fs.ts';

/** NotarAI's list, matched case-insensitively at the end of the path. */
export const BINARY_EXTENSIONS = [
  '.png',
  '.jpg',
  '.jpeg',
  '.gif',
  '.webp',
  '.ico',
  '.pptx',
  '.docx',
  '.xlsx',
  '.pdf',
  '.zip',
  '.tar',
  '.gz',
  '.wasm',
  '.exe',
  '.dll',
  '.so',
  '.dylib',
] as const;

/** Bytes NotarAI sniffs for a NUL. */
export const NOTARAI_SNIFF_BYTES = 8 * 1024;

export function isBinaryByExtension(file: string): boolean {
  const lower = file.toLowerCase();
  return BINARY_EXTENSIONS.some((extension) => lower.endsWith(extension));
}

/**
 * True if the first 8 KiB of a file (a POSIX path relative to the root) hold a NUL byte; false if
 * it is missing or not a regular file inside the worktree (read through the confined layer).
 */
export async function hasNulByte(root: string, relative: string): Promise<boolean> {
  try {
    return (await readHeadInsideRoot(root, relative, NOTARAI_SNIFF_BYTES)).includes(0);
  } catch {
    return false;
  }
}
