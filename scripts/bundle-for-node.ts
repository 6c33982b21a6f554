// The one rolldown configuration for Grove's Node bundles: the worktree process
// (build-worktree.ts, out/worktree/) and the `grove` command line (build-cli.ts, out/cli/). Each
// bundle is one flat directory of ES modules — its entries and the chunks they share, dynamic
// imports kept as chunks of their own so a process loads only what it runs — because the worker
// pool finds its worker entry (pool-worker.js) next to the module that starts it. Native modules
// stay outside, loaded from node_modules. A process then loads a few files instead of hundreds of
// modules under type stripping: it starts sooner and is smaller (docs/performance.md).
import { readdir, rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'rolldown';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

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
 * Packages whose `main` is a UMD build that requires its own files by computed names (jsonc-parser:
 * `require('./impl/format')` inside a factory), which a bundler cannot follow: their ES module
 * build (`module`) is bundled instead.
 */
const ES_MODULE_BUILDS: Record<string, string> = {
  'jsonc-parser': `${ROOT}node_modules/jsonc-parser/lib/esm/main.js`,
};

function esModuleBuilds(): Plugin {
  return {
    name: 'grove-es-module-builds',
    resolveId: (id) => ES_MODULE_BUILDS[id] ?? null,
  };
}

/**
 * Files of earlier builds are removed once they are this old. Not at once: a process started from
 * the previous build may still be about to load its lazy chunks (a worktree process right after
 * `listening`, a running `grove serve`), and a test run may be using it while another build runs.
 */
const STALE_AFTER_MS = 10 * 60_000;

/**
 * Bundles `input` (chunk name -> source file, relative to the repository root) into `dir`. The
 * directory must be two levels below the root, like the sources (main/<folder>/): modules find
 * files of the checkout relative to themselves (`new URL('../../out/renderer/', import.meta.url)`).
 */
export async function bundleForNode(input: Record<string, string>, dir: string): Promise<void> {
  const { output } = await build({
    input: Object.fromEntries(
      Object.entries(input).map(([name, file]) => [name, `${ROOT}${file}`]),
    ),
    platform: 'node',
    plugins: [sdkShimsWithoutEagerAjv(), esModuleBuilds()],
    external: (id) => NATIVE_PACKAGES.test(id) || id.endsWith('.node'),
    logLevel: 'warn',
    output: {
      dir,
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
  for (const name of await readdir(dir)) {
    if (current.has(name)) continue;
    const file = `${dir}/${name}`;
    const { mtimeMs } = await stat(file);
    if (Date.now() - mtimeMs > STALE_AFTER_MS) await rm(file, { force: true });
  }
}
