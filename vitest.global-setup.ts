// Before any test: bundle the worktree process (out/worktree/), which every host in the tests
// starts, and the `grove` command line (out/cli/), which the tests run through bin/grove.js, so a
// test never runs an older build than the sources it sits beside. The user cache directory (the
// CLI's remembered spec validations, platform/user-cache-directory.ts) is a temporary one, so
// tests neither read nor fill the user's (GROVE_CACHE_DIR, on every platform).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildCliBundle } from './scripts/build-cli.ts';
import { buildWorktreeBundle } from './scripts/build-worktree.ts';

export default async function setup(): Promise<() => void> {
  const cache = mkdtempSync(path.join(tmpdir(), 'grove-test-cache-'));
  process.env.GROVE_CACHE_DIR = cache;
  await Promise.all([buildWorktreeBundle(), buildCliBundle()]);
  return () => rmSync(cache, { recursive: true, force: true });
}
