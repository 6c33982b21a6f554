// The worktree process's bundle (out/worktree/, built by scripts/build-worktree.ts in the test
// setup) holds only the worktree stack: no host, chat, Electron, shell, renderer or test code. The
// layers rule (eslint-rules/layers.js) keeps imports pointing that way; this checks the result,
// module by module, from the bundle's own source maps.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_WORKTREE_ENTRY } from '../host/worktree-launcher.ts';

const BUNDLE_DIR = path.dirname(BUNDLED_WORKTREE_ENTRY);
const ROOT = path.resolve(BUNDLE_DIR, '../..');

/**
 * The files of the current build: the entries and every chunk they import, statically or
 * dynamically (the directory may still hold an earlier build's chunks for a while).
 */
async function currentBuild(): Promise<string[]> {
  const files = new Set<string>();
  const visit = async (name: string): Promise<void> => {
    if (files.has(name)) return;
    files.add(name);
    const code = await readFile(path.join(BUNDLE_DIR, name), 'utf8');
    for (const [, chunk] of code.matchAll(/(?:from|import\()\s*"\.\/([^"]+\.js)"/g)) {
      await visit(chunk!);
    }
  };
  for (const entry of ENTRIES) await visit(entry);
  return [...files];
}

const ENTRIES = ['worktree-process.js', 'pool-worker.js'];

/** Every source module in the bundle, relative to the repository root. */
async function bundledModules(): Promise<string[]> {
  const modules = new Set<string>();
  for (const name of await currentBuild()) {
    // The bundler's own helpers (__require, __commonJSMin) come from no source file: no map.
    if (name.startsWith('rolldown-runtime-')) continue;
    const map = JSON.parse(await readFile(path.join(BUNDLE_DIR, `${name}.map`), 'utf8')) as {
      sources: string[];
    };
    for (const source of map.sources) {
      modules.add(path.relative(ROOT, path.resolve(BUNDLE_DIR, source)).split(path.sep).join('/'));
    }
  }
  return [...modules].sort();
}

describe('the worktree bundle', () => {
  it('holds the worktree stack and nothing of the host, chat, Electron, renderer or tests', async () => {
    const modules = await bundledModules();
    const ours = modules.filter((file) => !file.startsWith('node_modules/'));
    // It is the real bundle: the entry, the engine, the tools and the listener are in it.
    expect(ours).toEqual(
      expect.arrayContaining([
        'main/worktree/worktree-process.ts',
        'main/reconcile/reconcile-engine.ts',
        'main/tools/read-file.ts',
        'main/mcp/mcp-listener.ts',
        'main/platform/confined-fs/reads.ts',
        'main/worktree/pool-worker.ts',
        'main/platform/worker-pool.ts',
      ]),
    );
    const foreign = ours.filter((file) =>
      /^(main\/(host|chat|electron|headless|testing)\/|renderer\/|e2e\/)|\.test\.ts$/.test(file),
    );
    expect(foreign).toEqual([]);
    expect(modules.filter((file) => /node_modules\/electron\//.test(file))).toEqual([]);
  });
});
