// Glob patterns given to the file tools (search_files, grep's include/exclude), checked and
// compiled with the reconciliation engine's matcher (main/platform/glob-matcher.ts), so every tool
// of the server agrees on what a pattern means (docs/globs.md): patterns are matched against POSIX
// paths relative to the worktree root; `*` and `?` stay within one path segment, `**` spans any
// number of segments (`dir/**` is every file below `dir`), dotfiles match, matching is
// case-sensitive, and only files are matched.
import { compileGlobs } from '../platform/glob-matcher.ts';
import { UserError } from '../platform/errors.ts';

/** Longest pattern accepted. */
export const MAX_GLOB_LENGTH = 1000;

/** Decides whether a path (POSIX, relative to the worktree root) matches. */
export type PathMatcher = (relativePath: string) => boolean;

/**
 * Compiles patterns into one matcher that accepts a path matching any of them. Throws UserError
 * naming the argument for an empty, over-long or invalid pattern.
 */
export function compileGlobArgument(patterns: readonly string[], argument: string): PathMatcher {
  for (const pattern of patterns) {
    if (pattern.length === 0) throw new UserError(`${argument}: a glob pattern is empty`);
    if (pattern.length > MAX_GLOB_LENGTH) {
      throw new UserError(
        `${argument}: a glob pattern is longer than ${MAX_GLOB_LENGTH} characters`,
      );
    }
  }
  try {
    const set = compileGlobs(patterns);
    return (relativePath) => set.test(relativePath);
  } catch (error) {
    throw new UserError(
      `${argument}: invalid glob pattern: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
