// The search_files tool: the files under a directory whose paths match glob patterns (the matcher
// in glob.ts), tracked and untracked, without what git ignores. Owns the result cap and the hint for
// patterns that match nothing; listing is worktree-files.ts's job.
import { z } from 'zod';
import { compileGlobArgument } from './glob.ts';
import { resolveDirectoryInsideRoot } from '../platform/confined-fs.ts';
import { parseToolArguments } from './tool-arguments.ts';
import { UserError } from '../platform/errors.ts';
import { defineTool, readOnlyLocal, type ToolContext } from './tool-definition.ts';
import { listWorktreeFiles } from './worktree-files.ts';

export const DEFAULT_SEARCH_RESULTS = 1000;
export const MAX_SEARCH_RESULTS = 10_000;

const globList = z.array(z.string()).max(100);

const inputSchema = z.strictObject({
  patterns: globList
    .min(1)
    .describe(
      "Glob patterns matched against each file's path relative to the worktree root (not to " +
        '`path`); a file matching any of them is returned. `*` and `?` stay within one path ' +
        'segment, `**` spans any number of directories, dotfiles match, case-sensitive. ' +
        'Examples: "**/*.ts" (every .ts file), "src/*.ts" (directly in src), "docs/**" ' +
        '(everything below docs), "**/{README,CHANGELOG}.md".',
    ),
  path: z
    .string()
    .default('.')
    .describe(
      'Directory to search under, relative to the worktree root ("." is the root). Only narrows ' +
        'the search; patterns still match the full path from the root.',
    ),
  exclude: globList
    .default([])
    .describe('Glob patterns (same rules) for files to leave out, e.g. ["**/*.test.ts"].'),
  max_results: z
    .number()
    .int()
    .min(1)
    .max(MAX_SEARCH_RESULTS)
    .default(DEFAULT_SEARCH_RESULTS)
    .describe(`Most paths returned (default ${DEFAULT_SEARCH_RESULTS}).`),
});

const outputSchema = z.object({
  path: z.string().describe('The directory searched, relative to the worktree root.'),
  files: z
    .array(z.string())
    .describe('Matching file paths relative to the worktree root, sorted; files only.'),
  total_matches: z.number().int().describe('How many files matched, including any left out.'),
  truncated: z
    .boolean()
    .describe('True if more files matched than max_results; narrow the patterns or the path.'),
  files_considered: z
    .number()
    .int()
    .describe('Files under `path` the patterns were tried against (ignored files not counted).'),
  hint: z
    .string()
    .optional()
    .describe('Present when nothing matched and a pattern probably meant something else.'),
});

type SearchFilesArgs = z.input<typeof inputSchema>;
export type SearchFilesResult = z.infer<typeof outputSchema>;

/** A hint for the usual mistake: "*.ts" (root only) meant as "**\/*.ts". */
function hintFor(patterns: readonly string[], base: string): string | undefined {
  const rootOnly = patterns.filter((pattern) => !pattern.includes('/'));
  if (rootOnly.length > 0) {
    return (
      `no file matched. Patterns match the whole path from the worktree root and "*" never ` +
      `crosses "/": "${rootOnly[0]}" matches only files directly in the root; use ` +
      `"**/${rootOnly[0]}" for any depth.`
    );
  }
  if (base !== '.') {
    const relativeToBase = patterns.find((pattern) => !pattern.startsWith(base));
    if (relativeToBase !== undefined) {
      return (
        `no file matched. Patterns match the path from the worktree root, not from "${base}": ` +
        `try "${base}/${relativeToBase}".`
      );
    }
  }
  return undefined;
}

async function searchFiles(rawArgs: SearchFilesArgs, ctx: ToolContext) {
  const { root, signal } = ctx;
  const args = parseToolArguments('search_files', inputSchema, rawArgs);
  const matches = compileGlobArgument(args.patterns, 'patterns');
  const excluded = compileGlobArgument(args.exclude, 'exclude');
  const base = await resolveDirectoryInsideRoot(
    root,
    args.path,
    'search_files searches under a directory; use get_file_info for one file',
  );
  const listing = await listWorktreeFiles(root, base, { signal });
  if (signal.aborted) throw new UserError('search_files was cancelled');
  if (listing.truncated) {
    ctx.log?.('warning', `more than ${listing.files.length} files: only the first were searched`);
  }
  const found: string[] = [];
  let total = 0;
  for (const file of listing.files) {
    if (!matches(file.path) || excluded(file.path)) continue;
    total += 1;
    if (found.length < args.max_results) found.push(file.path);
  }
  const result: SearchFilesResult = {
    path: base.relativePath,
    files: found,
    total_matches: total,
    truncated: total > found.length,
    files_considered: listing.files.length,
  };
  if (total === 0) {
    const hint = hintFor(args.patterns, base.relativePath);
    if (hint !== undefined) result.hint = hint;
  }
  return result;
}

export const searchFilesTool = defineTool({
  name: 'search_files',
  title: 'Search files by glob',
  description:
    'Find files in the worktree whose paths match glob patterns (read-only). Patterns match the ' +
    'path relative to the worktree root: "*" and "?" stay within one directory, "**" spans any ' +
    'depth, dotfiles match, case-sensitive; only files are returned (no directories). Searches ' +
    'tracked and untracked files and leaves out what git ignores (.gitignore, ' +
    '.git/info/exclude) and .git itself; symbolic links are listed as files, never followed. ' +
    `Returns at most max_results paths (default ${DEFAULT_SEARCH_RESULTS}), sorted, with the ` +
    'total count and truncated: true when there were more. Refuses a path outside the worktree.',
  inputSchema,
  outputSchema,
  annotations: readOnlyLocal,
  handler: (args, ctx) => searchFiles(args, ctx),
});
