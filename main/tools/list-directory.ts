// The list_directory tool: one directory's entries (name, path, type, size), directories first,
// without `.git` and without what git ignores. Owns the entry cap and sorting; the sandbox opens
// the directory and git (main/platform/git/check-ignore.ts) decides what is ignored.
import path from 'node:path';
import { z } from 'zod';
import { checkIgnoredNames } from '../platform/git/check-ignore.ts';
import {
  isGitName,
  withDirectoryInsideRoot,
  type DirectoryEntry,
} from '../platform/confined-fs.ts';
import { parseToolArguments } from './tool-arguments.ts';
import { UserError } from '../platform/errors.ts';
import { defineTool, readOnlyLocal } from './tool-definition.ts';

/** Most entries returned by one call; the rest are counted in total_entries. */
export const MAX_LIST_ENTRIES = 1000;

const entryTypes = ['file', 'directory', 'symlink', 'other'] as const;
type EntryType = (typeof entryTypes)[number];

const inputSchema = z.strictObject({
  path: z
    .string()
    .default('.')
    .describe(
      'Directory to list, relative to the worktree root with "/" separators; "." (the default) ' +
        'is the root. An absolute path is accepted only if it lies inside the worktree.',
    ),
});

const entrySchema = z.object({
  name: z.string().describe('File name within the directory.'),
  path: z.string().describe('POSIX path relative to the worktree root; pass it to the file tools.'),
  type: z
    .enum(entryTypes)
    .describe(
      'file, directory, symlink (not followed: it may point anywhere, and reading through it is ' +
        'refused if it points outside the worktree) or other (FIFO, socket, device).',
    ),
  size: z.number().int().optional().describe('Size in bytes (files only).'),
});

const outputSchema = z.object({
  path: z
    .string()
    .describe('The directory listed: POSIX path relative to the worktree root ("." for the root).'),
  entries: z
    .array(entrySchema)
    .describe('Directories first, then everything else, each group sorted by name.'),
  total_entries: z
    .number()
    .int()
    .describe('Entries shown plus those left out by the cap (ignored entries not counted).'),
  truncated: z
    .boolean()
    .describe(`True if there were more than ${MAX_LIST_ENTRIES} entries and the rest were cut.`),
  ignored_entries: z
    .number()
    .int()
    .describe(
      'Entries hidden because git ignores them (.gitignore, .git/info/exclude). They can still ' +
        'be read by path. Inside a directory that is itself ignored, nothing is hidden.',
    ),
});

type ListDirectoryArgs = z.input<typeof inputSchema>;
export type ListDirectoryResult = z.infer<typeof outputSchema>;
type Entry = z.infer<typeof entrySchema>;

function typeOf({ dirent }: DirectoryEntry): EntryType | undefined {
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isFile()) return 'file';
  if (dirent.isSymbolicLink()) return 'symlink';
  if (dirent.isFIFO() || dirent.isSocket() || dirent.isCharacterDevice()) return 'other';
  if (dirent.isBlockDevice()) return 'other';
  return undefined; // the file system did not say: lstat decides
}

function compareEntries(a: Entry, b: Entry): number {
  const aDirectory = a.type === 'directory' ? 0 : 1;
  const bDirectory = b.type === 'directory' ? 0 : 1;
  if (aDirectory !== bDirectory) return aDirectory - bDirectory;
  if (a.name === b.name) return 0;
  return a.name < b.name ? -1 : 1;
}

async function listDirectory(rawArgs: ListDirectoryArgs, root: string, signal: AbortSignal) {
  const args = parseToolArguments('list_directory', inputSchema, rawArgs);
  return withDirectoryInsideRoot(root, args.path, async (directory) => {
    const visible = directory.entries.filter((entry) => !isGitName(entry.name));
    const ignore = await checkIgnoredNames(
      directory.realPath,
      visible.map((entry) => entry.name),
      { ceiling: path.dirname(root), signal },
    );
    if (signal.aborted) throw new UserError('list_directory was cancelled');
    const hidden = ignore && !ignore.directoryIgnored ? ignore.ignored : new Set<string>();
    const shown = visible.filter((entry) => !hidden.has(entry.name));

    const prefix = directory.relativePath === '.' ? '' : `${directory.relativePath}/`;
    const listed = await Promise.all(
      shown.map(async (raw): Promise<{ raw: DirectoryEntry; entry: Entry }> => {
        let type = typeOf(raw);
        if (type === undefined) {
          const stats = await directory.lstatEntry(raw);
          if (stats?.isDirectory()) type = 'directory';
          else if (stats?.isFile()) type = 'file';
          else if (stats?.isSymbolicLink()) type = 'symlink';
          else type = 'other';
        }
        return { raw, entry: { name: raw.name, path: prefix + raw.name, type } };
      }),
    );
    listed.sort((a, b) => compareEntries(a.entry, b.entry));
    const page = listed.slice(0, MAX_LIST_ENTRIES);
    await Promise.all(
      page.map(async ({ raw, entry }) => {
        if (entry.type !== 'file') return;
        const stats = await directory.lstatEntry(raw);
        if (stats?.isFile()) entry.size = stats.size;
      }),
    );
    const result: ListDirectoryResult = {
      path: directory.relativePath,
      entries: page.map(({ entry }) => entry),
      total_entries: listed.length,
      truncated: listed.length > page.length,
      ignored_entries: visible.length - shown.length,
    };
    return result;
  });
}

export const listDirectoryTool = defineTool({
  name: 'list_directory',
  title: 'List directory',
  description:
    'List one directory of the worktree (read-only, not recursive): each entry with its name, ' +
    'path relative to the worktree root, type (file, directory, symlink, other) and size for ' +
    'files; directories first, then by name. Entries ignored by git (.gitignore, ' +
    '.git/info/exclude) and .git itself are left out. Symlinks are listed, never followed. ' +
    `At most ${MAX_LIST_ENTRIES} entries per call (truncated: true beyond that). Refuses paths ` +
    'outside the worktree, symlinks pointing outside it, and anything inside .git.',
  inputSchema,
  outputSchema,
  annotations: readOnlyLocal,
  handler: (args, ctx) => listDirectory(args, ctx.root, ctx.signal),
});
