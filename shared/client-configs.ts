// Ready-to-paste configurations that connect MCP clients (Claude Desktop, Claude Code, Cursor,
// VS Code, Codex, Windsurf, Gemini CLI) to one worktree's server, following ../shared/clients.md.
// Pure: no Node, DOM or Electron; used by the Connect tab and by the host's config writer.
import type { BridgeCommand, ServerUrls } from './model.ts';

/** What a config needs to know about one worktree's server. */
export interface ClientConfigTarget {
  /** Branch name (or null for a detached HEAD); names the server entry. */
  branch: string | null;
  /** Worktree root; its directory name names the entry when there is no branch. */
  path: string;
  urls: ServerUrls;
  token: string;
  /** `grove bridge` for this worktree, as this machine runs it (ConnectionInfo.bridge). */
  bridge: BridgeCommand;
}

export type ClientId =
  | 'claude-desktop'
  | 'claude-desktop-mcp-remote'
  | 'stdio'
  | 'claude-code-command'
  | 'claude-code-project'
  | 'cursor'
  | 'vscode'
  | 'codex'
  | 'windsurf'
  | 'gemini';

export interface ClientConfigSnippet {
  id: ClientId;
  /** The client's name as people know it. */
  client: string;
  /** What kind of snippet this is (e.g. "claude_desktop_config.json"). */
  title: string;
  language: 'json' | 'toml' | 'shell';
  /** Where it goes. */
  location: string;
  /** Anything else the user must do (e.g. set GROVE_TOKEN). */
  note: string | null;
  text: string;
}

/** The environment variable the env-expanding snippets read the token from. */
export const TOKEN_ENV_VAR = 'GROVE_TOKEN';

/** `grove-<branch>` (or the directory name), reduced to characters every client accepts. */
export function serverName(target: Pick<ClientConfigTarget, 'branch' | 'path'>): string {
  const base = target.branch ?? target.path.split(/[\\/]/).filter(Boolean).pop() ?? 'worktree';
  const slug = base
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
  return `grove-${slug || 'worktree'}`;
}

/**
 * Claude Desktop's stdio entry: Grove's own bridge (no Node, npx or token in the config; it finds
 * the running host's server and its token itself, and serves the worktree when Grove is not running).
 */
export function claudeDesktopEntry(target: ClientConfigTarget): Record<string, unknown> {
  return { command: target.bridge.command, args: target.bridge.args };
}

/** The alternative stdio entry: mcp-remote over legacy SSE, the header through the env trick. */
export function mcpRemoteEntry(target: ClientConfigTarget): Record<string, unknown> {
  return {
    command: 'npx',
    args: [
      '-y',
      'mcp-remote',
      target.urls.sse,
      '--transport',
      'sse-only',
      '--header',
      'Authorization:${GROVE_AUTH}',
    ],
    env: { GROVE_AUTH: `Bearer ${target.token}` },
  };
}

/** Claude Code's project `.mcp.json` entry: Streamable HTTP, token from $GROVE_TOKEN. */
export function claudeCodeProjectEntry(target: ClientConfigTarget): Record<string, unknown> {
  return {
    type: 'http',
    url: target.urls.mcp,
    headers: { Authorization: `Bearer \${${TOKEN_ENV_VAR}}` },
  };
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Quotes a TOML basic string / key when needed. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/** Quotes one argument for a POSIX shell (single quotes unless it is plainly safe). */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

const exportToken = (token: string): string =>
  `Set ${TOKEN_ENV_VAR} in the client's environment: export ${TOKEN_ENV_VAR}=${token}`;

/** Every snippet, in the order the Connect tab shows them. */
export function clientConfigs(target: ClientConfigTarget): ClientConfigSnippet[] {
  const name = serverName(target);
  const bearer = `Bearer ${target.token}`;
  const envBearer = `Bearer \${env:${TOKEN_ENV_VAR}}`;
  return [
    {
      id: 'claude-desktop',
      client: 'Claude Desktop',
      title: 'claude_desktop_config.json',
      language: 'json',
      location:
        'macOS: ~/Library/Application Support/Claude/claude_desktop_config.json · Windows: %APPDATA%\\Claude\\claude_desktop_config.json · Linux: ~/.config/Claude/claude_desktop_config.json',
      note: "Runs Grove's own stdio bridge: no Node or npx needed. It forwards to this server while Grove runs (the Clients list shows it), and serves the worktree itself when Grove is not running. Restart Claude Desktop after editing.",
      text: json({ mcpServers: { [name]: claudeDesktopEntry(target) } }),
    },
    {
      id: 'claude-desktop-mcp-remote',
      client: 'Claude Desktop',
      title: 'claude_desktop_config.json, through mcp-remote',
      language: 'json',
      location: 'The same file, instead of the entry above',
      note: 'The alternative: mcp-remote needs Node (npx) on your PATH and downloads the package on first use; it reaches the server only while Grove runs.',
      text: json({ mcpServers: { [name]: mcpRemoteEntry(target) } }),
    },
    {
      id: 'stdio',
      client: 'Any stdio client',
      title: 'command and arguments',
      language: 'shell',
      location: "The client's server command (a command and its arguments, no shell)",
      note: 'The same bridge as for Claude Desktop, for any client that starts MCP servers itself.',
      text: [target.bridge.command, ...target.bridge.args].map(shellQuote).join(' '),
    },
    {
      id: 'claude-code-command',
      client: 'Claude Code',
      title: 'claude mcp add',
      language: 'shell',
      location: 'Run in a terminal (add --scope user to use it in every project).',
      note: null,
      text: [
        'claude',
        'mcp',
        'add',
        '--transport',
        'http',
        name,
        target.urls.mcp,
        '--header',
        `"Authorization: ${bearer}"`,
      ]
        .map((part) => (part.startsWith('"') ? part : shellQuote(part)))
        .join(' '),
    },
    {
      id: 'claude-code-project',
      client: 'Claude Code',
      title: '.mcp.json',
      language: 'json',
      location: '.mcp.json at the root of the worktree',
      note: exportToken(target.token),
      text: json({ mcpServers: { [name]: claudeCodeProjectEntry(target) } }),
    },
    {
      id: 'cursor',
      client: 'Cursor',
      title: 'mcp.json',
      language: 'json',
      location: '.cursor/mcp.json in the project, or ~/.cursor/mcp.json',
      note: exportToken(target.token),
      text: json({
        mcpServers: { [name]: { url: target.urls.mcp, headers: { Authorization: envBearer } } },
      }),
    },
    {
      id: 'vscode',
      client: 'VS Code',
      title: '.vscode/mcp.json',
      language: 'json',
      location: '.vscode/mcp.json in the project (key "servers", not "mcpServers")',
      note: 'VS Code asks for the token once and stores it; paste the token shown on the Server tab.',
      text: json({
        inputs: [
          {
            type: 'promptString',
            id: 'grove-token',
            description: 'Grove token',
            password: true,
          },
        ],
        servers: {
          [name]: {
            type: 'http',
            url: target.urls.mcp,
            headers: { Authorization: 'Bearer ${input:grove-token}' },
          },
        },
      }),
    },
    {
      id: 'codex',
      client: 'Codex',
      title: 'config.toml',
      language: 'toml',
      location: '~/.codex/config.toml (Streamable HTTP only)',
      note: exportToken(target.token),
      text: [
        `[mcp_servers.${tomlKey(name)}]`,
        `url = ${tomlString(target.urls.mcp)}`,
        `bearer_token_env_var = ${tomlString(TOKEN_ENV_VAR)}`,
        '',
      ].join('\n'),
    },
    {
      id: 'windsurf',
      client: 'Windsurf',
      title: 'mcp_config.json',
      language: 'json',
      location: '~/.codeium/windsurf/mcp_config.json (key "serverUrl", not "url")',
      note: exportToken(target.token),
      text: json({
        mcpServers: {
          [name]: { serverUrl: target.urls.mcp, headers: { Authorization: envBearer } },
        },
      }),
    },
    {
      id: 'gemini',
      client: 'Gemini CLI',
      title: 'settings.json',
      language: 'json',
      location: '.gemini/settings.json in the project, or ~/.gemini/settings.json',
      note: 'Contains the token itself: keep this file out of version control.',
      text: json({
        mcpServers: {
          [name]: { url: target.urls.sse, type: 'sse', headers: { Authorization: bearer } },
        },
      }),
    },
  ];
}
