// The config writer on real temp files: keeps every other entry and key, backs the old file up,
// replaces its own entry, creates missing files and directories, refuses a file that is not JSON
// (byte for byte untouched, no temp file left), and picks Claude Desktop's path per platform.
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { serverUrls } from '../../shared/model.ts';
import { makeTempDir } from '../testing/temp-repo.ts';
import {
  addToClaudeDesktop,
  addToProjectMcpJson,
  claudeDesktopConfigPath,
  ConfigFileError,
} from './client-config-writer.ts';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('grove-config-writer-');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const target = (root: string) => ({
  branch: 'feature-x',
  path: root,
  urls: serverUrls(43117),
  token: 'T',
});

describe('client config writer', () => {
  test('adds to an existing Claude Desktop config, keeping every other entry, with a backup', async () => {
    const file = path.join(dir, 'claude_desktop_config.json');
    const before = `${JSON.stringify(
      {
        globalShortcut: 'Ctrl+Space',
        mcpServers: { other: { command: 'node', args: ['server.js'] } },
      },
      null,
      4,
    )}\n`;
    await writeFile(file, before);

    const result = await addToClaudeDesktop(target(dir), file);
    expect(result.path).toBe(file);
    expect(result.serverName).toBe('grove-feature-x');
    const after = JSON.parse(await readFile(file, 'utf8'));
    expect(after.globalShortcut).toBe('Ctrl+Space');
    expect(after.mcpServers.other).toEqual({ command: 'node', args: ['server.js'] });
    expect(after.mcpServers['grove-feature-x'].args).toContain('http://127.0.0.1:43117/sse');
    expect(after.mcpServers['grove-feature-x'].env).toEqual({ GROVE_AUTH: 'Bearer T' });
    expect(result.backupPath).not.toBeNull();
    expect(await readFile(result.backupPath!, 'utf8')).toBe(before);
    // No temp file left behind.
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // A second write replaces Grove's entry (new token) and makes a second backup.
    const again = await addToClaudeDesktop({ ...target(dir), token: 'U' }, file);
    const third = JSON.parse(await readFile(file, 'utf8'));
    expect(Object.keys(third.mcpServers)).toEqual(['other', 'grove-feature-x']);
    expect(third.mcpServers['grove-feature-x'].env).toEqual({ GROVE_AUTH: 'Bearer U' });
    expect(again.backupPath).not.toBe(result.backupPath);
  });

  test('creates a missing config (and its directory) without a backup, private to the user', async () => {
    const file = path.join(dir, 'Claude', 'nested', 'claude_desktop_config.json');
    const result = await addToClaudeDesktop(target(dir), file);
    expect(result.backupPath).toBeNull();
    expect(Object.keys(JSON.parse(await readFile(file, 'utf8')).mcpServers)).toEqual([
      'grove-feature-x',
    ]);
    if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  test('refuses a file that is not valid JSON and leaves it untouched', async () => {
    const file = path.join(dir, 'claude_desktop_config.json');
    const broken = '{ "mcpServers": { "other": { "command": "node", } }\n';
    await writeFile(file, broken);
    await expect(addToClaudeDesktop(target(dir), file)).rejects.toThrow(ConfigFileError);
    await expect(addToClaudeDesktop(target(dir), file)).rejects.toThrow(/not valid JSON/);
    expect(await readFile(file, 'utf8')).toBe(broken);
    expect(await readdir(dir)).toEqual(['claude_desktop_config.json']);
  });

  test('refuses a JSON file whose mcpServers is not an object', async () => {
    const file = path.join(dir, 'claude_desktop_config.json');
    await writeFile(file, '{"mcpServers": []}');
    await expect(addToClaudeDesktop(target(dir), file)).rejects.toThrow(/not an object/);
    expect(await readFile(file, 'utf8')).toBe('{"mcpServers": []}');
  });

  test('writes the worktree .mcp.json with ${GROVE_TOKEN}, keeping other servers', async () => {
    const file = path.join(dir, '.mcp.json');
    await writeFile(file, '{"mcpServers": {"db": {"type": "stdio", "command": "db-mcp"}}}');
    const result = await addToProjectMcpJson(target(dir));
    expect(result.path).toBe(file);
    const config = JSON.parse(await readFile(file, 'utf8'));
    expect(config.mcpServers.db).toEqual({ type: 'stdio', command: 'db-mcp' });
    expect(config.mcpServers['grove-feature-x']).toEqual({
      type: 'http',
      url: 'http://127.0.0.1:43117/mcp',
      headers: { Authorization: 'Bearer ${GROVE_TOKEN}' },
    });
    expect(await readFile(file, 'utf8')).not.toContain('"T"');
    expect(result.backupPath).not.toBeNull();
  });

  test("knows Claude Desktop's config path on each platform, and the env override", () => {
    expect(claudeDesktopConfigPath({}, 'darwin', '/Users/me')).toBe(
      '/Users/me/Library/Application Support/Claude/claude_desktop_config.json',
    );
    expect(
      claudeDesktopConfigPath({ APPDATA: 'C:\\Users\\me\\AppData\\Roaming' }, 'win32', 'x'),
    ).toBe('C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json');
    expect(claudeDesktopConfigPath({}, 'linux', '/home/me')).toBe(
      '/home/me/.config/Claude/claude_desktop_config.json',
    );
    expect(
      claudeDesktopConfigPath({ GROVE_CLAUDE_DESKTOP_CONFIG: '/tmp/x.json' }, 'linux', '/home/me'),
    ).toBe('/tmp/x.json');
  });
});
