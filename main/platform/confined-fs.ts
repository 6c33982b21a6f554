// The confined file layer: every read, stat, listing and write Grove does in a worktree goes
// through here (docs/security.md). A worktree is untrusted input: committed symlinks, FIFOs,
// devices, huge files and paths swapped between a check and an open can sit anywhere. So:
//   - a path is resolved inside the root by segments (never a string prefix), `.git` refused;
//   - files are opened with O_NOFOLLOW | O_NONBLOCK (a FIFO cannot hang us) and the open handle is
//     checked with fstat (regular files only unless a directory is asked for);
//   - the handle, not the path, is proved to be the file checked: on Linux the kernel's own name
//     for the descriptor (/proc/self/fd/N) must be the checked real path, so nothing swapped in
//     between the check and the open is ever read; elsewhere the path is resolved again and must
//     name the same inode;
//   - reads have a size cap per call;
//   - writes never go through a symlink: each directory on the way is opened with O_NOFOLLOW
//     relative to its verified parent (openat through /proc/self/fd on Linux), the file is written
//     to a temp file in that same directory and renamed over the target (atomic), and a symlink or
//     special file at the target is an error naming it.
// ESLint keeps `node:fs` out of every other module of the worktree process (eslint.config.js).
//
// Path checks and small reads use synchronous calls on purpose: a realpath or stat served from the
// kernel's caches costs a few microseconds of the event loop, while the same call through libuv's
// thread pool costs ~100 µs of main-thread CPU in wake-ups and promise plumbing, which is what
// bounded read_file under load (docs/decisions.md, "Synchronous metadata calls in the sandbox").
// At most SYNC_READ_BUDGET bytes are read synchronously per turn of the event loop, whatever the
// number of files; further reads go through the thread pool (and so yield), so neither a large
// file nor a call reading many files holds the loop (the host's health check would take the
// process for hung).
//
// The layer lives in main/platform/confined-fs/ (types, resolve, descriptors, reads, writes,
// verified directories, listing, probe, directory watches); this module is its one entry: callers import from here.

export type {
  SandboxPath,
  OpenedFile,
  DirectoryEntry,
  OpenedDirectory,
  SandboxFile,
} from './confined-fs/types.ts';
export {
  MAX_PATH_LENGTH,
  isInsideRoot,
  toRelativePosix,
  displayPath,
  shortArgument,
  isGitName,
  resolveInsideRoot,
  type StattedPath,
  statInsideRoot,
  firstFileInRoot,
  resolveDirectoryInsideRoot,
} from './confined-fs/resolve.ts';
export {
  SYNC_READ_BUDGET,
  sandboxFile,
  openFileInsideRoot,
  withDirectoryInsideRoot,
  readFileInsideRoot,
  readHeadInsideRoot,
} from './confined-fs/reads.ts';
export { FILE_OPEN_FLAGS, VerifiedDirectories } from './confined-fs/verified-directories.ts';
export {
  type EntryKind,
  lstatNoFollowInsideRoot,
  entryKindInsideRoot,
  ensureDirectoryInsideRoot,
  writeFileAtomicInsideRoot,
  removeFileInsideRoot,
  lstatEntriesInsideRoot,
  entryKind,
} from './confined-fs/writes.ts';
export type { Stats } from 'node:fs';
export {
  realWorktreeRoot,
  resolvesToItself,
  readDirectoryEntries,
  lstatListed,
  canonicalName,
} from './confined-fs/listing.ts';
export { createFileLayerProbe } from './confined-fs/probe.ts';
export {
  directoryInode,
  watchDirectoryNames,
  listSubdirectories,
  inotifyMaxQueuedEvents,
  inotifyMaxUserWatches,
} from './confined-fs/directory-watch.ts';
