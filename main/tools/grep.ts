// The grep tool: lines matching a JavaScript regular expression or a fixed string in the files of
// the worktree (tracked and untracked, what git ignores left out), with an optional glob filter, a
// case option, context lines and a cap. Owns the arguments, the order of results and the caps; the
// files come from worktree-files.ts, and the searching runs in chunks on the worker pool
// (main/platform/worker-pool.ts, job kind `grep-chunk`), or in the main thread when workers are
// unavailable. A regular expression runs on an engine that cannot backtrack without bound unless it
// needs one that does (grep-regex.ts); the result says which.
import { z } from 'zod';
import { compileGlobArgument } from './glob.ts';
import { WorkersUnavailableError, workerPool, type WorkerPool } from '../platform/worker-pool.ts';
import { createAsyncReader } from './grep-readers.ts';
import type { CompiledPattern } from './grep-regex.ts';
import {
  addStats,
  compilePattern,
  emptyStats,
  joinChunkResults,
  searchChunk,
  type GrepChunkFile,
  type GrepChunkRequest,
  type GrepChunkResult,
  type GrepFileMatches,
  type GrepSpec,
} from './grep-search.ts';
import { displayPath, statInsideRoot } from '../platform/confined-fs.ts';
import { formatSize, parseToolArguments } from './tool-arguments.ts';
import { UserError } from '../platform/errors.ts';
import { defineTool, readOnlyLocal, type ToolContext } from './tool-definition.ts';
import { listWorktreeFiles } from './worktree-files.ts';

export const DEFAULT_GREP_RESULTS = 100;
export const MAX_GREP_RESULTS = 2000;
export const MAX_CONTEXT_LINES = 10;
/** Lines longer than this are cut to an excerpt around the match. */
export const MAX_LINE_CHARS = 500;
/** Files larger than this are not searched (counted in skipped.too_large). */
export const MAX_GREP_FILE_BYTES = 32 * 1024 * 1024;
/** Text returned by one call (lines and context), about; beyond it the result is truncated. */
export const MAX_GREP_OUTPUT_CHARS = 1024 * 1024;
/**
 * A search still running after this long is stopped (a regular expression only the backtracking
 * engine runs, backtracking badly; or a very large worktree).
 */
export const GREP_TIMEOUT_MS = 60_000;
/** Files per chunk handed to a worker. */
const CHUNK_FILES = 256;

const globList = z.array(z.string()).max(100);

const inputSchema = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(1000)
    .describe(
      'What to look for: a JavaScript regular expression (e.g. "function\\s+\\w+", "TODO|FIXME"), ' +
        'or with fixed_string: true the exact text. Matched within a line; ^ and $ match at line ' +
        'starts and ends.',
    ),
  fixed_string: z
    .boolean()
    .default(false)
    .describe('Treat pattern as literal text, not a regular expression.'),
  ignore_case: z.boolean().default(false).describe('Match regardless of letter case.'),
  path: z
    .string()
    .default('.')
    .describe(
      'File or directory to search, relative to the worktree root ("." is the whole worktree).',
    ),
  include: globList
    .default([])
    .describe(
      'Only search files whose path (relative to the worktree root) matches one of these globs, ' +
        'e.g. ["**/*.ts", "**/*.tsx"]. `*` stays within one directory, `**` spans any depth.',
    ),
  exclude: globList
    .default([])
    .describe('Leave out files whose path matches one of these globs, e.g. ["**/*.test.ts"].'),
  context_lines: z
    .number()
    .int()
    .min(0)
    .max(MAX_CONTEXT_LINES)
    .default(0)
    .describe(`Lines of context before and after each matching line (0-${MAX_CONTEXT_LINES}).`),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(MAX_GREP_RESULTS)
    .default(DEFAULT_GREP_RESULTS)
    .describe(`Most matching lines returned (default ${DEFAULT_GREP_RESULTS}).`),
});

const lineMatchSchema = z.object({
  line: z.number().int().describe('1-based line number.'),
  column: z
    .number()
    .int()
    .describe('1-based column where the first match in the line starts (UTF-16 code units).'),
  text: z
    .string()
    .describe(
      `The line without its line ending; an excerpt if longer than ${MAX_LINE_CHARS} characters.`,
    ),
  text_truncated: z.boolean().optional().describe('True when text is an excerpt of a long line.'),
  before: z.array(z.string()).optional().describe('Context lines before (with context_lines).'),
  after: z.array(z.string()).optional().describe('Context lines after (with context_lines).'),
});

const outputSchema = z.object({
  path: z.string().describe('The file or directory searched, relative to the worktree root.'),
  files: z
    .array(
      z.object({
        path: z.string().describe('File path relative to the worktree root.'),
        matches: z.array(lineMatchSchema).describe('Matching lines, in order.'),
      }),
    )
    .describe('Files with matching lines, sorted by path.'),
  match_count: z.number().int().describe('Matching lines returned.'),
  truncated: z
    .boolean()
    .describe(
      'True if there were more matching lines than returned (max_results or the output size ' +
        'cap): narrow the pattern, path or include globs.',
    ),
  regex_engine: z
    .enum(['linear', 'backtracking'])
    .describe(
      'The engine that ran the pattern. linear: its time grows linearly with the text searched, ' +
        'whatever the pattern. backtracking: the pattern needs a backreference, a lookahead or ' +
        'another construct only a backtracking engine runs; a pattern like (a+)+$ can then take ' +
        `exponential time, and the search is stopped after ${GREP_TIMEOUT_MS / 1000} s.`,
    ),
  regex_engine_note: z
    .string()
    .optional()
    .describe(
      'Why the backtracking engine ran the pattern (only with regex_engine: backtracking).',
    ),
  files_searched: z.number().int().describe('Text and binary files read.'),
  skipped: z
    .object({
      binary: z
        .number()
        .int()
        .describe('Binary files not searched (counted only if they might have matched).'),
      too_large: z
        .number()
        .int()
        .describe(`Files over ${formatSize(MAX_GREP_FILE_BYTES)}, not searched.`),
      symlinks: z.number().int().describe('Symbolic links, never followed.'),
      unreadable: z.number().int().describe('Files that could not be read.'),
    })
    .describe('Files left out of the search, by reason.'),
});

type GrepArgs = z.input<typeof inputSchema>;
export type GrepResult = z.infer<typeof outputSchema>;

export interface GrepOptions {
  /** Default: the process-wide pool. Null searches in the main thread. */
  pool?: WorkerPool | null;
  timeoutMs?: number;
}

/**
 * One chunk on the pool. A chunk may start on the pool's reserve worker (when every other worker
 * is held: say by other callers' heavy searches), which searches a bounded share of it and says
 * where it stopped; the rest then runs as an ordinary job of the same owner.
 */
async function runChunk(
  pool: WorkerPool,
  chunk: GrepChunkRequest,
  owner: object,
  lowPriority: boolean,
): Promise<GrepChunkResult> {
  const first = await pool.run<GrepChunkResult>('grep-chunk', chunk, {
    owner,
    lowPriority,
    reserve: !lowPriority,
  });
  if (first.unfinished === undefined) return first;
  const rest = await pool.run<GrepChunkResult>(
    'grep-chunk',
    { ...chunk, files: chunk.files.slice(first.unfinished), limit: chunk.limit - first.lines },
    { owner, lowPriority },
  );
  return joinChunkResults(first, rest);
}

/** Runs the chunks on the pool, in order, stopping once `limit` lines were found in order. */
async function runOnPool(
  pool: WorkerPool,
  chunks: GrepChunkRequest[],
  limit: number,
  signal: AbortSignal,
  timeoutMs: number,
  lowPriority: boolean,
): Promise<GrepChunkResult[]> {
  const owner = {};
  const results: GrepChunkResult[] = [];
  const window = pool.size * 2;
  const onAbort = (): void => pool.cancel(owner, new UserError('grep was cancelled'));
  const timer = setTimeout(() => {
    pool.cancel(
      owner,
      new UserError(
        `grep took longer than ${timeoutMs / 1000} s and was stopped; a regular expression with a ` +
          'backreference or lookahead may backtrack badly: simplify it, or narrow path or include',
      ),
    );
  }, timeoutMs);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      let next = 0;
      let inFlight = 0;
      let prefix = 0;
      let prefixLines = 0;
      let stop = false;
      let failed = false;
      const launch = (): void => {
        while (!stop && !failed && next < chunks.length && inFlight < window) {
          const index = next++;
          inFlight += 1;
          runChunk(pool, chunks[index]!, owner, lowPriority).then(
            (result) => {
              inFlight -= 1;
              results[index] = result;
              while (results[prefix] !== undefined) {
                prefixLines += results[prefix]!.lines;
                prefix += 1;
              }
              if (prefixLines >= limit) stop = true;
              if (inFlight === 0 && (stop || next >= chunks.length)) resolve();
              else launch();
            },
            (error: unknown) => {
              inFlight -= 1;
              if (failed) return;
              failed = true;
              pool.cancel(owner, new UserError('grep stopped'));
              reject(error instanceof Error ? error : new Error(String(error)));
            },
          );
        }
        if (inFlight === 0) resolve();
      };
      launch();
    });
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
  // Every launched chunk finished; keep the contiguous prefix.
  const done: GrepChunkResult[] = [];
  for (const result of results) {
    if (result === undefined) break;
    done.push(result);
  }
  return done;
}

/** Runs the chunks in the main thread (no workers), stopping once `limit` lines were found. */
async function runInThread(
  chunks: GrepChunkRequest[],
  limit: number,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<GrepChunkResult[]> {
  const deadline = Date.now() + timeoutMs;
  const results: GrepChunkResult[] = [];
  let lines = 0;
  for (const chunk of chunks) {
    if (signal.aborted) throw new UserError('grep was cancelled');
    if (Date.now() > deadline) {
      throw new UserError(`grep took longer than ${timeoutMs / 1000} s and was stopped`);
    }
    const reader = createAsyncReader(chunk.root, chunk.maxFileBytes);
    try {
      const result = await searchChunk(chunk, (file) => reader.read(file));
      results.push(result);
      lines += result.lines;
    } finally {
      await reader.close();
    }
    if (lines >= limit) break;
  }
  return results;
}

function textSize(match: GrepFileMatches['matches'][number]): number {
  let size = match.text.length + 32;
  for (const line of match.before ?? []) size += line.length + 4;
  for (const line of match.after ?? []) size += line.length + 4;
  return size;
}

export async function runGrep(
  rawArgs: GrepArgs,
  ctx: Pick<ToolContext, 'root' | 'signal' | 'log'>,
  options: GrepOptions = {},
): Promise<GrepResult> {
  const { root, signal, log } = ctx;
  const args = parseToolArguments('grep', inputSchema, rawArgs);
  const spec: GrepSpec = {
    pattern: args.pattern,
    fixedString: args.fixed_string,
    ignoreCase: args.ignore_case,
    contextLines: args.context_lines,
    maxLineChars: MAX_LINE_CHARS,
  };
  let compiled: CompiledPattern;
  try {
    compiled = compilePattern(spec);
  } catch (error) {
    throw new UserError(
      `invalid regular expression ${displayPath(args.pattern)}: ` +
        `${error instanceof Error ? error.message : String(error)}; pass fixed_string: true to ` +
        'search for the text as it is',
    );
  }
  const include =
    args.include.length > 0 ? compileGlobArgument(args.include, 'include') : () => true;
  const exclude = compileGlobArgument(args.exclude, 'exclude');
  const target = await statInsideRoot(root, args.path);

  let files: GrepChunkFile[];
  if (target.stats.isDirectory()) {
    // Deleted files are found missing when opened: no need for git to lstat every file first.
    const listing = await listWorktreeFiles(root, target, { signal, includeDeleted: true });
    if (listing.truncated) {
      log?.('warning', `more than ${listing.files.length} files: only the first were searched`);
    }
    files = listing.files.filter((file) => include(file.path) && !exclude(file.path));
  } else if (target.stats.isFile()) {
    files = [{ path: target.relativePath }];
  } else {
    throw new UserError(
      `not a regular file or directory (a FIFO, socket or device): ${displayPath(args.path)}`,
    );
  }
  if (signal.aborted) throw new UserError('grep was cancelled');

  // One more line than asked for tells whether the result is truncated.
  const limit = args.max_results + 1;
  const chunks: GrepChunkRequest[] = [];
  for (let start = 0; start < files.length; start += CHUNK_FILES) {
    chunks.push({
      root,
      spec,
      files: files.slice(start, start + CHUNK_FILES),
      limit,
      maxFileBytes: MAX_GREP_FILE_BYTES,
    });
  }
  const timeoutMs = options.timeoutMs ?? GREP_TIMEOUT_MS;
  const pool = options.pool === undefined ? workerPool() : options.pool;
  let results: GrepChunkResult[];
  if (pool === null || pool.unavailable !== undefined || chunks.length === 0) {
    results = await runInThread(chunks, limit, signal, timeoutMs);
  } else {
    try {
      // A pattern that may backtrack without bound runs on low-priority workers of its own.
      const lowPriority = compiled.engine === 'backtracking';
      results = await runOnPool(pool, chunks, limit, signal, timeoutMs, lowPriority);
    } catch (error) {
      if (!(error instanceof WorkersUnavailableError)) throw error;
      log?.('warning', `${error.message}; searching in the main thread, which is slower`);
      results = await runInThread(chunks, limit, signal, timeoutMs);
    }
  }

  const stats = emptyStats();
  const matched: GrepFileMatches[] = [];
  let count = 0;
  let size = 0;
  let truncated = false;
  for (const result of results) {
    addStats(stats, result.stats);
    for (const file of result.files) {
      if (truncated) break;
      const kept: GrepFileMatches['matches'] = [];
      for (const match of file.matches) {
        size += textSize(match);
        if (count >= args.max_results || size > MAX_GREP_OUTPUT_CHARS) {
          truncated = true;
          break;
        }
        kept.push(match);
        count += 1;
      }
      if (kept.length > 0) matched.push({ path: file.path, matches: kept });
    }
  }
  return {
    path: target.relativePath,
    files: matched,
    match_count: count,
    truncated,
    regex_engine: compiled.engine,
    ...(compiled.note === undefined ? {} : { regex_engine_note: compiled.note }),
    files_searched: stats.files_searched,
    skipped: {
      binary: stats.binary,
      too_large: stats.too_large,
      symlinks: stats.symlinks,
      unreadable: stats.unreadable,
    },
  };
}

export const grepTool = defineTool({
  name: 'grep',
  title: 'Search file contents',
  description:
    "Search the contents of the worktree's files for a regular expression (JavaScript syntax) or " +
    'a fixed string (read-only). Searches tracked and untracked files and leaves out what git ' +
    'ignores (.gitignore, .git/info/exclude), .git itself, binary files and symbolic links (never ' +
    'followed). Narrow it with path (a file or directory) and include/exclude globs (matched ' +
    'against the path from the worktree root: "**/*.ts"). Options: ignore_case, context_lines ' +
    `(0-${MAX_CONTEXT_LINES}), max_results (default ${DEFAULT_GREP_RESULTS}, at most ` +
    `${MAX_GREP_RESULTS} matching lines). Returns matching lines grouped by file, sorted by ` +
    'path, with line and column numbers, and truncated: true when there were more. Patterns run ' +
    'on a linear-time engine; one with a backreference or lookahead runs on a backtracking ' +
    'engine, which the result says (regex_engine).',
  inputSchema,
  outputSchema,
  annotations: readOnlyLocal,
  // grep stops itself at GREP_TIMEOUT_MS with its own words; the server's deadline is a backstop.
  deadlineMs: GREP_TIMEOUT_MS + 5_000,
  handler: (args, ctx) => runGrep(args, ctx),
});
