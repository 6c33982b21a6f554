// The confined layer's shapes: a checked path, an open file or directory, a directory entry. Their
// own module, so the parts that produce them (resolve, reads, descriptors) import no one another's
// types in a circle.
import type { Dirent, Stats } from 'node:fs';

/** An open regular file, read-only: what the file tools read through. */
export interface SandboxFile {
  readonly fd: number;
  /** Reads into `buffer` at `offset` up to `length` bytes from `position`. */
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  /** Closes the descriptor; later calls do nothing. */
  close(): Promise<void>;
}

/** A path that has been checked: it exists, and its real path is the root or under it. */
export interface SandboxPath {
  /** Real absolute path (symlinks resolved), at or under the root. */
  readonly realPath: string;
  /** POSIX path relative to the root; '.' for the root itself. */
  readonly relativePath: string;
}

export interface OpenedFile extends SandboxPath {
  /** Open read-only file; the caller must close it. */
  readonly handle: SandboxFile;
  /** fstat of the handle (a regular file). */
  readonly stats: Stats;
}

/** One directory entry. */
export interface DirectoryEntry {
  /** The name decoded as UTF-8 (bytes that are not valid UTF-8 become U+FFFD). */
  readonly name: string;
  /** The name's bytes as stored on disk. */
  readonly rawName: Buffer;
  /** Type as reported by readdir (never follows a symlink). */
  readonly dirent: Dirent<Buffer>;
}

export interface OpenedDirectory extends SandboxPath {
  /** Raw entries, `.git` included: filtering is the caller's job. */
  readonly entries: DirectoryEntry[];
  /** lstat of an entry (never follows a symlink); undefined if it vanished meanwhile. */
  lstatEntry(entry: DirectoryEntry): Promise<Stats | undefined>;
}
