// Before any test: bundle the worktree process (out/worktree/), which every host in the tests
// starts, so a test never runs an older build than the sources it sits beside.
import { buildWorktreeBundle } from './scripts/build-worktree.ts';

export default async function setup(): Promise<void> {
  await buildWorktreeBundle();
}
