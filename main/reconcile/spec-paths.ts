// Where specs live and how they are found: `*.spec.yaml` files under `.notarai/`. Kept apart from
// spec-loader.ts (the `yaml` parser, the schema, the globs) because the MCP side needs only this
// before the engine is loaded: the spec resources list and read files by path (reconcile-mcp.ts).
import { readdir } from 'node:fs/promises';
import path from 'node:path';

export const NOTARAI_DIR = '.notarai';
export const SPEC_SUFFIX = '.spec.yaml';
/** Directories under `.notarai/` that never hold specs. */
const SKIPPED_DIRS = new Set(['.cache']);

/** True for a POSIX path (relative to the root) that names a spec file. */
export function isSpecPath(relative: string): boolean {
  return relative.startsWith(`${NOTARAI_DIR}/`) && relative.endsWith(SPEC_SUFFIX);
}

/** Lists `.notarai/**\/*.spec.yaml` (POSIX paths relative to root), sorted. */
export async function discoverSpecPaths(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relativeDir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(path.join(root, relativeDir), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const relative = `${relativeDir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await walk(relative);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith(SPEC_SUFFIX)) {
        found.push(relative);
      }
    }
  };
  await walk(NOTARAI_DIR);
  return found.sort();
}
