// Whether a file's content is binary, as the file tools decide it (read_file refuses it, grep
// skips it, get_file_info reports it): a NUL byte in the first 8 KiB, or what isbinaryfile's
// heuristics say of those bytes. The reconciliation engine keeps NotarAI's own rule (a NUL byte
// only; main/reconcile/floor/binary-files.ts), so its answers match NotarAI's.
import { isBinaryFileSync } from 'isbinaryfile';

/** How much of a file's start is looked at. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/** True if `head` (a file's first bytes; only BINARY_SNIFF_BYTES are looked at) is binary. */
export function looksBinary(head: Buffer): boolean {
  if (head.length === 0) return false;
  const sniff = head.subarray(0, BINARY_SNIFF_BYTES);
  if (sniff.includes(0)) return true;
  return isBinaryFileSync(sniff, sniff.length);
}
