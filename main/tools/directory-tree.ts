// The directory_tree tool: the tree of files under a directory, depth-first, as a flat list of
// entries with their depth (directories first, then by name), built from the files git sees
// (worktree-files.ts) so .gitignore is respected. Owns the depth limit, the entry cap and the
// per-directory file counts.
import { z } from 'zod';
import { lstatListed, resolveDirectoryInsideRoot } from '../platform/confined-fs.ts';
import { parseToolArguments } from './tool-arguments.ts';
import { UserError } from '../platform/errors.ts';
import { defineTool, readOnlyLocal } from './tool-definition.ts';
import { listWorktreeFiles } from './worktree-files.ts';

export const DEFAULT_TREE_DEPTH = 3;
export const MAX_TREE_DEPTH = 20;
export const DEFAULT_TREE_ENTRIES = 500;
export const MAX_TREE_ENTRIES = 5000;

const inputSchema = z.strictObject({
  path: z
    .string()
    .default('.')
    .describe('Directory at the top of the tree, relative to the worktree root ("." is the root).'),
  max_depth: z
    .number()
    .int()
    .min(1)
    .max(MAX_TREE_DEPTH)
    .default(DEFAULT_TREE_DEPTH)
    .describe(
      `Levels shown below path (1 = its direct entries; default ${DEFAULT_TREE_DEPTH}). Deeper ` +
        'directories are still counted in file_count.',
    ),
  max_entries: z
    .number()
    .int()
    .min(1)
    .max(MAX_TREE_ENTRIES)
    .default(DEFAULT_TREE_ENTRIES)
    .describe(`Most entries returned (default ${DEFAULT_TREE_ENTRIES}).`),
});

const entrySchema = z.object({
  path: z.string().describe('POSIX path relative to the worktree root.'),
  type: z
    .enum(['file', 'directory', 'symlink', 'other'])
    .describe('file, directory, symlink (never followed) or other.'),
  depth: z.number().int().describe('1 for entries directly in path, 2 below those, ...'),
  size: z.number().int().optional().describe('Size in bytes (files only).'),
  file_count: z
    .number()
    .int()
    .optional()
    .describe('Directories only: files below it at any depth, shown or not.'),
});

const outputSchema = z.object({
  path: z.string().describe('The directory at the top: relative to the worktree root.'),
  entries: z
    .array(entrySchema)
    .describe(
      'Depth-first: each directory is followed by its contents; within a directory, ' +
        'subdirectories first, then files, each sorted by name.',
    ),
  total_entries: z
    .number()
    .int()
    .describe('Entries within max_depth, including any left out by max_entries.'),
  total_files: z.number().int().describe('Files below path at any depth.'),
  truncated: z.boolean().describe('True if entries were left out because of max_entries.'),
});

type DirectoryTreeArgs = z.input<typeof inputSchema>;
export type DirectoryTreeResult = z.infer<typeof outputSchema>;
type Entry = z.infer<typeof entrySchema>;

interface DirectoryNode {
  directories: Map<string, DirectoryNode>;
  files: string[];
  fileCount: number;
}

function newNode(): DirectoryNode {
  return { directories: new Map(), files: [], fileCount: 0 };
}

function byName(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

async function directoryTree(rawArgs: DirectoryTreeArgs, root: string, signal: AbortSignal) {
  const args = parseToolArguments('directory_tree', inputSchema, rawArgs);
  const base = await resolveDirectoryInsideRoot(
    root,
    args.path,
    'directory_tree shows a directory; use get_file_info for a file',
  );
  const listing = await listWorktreeFiles(root, base, { signal });
  if (signal.aborted) throw new UserError('directory_tree was cancelled');

  const prefix = base.relativePath === '.' ? '' : `${base.relativePath}/`;
  const top = newNode();
  for (const file of listing.files) {
    const segments = file.path.slice(prefix.length).split('/');
    let node = top;
    node.fileCount += 1;
    for (const segment of segments.slice(0, -1)) {
      let child = node.directories.get(segment);
      if (child === undefined) {
        child = newNode();
        node.directories.set(segment, child);
      }
      child.fileCount += 1;
      node = child;
    }
    node.files.push(segments.at(-1)!);
  }

  const entries: Entry[] = [];
  let total = 0;
  const visit = (node: DirectoryNode, relative: string, depth: number): void => {
    for (const name of [...node.directories.keys()].sort(byName)) {
      const child = node.directories.get(name)!;
      total += 1;
      const childPath = relative + name;
      if (entries.length < args.max_entries) {
        entries.push({ path: childPath, type: 'directory', depth, file_count: child.fileCount });
      }
      if (depth < args.max_depth) visit(child, `${childPath}/`, depth + 1);
    }
    for (const name of node.files.sort(byName)) {
      total += 1;
      if (entries.length < args.max_entries) {
        entries.push({ path: relative + name, type: 'file', depth });
      }
    }
  };
  visit(top, prefix, 1);

  // What git lists as a file may be a symbolic link (or a FIFO...): lstat never follows it, and
  // every directory on the way was verified by the listing.
  await Promise.all(
    entries.map(async (entry) => {
      if (entry.type !== 'file') return;
      const stats = await lstatListed(root, entry.path);
      if (stats === undefined) return;
      if (stats.isSymbolicLink()) entry.type = 'symlink';
      else if (stats.isFile()) entry.size = stats.size;
      else entry.type = 'other';
    }),
  );

  const result: DirectoryTreeResult = {
    path: base.relativePath,
    entries,
    total_entries: total,
    total_files: top.fileCount,
    truncated: total > entries.length,
  };
  return result;
}

export const directoryTreeTool = defineTool({
  name: 'directory_tree',
  title: 'Directory tree',
  description:
    'The tree of files and directories under a directory of the worktree (read-only), as a flat ' +
    'depth-first list: each entry has its path, type (file, directory, symlink, other), depth, ' +
    'size for files and, for directories, the number of files below them. Leaves out what git ' +
    'ignores (.gitignore, .git/info/exclude) and .git itself; directories with no file left ' +
    `(empty ones) do not appear. max_depth (default ${DEFAULT_TREE_DEPTH}) limits the levels ` +
    `shown and max_entries (default ${DEFAULT_TREE_ENTRIES}) the entries (truncated: true). ` +
    'Symlinks are shown, never followed. Refuses a path outside the worktree.',
  inputSchema,
  outputSchema,
  annotations: readOnlyLocal,
  handler: (args, ctx) => directoryTree(args, ctx.root, ctx.signal),
});
