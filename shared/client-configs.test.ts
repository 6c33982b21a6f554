// The Connect tab's snippets: each parses (JSON, or TOML of the simple shape Codex reads) and has
// the keys, URL, transport and token handling ../shared/clients.md prescribes.
import { describe, expect, test } from 'vitest';
import {
  clientConfigs,
  serverName,
  type ClientConfigTarget,
  type ClientId,
} from './client-configs.ts';
import { serverUrls } from './model.ts';

const target: ClientConfigTarget = {
  branch: 'feature-x',
  path: '/home/me/code/app-feature-x',
  urls: serverUrls(43117),
  token: 'T0k3n',
  bridge: {
    command: '/opt/Grove/grove',
    args: ['bridge', '--data-dir', '/home/me/.config/grove', '/home/me/code/app-feature-x'],
  },
};
const NAME = 'grove-feature-x';
const SSE = 'http://127.0.0.1:43117/sse';
const MCP = 'http://127.0.0.1:43117/mcp';

function snippet(id: ClientId): string {
  const found = clientConfigs(target).find((s) => s.id === id);
  if (!found) throw new Error(`no snippet ${id}`);
  return found.text;
}

function parsed(id: ClientId): Record<string, Record<string, Record<string, unknown>>> {
  return JSON.parse(snippet(id));
}

/** A tiny TOML reader for `[table]` + `key = "string"` lines, enough to check the Codex snippet. */
function parseSimpleToml(text: string): Record<string, Record<string, string>> {
  const tables: Record<string, Record<string, string>> = {};
  let current: Record<string, string> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const table = /^\[([^\]]+)\]$/.exec(line);
    if (table) {
      current = tables[table[1]!] = {};
      continue;
    }
    const pair = /^([A-Za-z0-9_-]+) = (".*")$/.exec(line);
    if (!pair || !current) throw new Error(`not simple TOML: ${line}`);
    current[pair[1]!] = JSON.parse(pair[2]!);
  }
  return tables;
}

describe('client configs', () => {
  test('names the entry after the branch, or the directory for a detached HEAD', () => {
    expect(serverName(target)).toBe(NAME);
    expect(serverName({ branch: 'Feat/Thing #2', path: '/x' })).toBe('grove-feat-thing-2');
    expect(serverName({ branch: null, path: 'C:\\code\\my app\\' })).toBe('grove-my-app');
  });

  test('offers every client of clients.md once', () => {
    expect(clientConfigs(target).map((s) => s.id)).toEqual([
      'claude-desktop',
      'claude-desktop-mcp-remote',
      'stdio',
      'claude-code-command',
      'claude-code-project',
      'cursor',
      'vscode',
      'codex',
      'windsurf',
      'gemini',
    ]);
  });

  test("Claude Desktop: Grove's own bridge by default, no token in the file", () => {
    expect(parsed('claude-desktop').mcpServers![NAME]).toEqual({
      command: '/opt/Grove/grove',
      args: ['bridge', '--data-dir', '/home/me/.config/grove', '/home/me/code/app-feature-x'],
    });
    expect(snippet('claude-desktop')).not.toContain('T0k3n');
  });

  test('any stdio client: the bridge command line, quoted for a shell where needed', () => {
    expect(snippet('stdio')).toBe(
      '/opt/Grove/grove bridge --data-dir /home/me/.config/grove /home/me/code/app-feature-x',
    );
    const spaced = clientConfigs({
      ...target,
      bridge: {
        command: '/Applications/Grove.app/Contents/MacOS/Grove',
        args: ['bridge', "/my code/it's"],
      },
    }).find((s) => s.id === 'stdio')!.text;
    expect(spaced).toBe(`/Applications/Grove.app/Contents/MacOS/Grove bridge '/my code/it'\\''s'`);
  });

  test('Claude Desktop through mcp-remote: SSE, the header through the env trick', () => {
    const entry = parsed('claude-desktop-mcp-remote').mcpServers![NAME]!;
    expect(entry).toEqual({
      command: 'npx',
      args: [
        '-y',
        'mcp-remote',
        SSE,
        '--transport',
        'sse-only',
        '--header',
        'Authorization:${GROVE_AUTH}',
      ],
      env: { GROVE_AUTH: 'Bearer T0k3n' },
    });
    // No space inside any argument (they break on some platforms).
    for (const arg of entry.args as string[]) expect(arg).not.toContain(' ');
  });

  test('Claude Code: the command and the project .mcp.json with ${GROVE_TOKEN}', () => {
    expect(snippet('claude-code-command')).toBe(
      `claude mcp add --transport http ${NAME} ${MCP} --header "Authorization: Bearer T0k3n"`,
    );
    expect(parsed('claude-code-project').mcpServers![NAME]).toEqual({
      type: 'http',
      url: MCP,
      headers: { Authorization: 'Bearer ${GROVE_TOKEN}' },
    });
    expect(snippet('claude-code-project')).not.toContain('T0k3n');
  });

  test('Cursor and Windsurf: Streamable HTTP, ${env:GROVE_TOKEN}, Windsurf with serverUrl', () => {
    expect(parsed('cursor').mcpServers![NAME]).toEqual({
      url: MCP,
      headers: { Authorization: 'Bearer ${env:GROVE_TOKEN}' },
    });
    expect(parsed('windsurf').mcpServers![NAME]).toEqual({
      serverUrl: MCP,
      headers: { Authorization: 'Bearer ${env:GROVE_TOKEN}' },
    });
  });

  test('VS Code: "servers", a password input for the token', () => {
    const config = JSON.parse(snippet('vscode'));
    expect(config.mcpServers).toBeUndefined();
    expect(config.inputs).toEqual([
      { type: 'promptString', id: 'grove-token', description: 'Grove token', password: true },
    ]);
    expect(config.servers[NAME]).toEqual({
      type: 'http',
      url: MCP,
      headers: { Authorization: 'Bearer ${input:grove-token}' },
    });
  });

  test('Codex: a TOML table with url and bearer_token_env_var', () => {
    expect(parseSimpleToml(snippet('codex'))).toEqual({
      [`mcp_servers.${NAME}`]: { url: MCP, bearer_token_env_var: 'GROVE_TOKEN' },
    });
  });

  test('Gemini CLI: SSE with the token in the header', () => {
    expect(parsed('gemini').mcpServers![NAME]).toEqual({
      url: SSE,
      type: 'sse',
      headers: { Authorization: 'Bearer T0k3n' },
    });
  });
});
