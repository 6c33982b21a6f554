// Where specs live and how they are found: `*.spec.yaml` files under `.notarai/`. Kept apart from
// spec-loader.ts (the `yaml` parser, the schema, the globs) because the MCP side needs only this
// before the engine is loaded: the spec resources list and read files by path (reconcile-mcp.ts).
import { readFileInsideRoot, withDirectoryInsideRoot } from '../../platform/confined-fs.ts';
import { compareUtf8 } from '../../platform/path-order.ts';

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

/** What spec discovery found: spec paths, and directories it could not look into, and why. */
export interface SpecDiscovery {
  /** `.notarai/**\/*.spec.yaml` (POSIX paths relative to root), in UTF-8 byte order. */
  paths: string[];
  /** Directories under `.notarai/` that could not be listed, with the reason (never missing ones). */
  problems: { path: string; message: string }[];
  /**
   * Those of `paths` that are not regular files (symlinks, special files): an edit to what a
   * symlink points at is reported on the target's path, so their text is never reused
   * (spec-loader.ts, reloadSpecs).
   */
  irregular: Set<string>;
}

/**
 * Finds `.notarai/**\/*.spec.yaml`. Directories are listed through the confined layer (a
 * `.notarai` that leads outside the worktree is a problem named in the result, and lists nothing)
 * and symlinked directories are not entered (no cycles). Every other entry with the suffix is
 * listed, symlinks and special files included: the loader decides whether it may be read, and says
 * why not.
 */
export async function discoverSpecs(root: string): Promise<SpecDiscovery> {
  const found: string[] = [];
  const irregular = new Set<string>();
  const problems: SpecDiscovery['problems'] = [];
  const walk = async (relativeDir: string): Promise<void> => {
    const subdirectories: string[] = [];
    try {
      await withDirectoryInsideRoot(root, relativeDir, async (directory) => {
        for (const { name, dirent } of directory.entries) {
          if (name.includes('\ufffd')) continue; // not a name git or a spec path can hold
          const relative = `${relativeDir}/${name}`;
          if (dirent.isDirectory()) {
            if (!SKIPPED_DIRS.has(name)) subdirectories.push(relative);
          } else if (name.endsWith(SPEC_SUFFIX)) {
            found.push(relative);
            if (!dirent.isFile()) irregular.add(relative);
          }
        }
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!message.startsWith('no such file or directory')) {
        problems.push({ path: relativeDir, message: `cannot look for specs here: ${message}` });
      }
      return;
    }
    for (const relative of subdirectories) await walk(relative);
  };
  await walk(NOTARAI_DIR);
  return { paths: found.sort(compareUtf8), problems, irregular };
}

/** The spec paths discoverSpecs finds (for the spec resources list). */
export async function discoverSpecPaths(root: string): Promise<string[]> {
  return (await discoverSpecs(root)).paths;
}

/**
 * The text of a spec file, read through the confined layer: a spec that is a symlink out of the
 * worktree, a FIFO, a device or over MAX_SPEC_BYTES is refused with a UserError naming the problem
 * (never anything of the content it refused).
 */
export async function readSpecText(root: string, relative: string): Promise<string> {
  const bytes = await readFileInsideRoot(root, relative, { maxBytes: MAX_SPEC_BYTES });
  return bytes.toString('utf8');
}
