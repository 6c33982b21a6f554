// Bundles the `grove` command line into out/cli/ (bundle-for-node.ts: the configuration every
// Node bundle shares): grove.js, the dispatcher (main/headless/cli.ts) that bin/grove.js loads,
// with each command's module in chunks of its own that load only when that command runs (serve:
// the host and the UI server; bridge: the bridge), and the worker pool's entry (pool-worker.js),
// which a bridge serving a worktree in its own process starts beside the module that needs it.
// `npm install` (postinstall), `npm run build`, `npm run serve` and the test setup run this
// script, so `grove` never runs an older build than the sources in the tests.
import { fileURLToPath } from 'node:url';
import { bundleForNode, ROOT } from './bundle-for-node.ts';

/** Where bin/grove.js looks for the CLI (`out/cli/grove.js`). */
export const CLI_BUNDLE_DIR = `${ROOT}out/cli`;

export async function buildCliBundle(): Promise<void> {
  await bundleForNode(
    { grove: 'main/headless/cli.ts', 'pool-worker': 'main/worktree/pool-worker.ts' },
    CLI_BUNDLE_DIR,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildCliBundle();
}
