// Where specs live and how they are found: `*.spec.yaml` files under `.notarai/`. Kept apart from
// spec-loader.ts (the `yaml` parser, the schema, the globs) because the MCP side needs only this
// before the engine is loaded: the spec resources list and read files by path (reconcile-mcp.ts).
import { readFileInsideRoot, withDirectoryInsideRoot } from '../platform/confined-fs.ts';

export const NOTARAI_DIR = '.notarai';
export const SPEC_SUFFIX = '.spec.yaml';
/** Specs bigger than this are reported, not read (a spec is a page of YAML, not megabytes). */
export const MAX_SPEC_BYTES = 2 * 1024 * 1024;

/** Directories under `.notarai/` that never hold specs. */
const SKIPPED_DIRS = new Set(['.cache']);

/** True for a POSIX path (relative to the root) that names a spec file. */
export function isSpecPath(relative: string): boolean {
  return relative.startsWith(`${NOTARAI_DIR}/`) && relative.endsWith(SPEC_SUFFIX);
}

/**
 * Lists `.notarai/**\/*.spec.yaml` (POSIX paths relative to root), sorted. Directories are listed
 * through the confined layer (a `.notarai` that leads outside the worktree lists nothing) and
 * symlinked directories are not entered (no cycles); a symlinked spec file is listed, and the
 * loader decides whether it may be read.
 */
export async function discoverSpecPaths(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relativeDir: string): Promise<void> => {
    const subdirectories: string[] = [];
    try {
      await withDirectoryInsideRoot(root, relativeDir, async (directory) => {
        for (const { name, dirent } of directory.entries) {
          if (name.includes('\ufffd')) continue; // not a name git or a spec path can hold
          const relative = `${relativeDir}/${name}`;
          if (dirent.isDirectory()) {
            if (!SKIPPED_DIRS.has(name)) subdirectories.push(relative);
          } else if ((dirent.isFile() || dirent.isSymbolicLink()) && name.endsWith(SPEC_SUFFIX)) {
            found.push(relative);
          }
        }
      });
    } catch {
      return; // missing, or not a directory inside the worktree
    }
    for (const relative of subdirectories) await walk(relative);
  };
  await walk(NOTARAI_DIR);
  return found.sort();
}

/**
 * The text of a spec file, read through the confined layer: a spec that is a symlink out of the
 * worktree, a FIFO, a device or over MAX_SPEC_BYTES is refused with a ToolError naming the problem
 * (never anything of the content it refused).
 */
export async function readSpecText(root: string, relative: string): Promise<string> {
  const bytes = await readFileInsideRoot(root, relative, { maxBytes: MAX_SPEC_BYTES });
  return bytes.toString('utf8');
}
