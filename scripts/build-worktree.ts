// Bundles the worktree process — the code every per-worktree MCP server runs — with its
// dependencies into out/worktree/: worktree-process.js, the worker-thread entries beside it
// (grep-worker.js, file-worker.js) and the chunks they share, all in one flat directory because
// the pools find their workers next to the module that starts them. A worktree process then
// loads a few files instead of hundreds of modules under type stripping: it is ready sooner and
// smaller (docs/performance.md). Native modules stay outside, loaded from node_modules.
// Both launchers (headless fork, Electron utilityProcess) start out/worktree/worktree-process.js;
// `npm run build` and the test setup run this script, so the bundle is never older than a test run.
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const WORKTREE_BUNDLE_DIR = `${ROOT}out/worktree`;

/** Packages with native (.node) parts: required at run time from node_modules, never bundled. */
const NATIVE_PACKAGES = /^(better-sqlite3|@parcel\/watcher|@napi-rs\/blake-hash)(\/|$)/;

export async function buildWorktreeBundle(): Promise<void> {
  await rm(WORKTREE_BUNDLE_DIR, { recursive: true, force: true });
  await build({
    input: {
      'worktree-process': `${ROOT}main/worktree/worktree-process.ts`,
      'grep-worker': `${ROOT}main/tools/grep-worker.ts`,
      'file-worker': `${ROOT}main/reconcile/file-worker.ts`,
    },
    platform: 'node',
    external: (id) => NATIVE_PACKAGES.test(id) || id.endsWith('.node'),
    logLevel: 'warn',
    output: {
      dir: WORKTREE_BUNDLE_DIR,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: '[name]-[hash].js',
      sourcemap: true,
    },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWorktreeBundle();
}
