// Before any test: bundle the worktree process (out/worktree/), which every host in the tests
// starts, and the `grove` command line (out/cli/), which the tests run through bin/grove.js, so a
// test never runs an older build than the sources it sits beside.
import { buildCliBundle } from './scripts/build-cli.ts';
import { buildWorktreeBundle } from './scripts/build-worktree.ts';

export default async function setup(): Promise<void> {
  await Promise.all([buildWorktreeBundle(), buildCliBundle()]);
}
