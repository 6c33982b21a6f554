// Writes a worktree's server entry into an MCP client's JSON config file — Claude Desktop's
// claude_desktop_config.json or a worktree's .mcp.json (Claude Code) — carefully: only Grove's own
// entry changes (every other entry keeps its bytes and formatting: json-entry-edit.ts), the old file
// is backed up, the new one is written to a temp file and renamed over the old (atomic), and a file
// that is not valid JSON is refused without being touched (the error never quotes it). What would
// be written is asked first (previewServerEntry: the window shows it, for Claude Desktop's file as
// for .mcp.json); a write given the text the user saw refuses when the file changed since. A file in a worktree is repository content, so it goes through the
// confined file layer: read with a size cap, never through a symlink, special file or a symlinked
// directory (even one pointing inside), the replacement written the same way; its backup goes to
// the app's data directory, never into the worktree (where it would show as a change). A config in
// the user's home may follow the user's own symlinks (dotfiles), is backed up beside itself, and is
// written atomically.
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, open, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import {
  claudeCodeProjectEntry,
  claudeDesktopEntry,
  serverName,
  type ClientConfigTarget,
} from '../../shared/client-configs.ts';
import type { ConfigPreview, ConfigWriteResult } from '../../shared/host-api.ts';
import {
  entryKindInsideRoot,
  lstatNoFollowInsideRoot,
  readFileInsideRoot,
  realWorktreeRoot,
  writeFileAtomicInsideRoot,
} from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';
import { duplicateOnEntryPath, setJsonEntry } from './json-entry-edit.ts';

/** The config file cannot be updated safely (not JSON, unexpected shape); it was not touched. */
function configFileRefusal(message: string): UserError {
  return new UserError(message, { code: 'refused' });
}

/** Env variable that overrides Claude Desktop's config path (tests, unusual installs). */
export const CLAUDE_DESKTOP_CONFIG_ENV = 'GROVE_CLAUDE_DESKTOP_CONFIG';

/** Where Claude Desktop keeps its config on this platform ($GROVE_CLAUDE_DESKTOP_CONFIG wins). */
export function claudeDesktopConfigPath(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  const override = env[CLAUDE_DESKTOP_CONFIG_ENV];
  if (override) return path.resolve(override);
  const file = 'claude_desktop_config.json';
  if (platform === 'darwin') {
    return path.join(home, 'Library', 'Application Support', 'Claude', file);
  }
  if (platform === 'win32') {
    return path.win32.join(
      env['APPDATA'] ?? path.win32.join(home, 'AppData', 'Roaming'),
      'Claude',
      file,
    );
  }
  return path.join(env['XDG_CONFIG_HOME'] ?? path.join(home, '.config'), 'Claude', file);
}

export interface WriteEntryOptions {
  /** The JSON file to update (created, with its directory, if missing). */
  file: string;
  /** Top-level key holding the servers (`mcpServers` for Claude Desktop and Claude Code). */
  key: string;
  name: string;
  entry: Record<string, unknown>;
  /** Permissions of a newly created file (an existing file keeps its own). */
  mode?: number;
  /**
   * The worktree root `file` is inside (a project-level config): every access then goes through
   * the confined file layer. Absent for configs in the user's home.
   */
  confinedTo?: string;
  /** Where the backup of a confined file goes (the app's data directory); required with it. */
  backupDir?: string;
}

/** The subdirectory of the data directory that holds backups of worktree config files. */
export const CONFIG_BACKUPS_DIR = 'config-backups';

/** Project-level config files bigger than this are refused (a config is a few kilobytes). */
export const MAX_PROJECT_CONFIG_BYTES = 1024 * 1024;

/** How a config file is read and written: plainly (the user's home) or confined to a worktree. */
interface ConfigFileAccess {
  /** The text, or null when there is no file. */
  read(): Promise<string | null>;
  /** Permissions of the existing file. */
  mode(): Promise<number>;
  backUp(original: string): Promise<string>;
  write(text: string, mode: number): Promise<void>;
}

/**
 * A config in the user's home: a symlink there is the user's own (dotfiles), so the file it points
 * at is the one read, backed up and replaced (atomically, in its own directory); the link stays.
 */
async function homeAccess(requested: string): Promise<ConfigFileAccess> {
  const file = await realpath(requested).catch(() => requested);
  return {
    async read() {
      try {
        return await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        return null;
      }
    },
    mode: async () => (await stat(file)).mode & 0o777,
    backUp: () => backUp(file),
    async write(text, mode) {
      await mkdir(path.dirname(file), { recursive: true });
      await writeAtomically(file, text, mode);
    },
  };
}

async function confinedAccess(
  root: string,
  file: string,
  backupDir: string | undefined,
): Promise<ConfigFileAccess> {
  const realRoot = await realWorktreeRoot(root);
  const relative = path.relative(root, file).split(path.sep).join('/');
  const refuse = (why: string) =>
    configFileRefusal(`${relative} in the worktree ${why}; nothing was written.`);
  const check = (): void => {
    const kind = entryKindInsideRoot(realRoot, relative);
    if (kind === 'symlink') throw refuse('is a symbolic link, which Grove never writes through');
    if (kind === 'directory') throw refuse('is a directory');
    if (kind === 'special') throw refuse('is a special file (FIFO, socket or device)');
  };
  const confined = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      // A refusal already says nothing was written; the confined layer's own errors do not yet.
      if (error instanceof UserError && error.code !== 'refused')
        throw configFileRefusal(`${error.message}; nothing was written.`);
      throw error;
    }
  };
  return {
    read: () =>
      confined(async () => {
        check();
        if (entryKindInsideRoot(realRoot, relative) === 'missing') return null;
        const bytes = await readFileInsideRoot(realRoot, relative, {
          maxBytes: MAX_PROJECT_CONFIG_BYTES,
        });
        return bytes.toString('utf8');
      }),
    mode: async () => (lstatNoFollowInsideRoot(realRoot, relative)?.mode ?? 0o644) & 0o777,
    backUp: async (original) => {
      if (backupDir === undefined) throw new Error('a worktree config needs a backup directory');
      // Named after the worktree (its folder name and a hash of its path) and the file.
      const id = createHash('sha256').update(root).digest('hex').slice(0, 8);
      const name = `${path.basename(root).replace(/[^\w.-]/g, '_')}-${id}-${relative.replace(/\//g, '_')}`;
      return writeBackup(path.join(backupDir, name), original);
    },
    write: (text, mode) =>
      confined(async () => {
        check();
        await writeFileAtomicInsideRoot(realRoot, relative, text, { mode });
      }),
  };
}

/** What `writeServerEntry` would write, worked out without writing anything. */
async function plan(options: WriteEntryOptions) {
  const { file, key, name, entry } = options;
  const access =
    options.confinedTo === undefined
      ? await homeAccess(file)
      : await confinedAccess(options.confinedTo, file, options.backupDir);
  const original = await access.read();
  const bom = original?.startsWith('\uFEFF') ? '\uFEFF' : '';
  const body = (original ?? '').slice(bom.length);
  if (body.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      // JSON.parse's message quotes the text around the problem: never echo the file.
      throw configFileRefusal(
        `${file} is not valid JSON; it was left unchanged. Fix or move it, then try again.`,
      );
    }
    if (!isPlainObject(parsed)) {
      throw configFileRefusal(`${file} does not hold a JSON object; it was left unchanged.`);
    }
    if (parsed[key] !== undefined && !isPlainObject(parsed[key])) {
      throw configFileRefusal(`"${key}" in ${file} is not an object; the file was left unchanged.`);
    }
    const duplicate = duplicateOnEntryPath(body, key, name);
    if (duplicate !== undefined) {
      throw configFileRefusal(
        `"${duplicate}" appears more than once in ${file} (clients read the last one, Grove would ` +
          'edit the first); the file was left unchanged. Remove the duplicate, then try again.',
      );
    }
  }
  const edit = setJsonEntry(body, key, name, entry);
  return { access, original, text: bom + edit.text, unchanged: edit.unchanged };
}

/** What adding the entry would write: the file's text now and after, nothing written. */
export async function previewServerEntry(options: WriteEntryOptions): Promise<ConfigPreview> {
  const { original, text, unchanged } = await plan(options);
  return { path: options.file, serverName: options.name, before: original, after: text, unchanged };
}

/**
 * Adds or replaces `<key>.<name>` in a JSON config file, keeping everything else. With `expected`
 * (the text a preview showed; null: no file), a file that changed since is refused untouched.
 */
export async function writeServerEntry(
  options: WriteEntryOptions & { expected?: string | null },
): Promise<ConfigWriteResult> {
  const { file, name } = options;
  const { access, original, text, unchanged } = await plan(options);
  if (options.expected !== undefined && options.expected !== original) {
    throw configFileRefusal(
      `${file} changed since it was shown; nothing was written. Look at the new preview, then try again.`,
    );
  }
  if (unchanged) return { path: file, backupPath: null, serverName: name, unchanged: true };
  let backupPath: string | null = null;
  let mode = options.mode ?? 0o600;
  if (original !== null) {
    mode = await access.mode();
    backupPath = await access.backUp(original);
  }
  await access.write(text, mode);
  return { path: file, backupPath, serverName: name, unchanged: false };
}

/** Writes `text` to `<base>-<time>.json` in a private directory (never over an earlier backup). */
async function writeBackup(base: string, text: string): Promise<string> {
  await mkdir(path.dirname(base), { recursive: true, mode: 0o700 });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  for (let attempt = 0; ; attempt += 1) {
    const candidate = `${base}-${stamp}${attempt ? `-${attempt}` : ''}.json`;
    try {
      const handle = await open(candidate, 'wx', 0o600);
      try {
        await handle.writeFile(text, 'utf8');
      } finally {
        await handle.close();
      }
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 100) throw error;
    }
  }
}

/** Copies `file` to `<file>.grove-backup-<time>` (never overwriting an earlier backup). */
async function backUp(file: string): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  for (let attempt = 0; ; attempt += 1) {
    const candidate = `${file}.grove-backup-${stamp}${attempt ? `-${attempt}` : ''}`;
    try {
      await copyFile(file, candidate, constants.COPYFILE_EXCL);
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 100) throw error;
    }
  }
}

/** Writes a temp file in the same directory, flushes it, and renames it over `file`. */
async function writeAtomically(file: string, text: string, mode: number): Promise<void> {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where the worktree's Claude Desktop entry is written (Grove's own stdio bridge: client-configs.ts). */
function claudeDesktopOptions(target: ClientConfigTarget, configPath: string): WriteEntryOptions {
  return {
    file: configPath,
    key: 'mcpServers',
    name: serverName(target),
    entry: claudeDesktopEntry(target),
    mode: 0o600, // other entries may hold tokens
  };
}

/** What "Add to Claude Desktop" would write, for the user to see first. */
export function previewClaudeDesktop(
  target: ClientConfigTarget,
  configPath: string = claudeDesktopConfigPath(),
): Promise<ConfigPreview> {
  return previewServerEntry(claudeDesktopOptions(target, configPath));
}

/**
 * Adds the worktree to Claude Desktop's config. With `expected` (what the preview showed), refuses
 * when the file changed since.
 */
export function addToClaudeDesktop(
  target: ClientConfigTarget,
  configPath: string = claudeDesktopConfigPath(),
  expected?: string | null,
): Promise<ConfigWriteResult> {
  return writeServerEntry({
    ...claudeDesktopOptions(target, configPath),
    ...(expected !== undefined ? { expected } : {}),
  });
}

/** Where a worktree's `.mcp.json` entry is written, and its backup kept (the data directory). */
function projectMcpJsonOptions(target: ClientConfigTarget, dataDir: string): WriteEntryOptions {
  return {
    file: path.join(target.path, '.mcp.json'),
    key: 'mcpServers',
    name: serverName(target),
    entry: claudeCodeProjectEntry(target),
    mode: 0o644, // no secret inside: ${GROVE_TOKEN_<NAME>} is expanded by Claude Code
    confinedTo: target.path, // repository content: untrusted
    backupDir: path.join(dataDir, CONFIG_BACKUPS_DIR),
  };
}

/** What "Add to project .mcp.json" would write, for the user to see first. */
export function previewProjectMcpJson(
  target: ClientConfigTarget,
  dataDir: string,
): Promise<ConfigPreview> {
  return previewServerEntry(projectMcpJsonOptions(target, dataDir));
}

/**
 * Adds the worktree to its own `.mcp.json` (Claude Code; the token comes from the worktree's own
 * variable, tokenEnvVar). With
 * `expected` (what the preview showed), refuses when the file changed since.
 */
export function addToProjectMcpJson(
  target: ClientConfigTarget,
  dataDir: string,
  expected?: string | null,
): Promise<ConfigWriteResult> {
  return writeServerEntry({
    ...projectMcpJsonOptions(target, dataDir),
    ...(expected !== undefined ? { expected } : {}),
  });
}
