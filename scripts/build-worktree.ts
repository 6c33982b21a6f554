// Bundles the worktree process — the code every per-worktree MCP server runs — with its
// dependencies into out/worktree/ (bundle-for-node.ts: the configuration every Node bundle
// shares): worktree-process.js, the worker-thread entry beside it (pool-worker.js) and the
// chunks they share. Both launchers (headless fork, Electron utilityProcess) start
// out/worktree/worktree-process.js; `npm run build` and the test setup run this script, so the
// bundle is never older than a test run.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_WORKTREE_ENTRY } from '../main/host/worktree-launcher.ts';
import { bundleForNode } from './bundle-for-node.ts';

export async function buildWorktreeBundle(): Promise<void> {
  await bundleForNode(
    {
      'worktree-process': 'main/worktree/worktree-process.ts',
      'pool-worker': 'main/worktree/pool-worker.ts',
    },
    // Where the launchers look for the bundle (main/host/worktree-launcher.ts).
    path.dirname(BUNDLED_WORKTREE_ENTRY),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWorktreeBundle();
}
