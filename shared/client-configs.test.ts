// The Connect tab's snippets: each parses (JSON, or TOML as Codex reads it) and has the keys, URL,
// transport and token handling ../shared/clients.md prescribes; every worktree gets its own server
// name and token variable, so two worktrees' entries can share one global file.
import { parse as parseToml } from 'smol-toml';
import { describe, expect, test } from 'vitest';
import {
  clientConfigs,
  clientConfigTarget,
  serverName,
  tokenEnvVar,
  tokenInFileNote,
  tokenVariableSetups,
  type ClientConfigTarget,
  type ClientId,
} from './client-configs.ts';
import { serverUrls } from './model.ts';

const target: ClientConfigTarget = {
  branch: 'feature-x',
  path: '/home/me/code/app-feature-x',
  repo: 'app',
  urls: serverUrls(43117),
  token: 'T0k3n',
  bridge: {
    command: '/opt/Grove/grove',
    args: ['bridge', '--data-dir', '/home/me/.config/grove', '/home/me/code/app-feature-x'],
  },
};
const NAME = serverName(target);
const VAR = tokenEnvVar(target);
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

describe('client configs', () => {
  test('names the entry after the repository and branch (or directory), with a hash of the path', () => {
    expect(NAME).toMatch(/^grove-app-feature-x-[0-9a-f]{6}$/);
    expect(serverName({ branch: 'Feat/Thing #2', path: '/x', repo: null })).toMatch(
      /^grove-feat-thing-2-[0-9a-f]{6}$/,
    );
    expect(serverName({ branch: null, path: 'C:\\code\\my app\\', repo: 'My App' })).toMatch(
      /^grove-my-app-[0-9a-f]{6}$/,
    );
    // Stable: the same worktree always gets the same name (a trailing separator is no change).
    expect(serverName({ ...target, path: `${target.path}/` })).toBe(NAME);
    // Long names are cut, the branch still shows, the whole stays short.
    const long = serverName({
      branch: 'feature/a-very-long-branch-name-indeed',
      path: '/r',
      repo: 'an-extremely-long-repository-name',
    });
    expect(long).toMatch(/^grove-an-extremely-feature-a-v-[0-9a-f]{6}$/);
    expect(long.length).toBeLessThanOrEqual('grove-'.length + 24 + 7);
  });

  test('two worktrees never share a name or a variable: same branch in two clones, feat/x and feat-x', () => {
    const clones = ['/home/me/work/app', '/home/me/oss/app'].map((path) =>
      clientConfigTarget({ branch: 'main', path }, { name: 'app' }, target),
    );
    const lookalikes = [
      { branch: 'feat/x', path: '/home/me/app-feat-slash-x', repo: 'app' },
      { branch: 'feat-x', path: '/home/me/app-feat-x', repo: 'app' },
    ];
    for (const [a, b] of [clones, lookalikes] as const) {
      expect(serverName(a!)).not.toBe(serverName(b!));
      expect(tokenEnvVar(a!)).not.toBe(tokenEnvVar(b!));
    }
    // Many worktrees of one repository, all distinct.
    const names = new Set(
      Array.from({ length: 500 }, (_, i) =>
        serverName({ branch: 'main', path: `/home/me/w/app-${i}`, repo: 'app' }),
      ),
    );
    expect(names.size).toBe(500);
  });

  test("the token variable is the server name's own part in capitals: a valid name everywhere", () => {
    expect(VAR).toBe(`GROVE_TOKEN_${NAME.slice('grove-'.length).toUpperCase().replace(/-/g, '_')}`);
    expect(VAR).toMatch(/^GROVE_TOKEN_APP_FEATURE_X_[0-9A-F]{6}$/);
    for (const branch of ['Feat/Thing #2', 'ünïcode', '---', 'a_b-c.d']) {
      expect(tokenEnvVar({ branch, path: '/p', repo: null })).toMatch(/^[A-Z_][A-Z0-9_]*$/);
    }
  });

  test('the target is built from the worktree, its repository and the connection info', () => {
    expect(
      clientConfigTarget(
        { branch: 'feature-x', path: target.path },
        { name: 'app' },
        { urls: target.urls, token: 'T0k3n', bridge: target.bridge },
      ),
    ).toEqual(target);
    expect(clientConfigTarget({ branch: null, path: '/p' }, undefined, target).repo).toBeNull();
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

  test("Claude Code: the command and the project .mcp.json with the worktree's own variable", () => {
    expect(snippet('claude-code-command')).toBe(
      `claude mcp add --transport http ${NAME} ${MCP} --header "Authorization: Bearer T0k3n"`,
    );
    expect(parsed('claude-code-project').mcpServers![NAME]).toEqual({
      type: 'http',
      url: MCP,
      headers: { Authorization: `Bearer \${${VAR}}` },
    });
    expect(snippet('claude-code-project')).not.toContain('T0k3n');
  });

  test("Cursor and Windsurf: Streamable HTTP, ${env:<the worktree's variable>}, Windsurf with serverUrl", () => {
    expect(parsed('cursor').mcpServers![NAME]).toEqual({
      url: MCP,
      headers: { Authorization: `Bearer \${env:${VAR}}` },
    });
    expect(parsed('windsurf').mcpServers![NAME]).toEqual({
      serverUrl: MCP,
      headers: { Authorization: `Bearer \${env:${VAR}}` },
    });
    for (const id of ['cursor', 'windsurf', 'codex', 'claude-code-project'] as const) {
      expect(snippet(id)).not.toContain('T0k3n');
      expect(clientConfigs(target).find((s) => s.id === id)!.note).toContain(VAR);
    }
  });

  test('VS Code: "servers", a password input of its own for the token', () => {
    const config = JSON.parse(snippet('vscode'));
    expect(config.mcpServers).toBeUndefined();
    expect(config.inputs).toEqual([
      {
        type: 'promptString',
        id: `${NAME}-token`,
        description: `Grove token for ${NAME}`,
        password: true,
      },
    ]);
    expect(config.servers[NAME]).toEqual({
      type: 'http',
      url: MCP,
      headers: { Authorization: `Bearer \${input:${NAME}-token}` },
    });
  });

  test('Codex: a TOML table with url and bearer_token_env_var; two worktrees append to one file', () => {
    expect(parseToml(snippet('codex'))).toEqual({
      mcp_servers: { [NAME]: { url: MCP, bearer_token_env_var: VAR } },
    });
    const other: ClientConfigTarget = {
      ...target,
      branch: 'main',
      path: '/home/me/code/app',
      urls: serverUrls(43118),
    };
    const codex = (t: ClientConfigTarget) => clientConfigs(t).find((s) => s.id === 'codex')!.text;
    expect(parseToml(codex(target) + codex(other))).toEqual({
      mcp_servers: {
        [NAME]: { url: MCP, bearer_token_env_var: VAR },
        [serverName(other)]: {
          url: 'http://127.0.0.1:43118/mcp',
          bearer_token_env_var: tokenEnvVar(other),
        },
      },
    });
  });

  test('the token variable: a line for terminal clients and for apps on Linux, macOS and Windows', () => {
    const setups = Object.fromEntries(tokenVariableSetups(target).map((s) => [s.id, s.text]));
    expect(setups).toEqual({
      'shell-profile': `export ${VAR}=T0k3n`,
      'linux-environment-d': `${VAR}=T0k3n`,
      'macos-launchctl': `launchctl setenv ${VAR} T0k3n`,
      'windows-user-variable': `[Environment]::SetEnvironmentVariable('${VAR}', 'T0k3n', 'User')`,
    });
    // A token a shell would split or expand is quoted (Grove's are base64url; a test of the quoting).
    const odd = tokenVariableSetups({ ...target, token: "a b'$c" });
    expect(odd.find((s) => s.id === 'shell-profile')!.text).toBe(`export ${VAR}='a b'\\''$c'`);
    expect(odd.find((s) => s.id === 'windows-user-variable')!.text).toContain(`'a b''$c'`);
    // The alternative for a file that is the user's own: the token written in, and why.
    expect(tokenInFileNote(target)).toContain('Bearer T0k3n');
    expect(tokenInFileNote(target)).toMatch(/never a file in a repository/);
  });

  test('Gemini CLI: SSE with the token in the header', () => {
    expect(parsed('gemini').mcpServers![NAME]).toEqual({
      url: SSE,
      type: 'sse',
      headers: { Authorization: 'Bearer T0k3n' },
    });
  });
});
