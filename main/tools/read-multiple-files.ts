// The read_multiple_files tool: several text files in one call, each read exactly as read_file
// reads it (same sandbox, caps and binary refusal), each with its own result or its own error — one
// failure never fails the batch. Owns the batch size and the total size cap.
import { z } from 'zod';
import { MAX_WHOLE_FILE_BYTES, readFileTool, type ReadFileResult } from './read-file.ts';
import { formatSize, parseToolArguments } from './tool-arguments.ts';
import { UserError } from '../platform/errors.ts';
import { defineTool, readOnlyLocal, type ToolContext } from './tool-definition.ts';

/** Most paths in one call. */
export const MAX_BATCH_FILES = 50;
/** Most content bytes returned by one call, all files together. */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** Files read at the same time. */
const CONCURRENCY = 4;

const inputSchema = z.strictObject({
  paths: z
    .array(z.string())
    .min(1)
    .max(MAX_BATCH_FILES)
    .describe(
      `Files to read (1-${MAX_BATCH_FILES}), relative to the worktree root with "/" separators; ` +
        'results come back in the same order.',
    ),
});

const fileResultSchema = z.object({
  path: z.string().describe('The path as requested.'),
  resolved_path: z
    .string()
    .optional()
    .describe('The file read: POSIX path relative to the worktree root, symlinks resolved.'),
  content: z.string().optional().describe('The whole file, decoded as UTF-8 (on success).'),
  total_lines: z.number().int().optional().describe('Number of lines in the file (on success).'),
  size_bytes: z.number().int().optional().describe('Size of the file in bytes (on success).'),
  error: z
    .string()
    .optional()
    .describe('Why this file was not read (outside the worktree, missing, binary, too large...).'),
});

const outputSchema = z.object({
  files: z.array(fileResultSchema).describe('One entry per requested path, in order.'),
  read_count: z.number().int().describe('Files read successfully.'),
  error_count: z.number().int().describe('Files with an error.'),
  total_bytes: z.number().int().describe('Content bytes returned, all files together.'),
  truncated: z
    .boolean()
    .describe(
      `True if some files were left out because the ${formatSize(MAX_BATCH_BYTES)} total cap ` +
        'was reached (their error says so); read them in another call.',
    ),
});

type ReadMultipleArgs = z.input<typeof inputSchema>;
export type ReadMultipleResult = z.infer<typeof outputSchema>;
type FileResult = z.infer<typeof fileResultSchema>;

const CAP_MESSAGE =
  `not read: the ${formatSize(MAX_BATCH_BYTES)} total of this call was reached; ` +
  'read this file in another call';

async function readOne(path: string, ctx: ToolContext): Promise<ReadFileResult | Error> {
  try {
    return (await readFileTool.handler({ path }, ctx)) as ReadFileResult;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

async function readMultipleFiles(rawArgs: ReadMultipleArgs, ctx: ToolContext) {
  const args = parseToolArguments('read_multiple_files', inputSchema, rawArgs);
  const outcomes: (ReadFileResult | Error)[] = new Array(args.paths.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, args.paths.length) }, async () => {
      while (next < args.paths.length) {
        const index = next++;
        if (ctx.signal.aborted) throw new UserError('read_multiple_files was cancelled');
        outcomes[index] = await readOne(args.paths[index]!, ctx);
      }
    }),
  );

  const files: FileResult[] = [];
  let totalBytes = 0;
  let truncated = false;
  let readCount = 0;
  for (const [index, outcome] of outcomes.entries()) {
    const requested = args.paths[index]!;
    if (outcome instanceof Error) {
      files.push({ path: requested, error: outcome.message });
      continue;
    }
    const bytes = Buffer.byteLength(outcome.content, 'utf8');
    if (totalBytes + bytes > MAX_BATCH_BYTES) {
      truncated = true;
      files.push({ path: requested, resolved_path: outcome.path, error: CAP_MESSAGE });
      continue;
    }
    totalBytes += bytes;
    readCount += 1;
    files.push({
      path: requested,
      resolved_path: outcome.path,
      content: outcome.content,
      total_lines: outcome.total_lines,
      size_bytes: outcome.size_bytes,
    });
  }
  const result: ReadMultipleResult = {
    files,
    read_count: readCount,
    error_count: files.length - readCount,
    total_bytes: totalBytes,
    truncated,
  };
  return result;
}

export const readMultipleFilesTool = defineTool({
  name: 'read_multiple_files',
  title: 'Read multiple files',
  description:
    `Read up to ${MAX_BATCH_FILES} text files from the worktree in one call (read-only), each ` +
    'whole, with the same rules as read_file. Every path gets its own entry, in order: the ' +
    'content, or an error saying why it was not read (outside the worktree, a symlink pointing ' +
    `outside, inside .git, missing, binary, over ${formatSize(MAX_WHOLE_FILE_BYTES)} — use ` +
    'read_file with a line range for those). One failure never fails the others. At most ' +
    `${formatSize(MAX_BATCH_BYTES)} of content in total; files beyond that come back with an ` +
    'error and truncated: true.',
  inputSchema,
  outputSchema,
  annotations: readOnlyLocal,
  handler: (args, ctx) => readMultipleFiles(args, ctx),
});
