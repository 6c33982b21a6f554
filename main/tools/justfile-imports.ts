// What a worktree's justfile pulls in (`import`, `mod`), checked before `just` reads any of it:
// `just` follows an import or a module to any path, and `list_just_tasks` would then show an
// outside file's recipes, doc comments and defaults, or `just`'s error would name (and quote) it.
// Each `import`/`mod` of the justfile, and of every file it pulls in from inside the worktree, must
// resolve (through the confined layer, symlinks followed) to a regular file inside the worktree,
// or to nothing at all (`just` then says it is missing, naming an in-worktree path). Anything else
// — an absolute or `~` path leaving the worktree, `..` above it, a symlink out, a FIFO, a string
// form Grove does not read (`x'…'` expands variables) — refuses the whole justfile, naming only the
// in-worktree file and line, never the path it leads to (no oracle of what exists outside).
import path from 'node:path';
import {
  readDirectoryEntries,
  readFileInsideRoot,
  statInsideRoot,
  type StattedPath,
} from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';

/** Most files (the justfile, its imports and modules) checked; past it the justfile is refused. */
export const MAX_JUSTFILE_SOURCES = 64;
/** Largest justfile or imported file read for the check. */
export const MAX_JUSTFILE_SOURCE_BYTES = 1024 * 1024;

/** A module's file in its directory (`mod foo` → `foo/<one of these>`), compared ignoring case. */
const MODULE_FILE_NAMES = new Set(['mod.just', 'justfile', '.justfile']);

/** `import` or `mod` at the start of a line (top-level items in just are never indented). */
const STATEMENT = /^(import|mod)(\?)?(?=[ \t])[ \t]+(.*)$/u;
/** A plain one-line string: `'…'`, `"…"` without escapes, or `'''…'''`; then maybe a comment. */
const PLAIN_STRING = /^(?:'''([^']*)'''|'([^'\n]*)'|"([^"\\\n]*)")[ \t]*(?:#.*)?$/u;
const MODULE_NAME = /^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*(.*)$/u;

interface Source {
  /** Root-relative POSIX path of a file inside the worktree. */
  relative: string;
  /** Its directory, root-relative ('' for the root). */
  directory: string;
}

/** One `import`/`mod` line: where it is and what it asks for. */
interface Reference {
  from: Source;
  line: number;
  keyword: 'import' | 'mod';
  /** The path written (undefined: a module by name only). */
  written: string | undefined;
  /** The module's name (mod only). */
  name: string | undefined;
}

function refusal(reference: Pick<Reference, 'from' | 'line' | 'keyword'>, why: string): UserError {
  return new UserError(
    `${reference.from.relative} line ${reference.line}: its \`${reference.keyword}\` ${why}; ` +
      'Grove refuses a justfile that pulls in anything from outside the worktree, before just ' +
      'reads it',
    { code: 'refused' },
  );
}

/** The `import` and `mod` lines of one source file. */
function references(source: Source, text: string): Reference[] {
  const found: Reference[] = [];
  text.split(/\r?\n/u).forEach((raw, index) => {
    const statement = STATEMENT.exec(raw);
    if (!statement) return;
    const keyword = statement[1] as 'import' | 'mod';
    const rest = statement[3]!.trim();
    const at = { from: source, line: index + 1, keyword };
    if (rest.startsWith(':=') || rest.startsWith('=') || rest.startsWith(':')) return; // assignment or recipe
    if (keyword === 'import') {
      const plain = PLAIN_STRING.exec(rest);
      if (!plain)
        throw refusal(
          at,
          'names its file in a form Grove does not check (use a plain quoted path)',
        );
      found.push({ ...at, written: plain[1] ?? plain[2] ?? plain[3], name: undefined });
      return;
    }
    const module = MODULE_NAME.exec(rest);
    if (!module) throw refusal(at, 'is written in a form Grove does not check');
    const after = module[2]!.trim();
    if (after === '' || after.startsWith('#')) {
      found.push({ ...at, written: undefined, name: module[1] });
      return;
    }
    const plain = PLAIN_STRING.exec(after);
    if (!plain)
      throw refusal(at, 'names its path in a form Grove does not check (use a plain quoted path)');
    found.push({ ...at, written: plain[1] ?? plain[2] ?? plain[3], name: module[1] });
  });
  return found;
}

/**
 * What a path written in `from` (relative to its directory, or absolute) names inside the root:
 * the checked path, undefined when nothing is there, or a refusal when it leads outside or to
 * something that is neither a file nor a directory.
 */
async function resolveReference(
  root: string,
  reference: Reference,
  written: string,
): Promise<StattedPath | undefined> {
  if (written === '' || written.startsWith('~') || written.includes('\0')) {
    throw refusal(reference, 'leads outside the worktree');
  }
  const absolute = path.resolve(root, reference.from.directory, written);
  const relative = path.relative(root, absolute);
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    throw refusal(reference, 'leads outside the worktree');
  }
  let found: StattedPath;
  try {
    found = await statInsideRoot(root, relative === '' ? '.' : relative);
  } catch (error) {
    if (error instanceof UserError && error.code === 'not-found') return undefined;
    throw refusal(reference, 'leads outside the worktree (or into .git)');
  }
  if (!found.stats.isFile() && !found.stats.isDirectory()) {
    throw refusal(reference, 'names something other than a file or a directory');
  }
  return found;
}

/**
 * The module files `mod` may use in a directory inside the root (just: mod.just, justfile,
 * .justfile, any case), each checked like the path written.
 */
async function moduleFilesIn(
  root: string,
  reference: Reference,
  directory: StattedPath,
): Promise<string[]> {
  const entries = await readDirectoryEntries(Buffer.from(directory.realPath));
  const files: string[] = [];
  for (const entry of entries ?? []) {
    const name = entry.name.toString('utf8');
    if (!MODULE_FILE_NAMES.has(name.toLowerCase())) continue;
    const absolute = path.join(directory.realPath, name);
    const found = await resolveReference(root, reference, absolute);
    if (found?.stats.isFile()) files.push(found.relativePath);
    else if (found !== undefined) throw refusal(reference, 'names a directory');
  }
  return files;
}

/**
 * Checks the justfile at `justfile` (root-relative) and everything it imports or mods, recursively:
 * resolves when all of it stays inside the worktree, else throws a UserError naming the file and
 * line that leads out.
 */
export async function checkJustfileSources(root: string, justfile: string): Promise<void> {
  const queue: string[] = [justfile];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const relative = queue.shift()!;
    if (seen.has(relative)) continue;
    seen.add(relative);
    if (seen.size > MAX_JUSTFILE_SOURCES) {
      throw new UserError(
        `${justfile} pulls in more than ${MAX_JUSTFILE_SOURCES} files (imports and modules); ` +
          'Grove does not check more',
        { code: 'too-large' },
      );
    }
    const text = (
      await readFileInsideRoot(root, relative, { maxBytes: MAX_JUSTFILE_SOURCE_BYTES })
    ).toString('utf8');
    const directory = path.posix.dirname(relative);
    const source = { relative, directory: directory === '.' ? '' : directory };
    for (const reference of references(source, text)) {
      if (reference.keyword === 'import') {
        const found = await resolveReference(root, reference, reference.written!);
        if (found === undefined) continue;
        if (!found.stats.isFile()) throw refusal(reference, 'names a directory');
        queue.push(found.relativePath);
        continue;
      }
      // `mod name` looks for name.just, then name/<module file>; `mod name 'path'`, for the file
      // or the directory holding a module file.
      const written =
        reference.written === undefined
          ? [`${reference.name}.just`, reference.name!]
          : [reference.written];
      for (const candidate of written) {
        const found = await resolveReference(root, reference, candidate);
        if (found === undefined) continue;
        if (found.stats.isFile()) queue.push(found.relativePath);
        else queue.push(...(await moduleFilesIn(root, reference, found)));
      }
    }
  }
}
