// Writes a worktree's server entry into an MCP client's JSON config file — Claude Desktop's
// claude_desktop_config.json or a worktree's .mcp.json (Claude Code) — carefully: every other entry
// and key is kept, the old file is backed up beside it, the new one is written to a temp file and
// renamed over the old (atomic), and a file that is not valid JSON is refused without being touched.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import {
  claudeCodeProjectEntry,
  claudeDesktopEntry,
  serverName,
  type ClientConfigTarget,
} from '../../shared/client-configs.ts';
import type { ConfigWriteResult } from '../../shared/host-api.ts';

/** The config file cannot be updated safely (not JSON, unexpected shape); it was not touched. */
export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
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
}

/** Adds or replaces `<key>.<name>` in a JSON config file, keeping everything else. */
export async function writeServerEntry(options: WriteEntryOptions): Promise<ConfigWriteResult> {
  const { file, key, name, entry } = options;
  let original: string | null;
  try {
    original = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    original = null;
  }

  let config: Record<string, unknown> = {};
  if (original !== null && original.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(original.replace(/^\uFEFF/, ''));
    } catch (error) {
      throw new ConfigFileError(
        `${file} is not valid JSON (${(error as Error).message}); it was left unchanged. Fix or move it, then try again.`,
      );
    }
    if (!isPlainObject(parsed)) {
      throw new ConfigFileError(`${file} does not hold a JSON object; it was left unchanged.`);
    }
    config = parsed;
  }
  const servers = config[key] ?? {};
  if (!isPlainObject(servers)) {
    throw new ConfigFileError(`"${key}" in ${file} is not an object; the file was left unchanged.`);
  }
  const updated = { ...config, [key]: { ...servers, [name]: entry } };

  await mkdir(path.dirname(file), { recursive: true });
  let backupPath: string | null = null;
  let mode = options.mode ?? 0o600;
  if (original !== null) {
    mode = (await stat(file)).mode & 0o777;
    backupPath = await backUp(file);
  }
  await writeAtomically(file, `${JSON.stringify(updated, null, 2)}\n`, mode);
  return { path: file, backupPath, serverName: name };
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

/** Adds the worktree to Claude Desktop (mcp-remote over SSE, token through the env trick). */
export function addToClaudeDesktop(
  target: ClientConfigTarget,
  configPath: string = claudeDesktopConfigPath(),
): Promise<ConfigWriteResult> {
  return writeServerEntry({
    file: configPath,
    key: 'mcpServers',
    name: serverName(target),
    entry: claudeDesktopEntry(target),
    mode: 0o600, // it holds the token
  });
}

/** Adds the worktree to its own `.mcp.json` (Claude Code; the token comes from $GROVE_TOKEN). */
export function addToProjectMcpJson(target: ClientConfigTarget): Promise<ConfigWriteResult> {
  return writeServerEntry({
    file: path.join(target.path, '.mcp.json'),
    key: 'mcpServers',
    name: serverName(target),
    entry: claudeCodeProjectEntry(target),
    mode: 0o644, // no secret inside: ${GROVE_TOKEN} is expanded by Claude Code
  });
}
