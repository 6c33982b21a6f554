// The stat fast path's rule, shared by the engine and its file workers: a recorded (size, mtime,
// inode) -> hash row stands in for reading the file only when all three still match and the file
// was last modified in an earlier second than the row was recorded (git's racy-timestamp rule: a
// write in the same second as the recording could keep size and mtime on coarse clocks).

/** What Grove's stat table remembers about one file. */
export interface StatRow {
  path: string;
  size: number;
  mtimeMs: number;
  ino: number;
  hash: string;
  /** Wall clock (ms) read just before the file was stat'ed and hashed. */
  recordedMs: number;
}

/** True when `row` can stand in for hashing a file that now has this size, mtime and inode. */
export function statRowValid(
  row: Omit<StatRow, 'path'> | undefined,
  size: number,
  mtimeMs: number,
  ino: number,
): boolean {
  if (!row || row.size !== size || row.mtimeMs !== mtimeMs || row.ino !== ino) return false;
  return Math.floor(mtimeMs / 1000) < Math.floor(row.recordedMs / 1000);
}
