// The glob matcher of the file tools (search_files, grep's include/exclude). Same semantics as the
// reconciliation engine's matcher (shared/reconcile-contract "Globs"), and meant to be replaced by a
// call to it once that lands: patterns are matched against POSIX paths relative to the worktree
// root; `*` and `?` stay within one path segment, `**` spans any number of segments (`dir/**` is
// every file below `dir`), dotfiles match, matching is case-sensitive, and only files are matched.
import picomatch from 'picomatch/posix.js';
import { ToolError } from './tool-definition.ts';

/** Longest pattern accepted. */
export const MAX_GLOB_LENGTH = 1000;

/** Decides whether a path (POSIX, relative to the worktree root) matches. */
export type PathMatcher = (relativePath: string) => boolean;

/** A leading "./" is the root itself: "./src/*.ts" means "src/*.ts". */
function normalise(pattern: string): string {
  let normalised = pattern;
  while (normalised.startsWith('./')) normalised = normalised.slice(2);
  return normalised;
}

/**
 * Compiles patterns into one matcher that accepts a path matching any of them. Throws ToolError
 * naming the argument for an empty or over-long pattern.
 */
export function compileGlobs(patterns: readonly string[], argument: string): PathMatcher {
  const normalised = patterns.map((pattern) => {
    if (pattern.length === 0) throw new ToolError(`${argument}: a glob pattern is empty`);
    if (pattern.length > MAX_GLOB_LENGTH) {
      throw new ToolError(
        `${argument}: a glob pattern is longer than ${MAX_GLOB_LENGTH} characters`,
      );
    }
    return normalise(pattern);
  });
  if (normalised.length === 0) return () => false;
  try {
    return picomatch(normalised, { dot: true });
  } catch (error) {
    throw new ToolError(
      `${argument}: invalid glob pattern: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
