// Which changed files are binary, so their diff is left out of `get_spec_diff`'s text and they are
// listed in `binary_changes` instead: NotarAI's extension list, and (Grove) any file with a NUL
// byte in its first 8 KiB, git's own rule.
import { open } from 'node:fs/promises';

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

/** Bytes sniffed for a NUL. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

export function isBinaryByExtension(file: string): boolean {
  const lower = file.toLowerCase();
  return BINARY_EXTENSIONS.some((extension) => lower.endsWith(extension));
}

/** True if the file's first 8 KiB hold a NUL byte; false if it is unreadable or missing. */
export async function hasNulByte(absolute: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(absolute, 'r');
  } catch {
    return false;
  }
  try {
    const buffer = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}
