// `exclude_patterns` of get_spec_diff: files left out of the diff text (they stay in `files`).
// NotarAI hands each pattern to git as a `:(exclude)<pattern>` pathspec, where `*` also matches
// `/`; Grove has one glob matcher for every pattern (glob-matcher.ts: `*` and `?` stay within a
// path segment, `**` spans segments) and adds one rule here, as `.gitignore` does: a pattern
// without a `/` matches a file's name at any depth. So the patterns NotarAI documents for this
// argument mean the same in both ("Cargo.lock", "*.lock": `a/yarn.lock` is excluded, as git's
// `*.lock` pathspec excludes it), and a pattern with a `/` is anchored at the worktree root:
//
//   `*.lock`           excludes `yarn.lock`, `web/yarn.lock`
//   `package-lock.json` excludes `package-lock.json`, `web/package-lock.json`
//   `./Cargo.lock`     excludes the root's `Cargo.lock` only (a `/`, so anchored)
//   `docs/*.md`        excludes `docs/a.md`, not `docs/api/b.md` (git's pathspec would)
//   `docs/**`          excludes everything below `docs/`
//   `vendor`           excludes files named `vendor`, not the directory's files (write `vendor/**`)
import { UserError } from '../../platform/errors.ts';
import { compileGlobs } from '../../platform/glob-matcher.ts';
import type { GlobSet } from '../../platform/glob-matcher.ts';

/** Compiles exclude_patterns: the patterns as written, plus `**\/<pattern>` for those without `/`. */
export function compileExcludePatterns(patterns: readonly string[]): GlobSet {
  const expanded: string[] = [];
  for (const raw of patterns) {
    expanded.push(raw);
    const pattern = raw.trim();
    if (pattern !== '' && !pattern.includes('/')) expanded.push(`**/${pattern}`);
  }
  try {
    return compileGlobs(expanded);
  } catch (error) {
    throw new UserError(`exclude_patterns: ${(error as Error).message}`);
  }
}
