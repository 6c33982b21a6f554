// The get_file_info tool: metadata of one file or directory in the worktree — type, size, times,
// permissions, and for a file whether it is binary, its line count and its git status. Reads the
// file (through the sandbox) only to sniff and count lines.
import path from 'node:path';
import { z } from 'zod';
import { fileGitStatus } from '../platform/git/file-status.ts';
import { BINARY_SNIFF_BYTES, looksBinary } from '../platform/binary-content.ts';
import { openFileInsideRoot, statInsideRoot } from '../platform/confined-fs.ts';
import type { SandboxFile } from '../platform/confined-fs.ts';
import { formatSize, parseToolArguments } from './tool-arguments.ts';
import { UserError } from '../platform/errors.ts';
import { defineTool, readOnlyLocal } from './tool-definition.ts';

/** Lines are counted in text files up to this size; larger ones report line_count: null. */
export const MAX_LINE_COUNT_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 256 * 1024;

const inputSchema = z.strictObject({
  path: z
    .string()
    .describe(
      'File or directory, relative to the worktree root with "/" separators ("." is the root).',
    ),
});

const gitStates = [
  'unmodified',
  'modified',
  'added',
  'deleted',
  'renamed',
  'copied',
  'type_changed',
  'untracked',
  'ignored',
  'conflicted',
] as const;

const outputSchema = z.object({
  path: z
    .string()
    .describe('POSIX path relative to the worktree root, symlinks resolved ("." for the root).'),
  type: z
    .enum(['file', 'directory', 'other'])
    .describe('file, directory, or other (FIFO, socket, device).'),
  size_bytes: z.number().int().describe('Size in bytes (for a directory, what the disk reports).'),
  modified: z.string().describe('Last modification time, ISO 8601 (UTC).'),
  created: z
    .string()
    .optional()
    .describe('Creation time, ISO 8601 (UTC), where the file system records it.'),
  permissions: z.string().describe('Unix permission bits in octal, e.g. "644".'),
  binary: z
    .boolean()
    .optional()
    .describe('Files only: true if the file looks binary (read_file and grep leave it out).'),
  line_count: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe(
      'Text files only: number of lines (a last line without a newline counts); null for a ' +
        `binary file or one over ${formatSize(MAX_LINE_COUNT_BYTES)}.`,
    ),
  git: z
    .object({
      state: z
        .enum(gitStates)
        .describe(
          'unmodified (tracked, no change), modified, added, deleted, renamed, copied, ' +
            'type_changed, untracked, ignored or conflicted.',
        ),
      staged: z.boolean().describe('A change to this file is staged.'),
      unstaged: z.boolean().describe('A change to this file is not staged.'),
    })
    .nullable()
    .optional()
    .describe(
      'Files only: git status of the file; null when the worktree is not a git repository.',
    ),
});

type GetFileInfoArgs = z.input<typeof inputSchema>;
export type GetFileInfoResult = z.infer<typeof outputSchema>;

/** Sniffs and, for text, counts lines, reading the file once. */
async function inspect(
  handle: SandboxFile,
  size: number,
  signal: AbortSignal,
): Promise<{ binary: boolean; lines: number | null }> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const first = await handle.read(chunk, 0, Math.min(CHUNK_BYTES, size), 0);
  if (looksBinary(chunk.subarray(0, Math.min(first.bytesRead, BINARY_SNIFF_BYTES)))) {
    return { binary: true, lines: null };
  }
  if (size > MAX_LINE_COUNT_BYTES) return { binary: false, lines: null };
  let lines = 0;
  let last = -1;
  let position = 0;
  let bytesRead = first.bytesRead;
  while (bytesRead > 0) {
    if (signal.aborted) throw new UserError('get_file_info was cancelled');
    const data = chunk.subarray(0, bytesRead);
    for (let at = data.indexOf(0x0a); at !== -1; at = data.indexOf(0x0a, at + 1)) lines += 1;
    last = data[bytesRead - 1]!;
    position += bytesRead;
    ({ bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position));
  }
  if (position > 0 && last !== 0x0a) lines += 1;
  return { binary: false, lines };
}

function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(3, '0');
}

async function getFileInfo(rawArgs: GetFileInfoArgs, root: string, signal: AbortSignal) {
  const args = parseToolArguments('get_file_info', inputSchema, rawArgs);
  const target = await statInsideRoot(root, args.path);
  const { stats } = target;
  const result: GetFileInfoResult = {
    path: target.relativePath,
    type: stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other',
    size_bytes: stats.size,
    modified: stats.mtime.toISOString(),
    permissions: octal(stats.mode),
  };
  if (stats.birthtimeMs > 0) result.created = stats.birthtime.toISOString();
  if (!stats.isFile()) return result;

  const file = await openFileInsideRoot(root, args.path);
  try {
    const { binary, lines } = await inspect(file.handle, file.stats.size, signal);
    result.size_bytes = file.stats.size;
    result.binary = binary;
    result.line_count = lines;
  } finally {
    await file.handle.close();
  }
  result.git = await fileGitStatus(file.realPath, { ceiling: path.dirname(root), signal });
  return result;
}

export const getFileInfoTool = defineTool({
  name: 'get_file_info',
  title: 'Get file info',
  description:
    'Metadata of one file or directory in the worktree (read-only): type, size, modification ' +
    'and creation times, permissions; for a file also whether it is binary, its line count and ' +
    'its git status (unmodified, modified, added, untracked, ignored, ... with staged/unstaged). ' +
    'Refuses paths outside the worktree, symlinks pointing outside it, and anything inside .git.',
  inputSchema,
  outputSchema,
  annotations: readOnlyLocal,
  handler: (args, ctx) => getFileInfo(args, ctx.root, ctx.signal),
});
