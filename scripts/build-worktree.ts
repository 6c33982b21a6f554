// Bundles the worktree process — the code every per-worktree MCP server runs — with its
// dependencies into out/worktree/: worktree-process.js, the worker-thread entry beside it
// (pool-worker.js) and the chunks they share, all in one flat directory because the pool finds
// its worker next to the module that starts it. A worktree process then
// loads a few files instead of hundreds of modules under type stripping: it is ready sooner and
// smaller (docs/performance.md). Native modules stay outside, loaded from node_modules.
// Both launchers (headless fork, Electron utilityProcess) start out/worktree/worktree-process.js;
// `npm run build` and the test setup run this script, so the bundle is never older than a test run.
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'rolldown';
import { BUNDLED_WORKTREE_ENTRY } from '../main/host/worktree-launcher.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the launchers look for the bundle (main/host/worktree-launcher.ts). */
const WORKTREE_BUNDLE_DIR = path.dirname(BUNDLED_WORKTREE_ENTRY);

/** Packages with native (.node) parts: required at run time from node_modules, never bundled. */
const NATIVE_PACKAGES = /^(better-sqlite3|@parcel\/watcher|@napi-rs\/blake-hash)(\/|$)/;

/** The SDK's runtime shim, replaced by main/worktree/sdk-shims.ts (which says why). */
function sdkShimsWithoutEagerAjv(): Plugin {
  return {
    name: 'grove-sdk-shims',
    resolveId: (id) =>
      id === '@modelcontextprotocol/server/_shims' ? `${ROOT}main/worktree/sdk-shims.ts` : null,
  };
}

/**
 * Files of earlier builds are removed once they are this old. Not at once: a worktree process
 * started from the previous build may still be about to load its lazy chunks (right after
 * `listening`), and a test run or `grove serve` may be using it while another build runs.
 */
const STALE_AFTER_MS = 10 * 60_000;

export async function buildWorktreeBundle(): Promise<void> {
  const { output } = await build({
    input: {
      'worktree-process': `${ROOT}main/worktree/worktree-process.ts`,
      'pool-worker': `${ROOT}main/worktree/pool-worker.ts`,
    },
    platform: 'node',
    plugins: [sdkShimsWithoutEagerAjv()],
    external: (id) => NATIVE_PACKAGES.test(id) || id.endsWith('.node'),
    logLevel: 'warn',
    output: {
      dir: WORKTREE_BUNDLE_DIR,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: '[name]-[hash].js',
      sourcemap: true,
      // A chunk's source stays in the V8 heap while the process runs: a single non-ASCII
      // character makes V8 keep all of it as two bytes per character, and comments are half of
      // some dependencies' text. ASCII escapes and no comments: 1.2 MB less RSS per worktree
      // process (docs/performance.md, idle memory); the source maps still point at the sources.
      charset: 'ascii',
      comments: false,
    },
  });
  const current = new Set(output.flatMap((file) => [file.fileName, `${file.fileName}.map`]));
  for (const name of await readdir(WORKTREE_BUNDLE_DIR)) {
    if (current.has(name)) continue;
    const file = `${WORKTREE_BUNDLE_DIR}/${name}`;
    const { mtimeMs } = await stat(file);
    if (Date.now() - mtimeMs > STALE_AFTER_MS) await rm(file, { force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWorktreeBundle();
}
