// The read_file tool: returns a text file from the worktree, whole or as a line range (start/end,
// head or tail). Owns the size cap, binary detection and line slicing; every path goes through
// the sandbox, which opens the file.
import { BINARY_SNIFF_BYTES, looksBinary } from '../platform/binary-content.ts';
import { z } from 'zod';
import { openFileInsideRoot, displayPath } from '../platform/confined-fs.ts';
import type { SandboxFile } from '../platform/confined-fs.ts';
import { formatSize, parseToolArguments } from './tool-arguments.ts';
import { UserError } from '../platform/errors.ts';
import { defineTool, readOnlyLocal } from './tool-definition.ts';

/** Largest file read whole (no range given). */
export const MAX_WHOLE_FILE_BYTES = 1024 * 1024;
/** Largest `content` returned for a range; a longer range is cut at a line end (truncated). */
export const MAX_CONTENT_BYTES = 1024 * 1024;
/** Bytes sniffed from the start of a file to decide whether it is binary. */

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

const lineNumber = z.number().int().min(1);

const inputSchema = z.strictObject({
  path: z
    .string()
    .describe(
      'File to read, relative to the worktree root with "/" separators (e.g. "src/index.ts"). ' +
        'An absolute path is accepted only if it lies inside the worktree.',
    ),
  start_line: lineNumber
    .optional()
    .describe('First line to return (1-based, inclusive). Without end_line: to the end of file.'),
  end_line: lineNumber
    .optional()
    .describe('Last line to return (1-based, inclusive). Without start_line: from line 1.'),
  head: lineNumber.optional().describe('Return only the first N lines.'),
  tail: lineNumber.optional().describe('Return only the last N lines.'),
});

const outputSchema = z.object({
  path: z
    .string()
    .describe('The file read: POSIX path relative to the worktree root, symlinks resolved.'),
  content: z
    .string()
    .describe(
      'The selected lines exactly as stored (line endings kept), decoded as UTF-8; ' +
        'invalid bytes appear as U+FFFD.',
    ),
  start_line: z.number().int().describe('1-based number of the first line in content.'),
  end_line: z
    .number()
    .int()
    .describe(
      '1-based number of the last line in content (inclusive); start_line - 1 if content is empty.',
    ),
  total_lines: z
    .number()
    .int()
    .describe('Number of lines in the whole file (a last line without a newline counts).'),
  size_bytes: z.number().int().describe('Size of the whole file in bytes.'),
  truncated: z
    .boolean()
    .describe(
      `True if the requested lines did not fit in the ${MAX_CONTENT_BYTES / 1024 / 1024} MiB ` +
        'content cap: content stops at end_line; continue with start_line = end_line + 1. ' +
        '(A single line longer than the cap is cut inside the line.)',
    ),
});

type ReadFileArgs = z.infer<typeof inputSchema>;
export type ReadFileResult = z.infer<typeof outputSchema>;

/** The lines wanted, before the file is scanned. `to` may be Infinity. */
interface LineRange {
  from: number;
  to: number;
  /** Set for tail: `from`/`to` are computed once the line count is known. */
  tail?: number;
}

function chooseRange(args: ReadFileArgs): LineRange | undefined {
  const ranged = args.start_line !== undefined || args.end_line !== undefined;
  const modes = [ranged, args.head !== undefined, args.tail !== undefined].filter(Boolean).length;
  if (modes > 1) {
    throw new UserError(
      'give only one way of choosing lines: start_line/end_line, or head, or tail',
    );
  }
  if (ranged) {
    const from = args.start_line ?? 1;
    const to = args.end_line ?? Infinity;
    if (to < from) {
      throw new UserError(`end_line (${to}) is before start_line (${from})`);
    }
    return { from, to };
  }
  if (args.head !== undefined) return { from: 1, to: args.head };
  if (args.tail !== undefined) return { from: 1, to: Infinity, tail: args.tail };
  return undefined;
}

/** Index at which to cut `bytes` to at most `limit` bytes without splitting a UTF-8 sequence. */
function utf8CutIndex(bytes: Buffer, limit: number): number {
  if (bytes.length <= limit) return bytes.length;
  let cut = limit;
  for (let back = 0; back < 3 && cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80; back++) cut--;
  return cut;
}

interface ScanResult {
  totalLines: number;
  content: Buffer;
  /** Last line (partly) in content; from - 1 if none. */
  lastLine: number;
  truncated: boolean;
}

/**
 * Reads the whole file once through `handle`, counting lines and keeping the bytes of lines
 * `from..to`, at most `cap` bytes of them, cut after a whole line (or inside the first line if
 * that alone is over the cap). Pass from = Infinity to only count.
 */
async function scanLines(
  handle: SandboxFile,
  from: number,
  to: number,
  cap: number,
  signal: AbortSignal,
): Promise<ScanResult> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let pendingOverflow = false;
  let collecting = from <= to;
  let truncated = false;
  let lastLine = from - 1;
  let line = 1;
  let lineHasBytes = false;
  let position = 0;

  const wanted = (): boolean => collecting && line >= from && line <= to;
  const take = (bytes: Buffer): void => {
    if (!wanted() || pendingOverflow) return;
    const room = cap - pendingBytes;
    if (bytes.length > room) {
      pending.push(Buffer.from(bytes.subarray(0, room + 4))); // a little extra for the UTF-8 cut
      pendingBytes += room;
      pendingOverflow = true;
    } else {
      pending.push(Buffer.from(bytes));
      pendingBytes += bytes.length;
    }
  };
  const finishLine = (): void => {
    if (wanted()) {
      if (!pendingOverflow && keptBytes + pendingBytes <= cap) {
        kept.push(...pending);
        keptBytes += pendingBytes;
        lastLine = line;
      } else {
        if (keptBytes === 0) {
          const whole = Buffer.concat(pending);
          kept.push(whole.subarray(0, utf8CutIndex(whole, cap)));
          lastLine = line;
        }
        truncated = true;
        collecting = false;
      }
      if (line >= to) collecting = false;
    }
    pending = [];
    pendingBytes = 0;
    pendingOverflow = false;
  };

  for (;;) {
    if (signal.aborted) throw new UserError('read_file was cancelled');
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data = chunk.subarray(0, bytesRead);
    let start = 0;
    for (;;) {
      const newline = data.indexOf(NEWLINE, start);
      if (newline === -1) {
        if (start < bytesRead) {
          take(data.subarray(start));
          lineHasBytes = true;
        }
        break;
      }
      take(data.subarray(start, newline + 1));
      finishLine();
      line += 1;
      lineHasBytes = false;
      start = newline + 1;
    }
  }
  let totalLines = line - 1;
  if (lineHasBytes) {
    finishLine();
    totalLines = line;
  }
  return { totalLines, content: Buffer.concat(kept), lastLine, truncated };
}

async function readBytes(handle: SandboxFile, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

async function fileLooksBinary(handle: SandboxFile, size: number): Promise<boolean> {
  if (size === 0) return false;
  return looksBinary(await readBytes(handle, Math.min(size, BINARY_SNIFF_BYTES)));
}

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

async function readFile(rawArgs: ReadFileArgs, root: string, signal: AbortSignal) {
  const args = parseToolArguments('read_file', inputSchema, rawArgs);
  const range = chooseRange(args);
  const file = await openFileInsideRoot(root, args.path);
  const shown = displayPath(file.relativePath);
  try {
    const size = file.stats.size;
    if (await fileLooksBinary(file.handle, size)) {
      throw new UserError(
        `binary file, not shown: ${shown} (${formatSize(size)}); read_file only returns text`,
      );
    }
    if (range === undefined && size > MAX_WHOLE_FILE_BYTES) {
      throw new UserError(
        `file is too large to read whole: ${shown} is ${formatSize(size)}, the limit is ` +
          `${formatSize(MAX_WHOLE_FILE_BYTES)}. Read part of it: pass head or tail (a number of ` +
          'lines), or start_line and end_line.',
      );
    }
    let { from, to } = range ?? { from: 1, to: Infinity };
    if (range?.tail !== undefined) {
      const counted = await scanLines(file.handle, Infinity, 0, 0, signal);
      from = Math.max(1, counted.totalLines - range.tail + 1);
      to = Infinity;
    }
    const scan = await scanLines(file.handle, from, to, MAX_CONTENT_BYTES, signal);
    if (from > Math.max(scan.totalLines, 1)) {
      throw new UserError(
        `start_line ${from} is past the end of ${shown}, which has ${scan.totalLines} lines`,
      );
    }
    const result: ReadFileResult = {
      path: file.relativePath,
      content: decoder.decode(scan.content),
      start_line: from,
      end_line: scan.lastLine,
      total_lines: scan.totalLines,
      size_bytes: size,
      truncated: scan.truncated,
    };
    return result;
  } finally {
    await file.handle.close();
  }
}

export const readFileTool = defineTool({
  name: 'read_file',
  title: 'Read file',
  description:
    'Read a text file from the worktree (read-only). Paths are relative to the worktree root. ' +
    `Files up to ${MAX_WHOLE_FILE_BYTES / 1024 / 1024} MiB can be read whole; for larger ` +
    'files, or to save space, choose lines with start_line/end_line (1-based, inclusive), head ' +
    "or tail (N lines). Returns the content, the line numbers of the slice and the file's " +
    'total line count. ' +
    'Refuses binary files, directories (use list_directory), paths outside the worktree, ' +
    'symlinks pointing outside it, and anything inside .git.',
  inputSchema,
  outputSchema,
  annotations: readOnlyLocal,
  handler: (args, ctx) => readFile(args, ctx.root, ctx.signal),
});
