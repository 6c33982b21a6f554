// Ready-to-paste configurations that connect MCP clients (Claude Desktop, Claude Code, Cursor,
// VS Code, Codex, Windsurf, Gemini CLI) to one worktree's server, following ../shared/clients.md.
// Every worktree has its own server name and its own token variable (GROVE_TOKEN_<NAME>), both
// derived from the worktree, so any number of worktrees can share one global config file
// (~/.cursor/mcp.json, ~/.codex/config.toml...). Pure: no Node, DOM or Electron; used by the
// Connect tab and by the host's config writer.
import type {
  BridgeCommand,
  ConnectionInfo,
  RepoState,
  ServerUrls,
  WorktreeState,
} from './model.ts';

/** What a config needs to know about one worktree's server. */
export interface ClientConfigTarget {
  /** Branch name (or null for a detached HEAD); names the server entry. */
  branch: string | null;
  /** Worktree root; its directory name names the entry when there is no branch. */
  path: string;
  /** The repository's display name (its main worktree's directory), or null when unknown. */
  repo: string | null;
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

/** What a config needs, from the worktree, its repository and its connection info. */
export function clientConfigTarget(
  worktree: Pick<WorktreeState, 'branch' | 'path'>,
  repo: Pick<RepoState, 'name'> | undefined,
  info: Pick<ConnectionInfo, 'urls' | 'token' | 'bridge'>,
): ClientConfigTarget {
  return {
    branch: worktree.branch,
    path: worktree.path,
    repo: repo?.name ?? null,
    urls: info.urls,
    token: info.token,
    bridge: info.bridge,
  };
}

/** The readable part of a server name is cut to this many characters (tool names get long)... */
const LABEL_MAX = 24;
/** ...and the repository's part of it to this many, so the branch shows too. */
const REPO_MAX = 12;

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
}

/** FNV-1a (32 bits) of the worktree's path, as 6 hex digits: tells apart equal labels. */
function pathHash(worktreePath: string): string {
  const normalized = worktreePath.replace(/[\\/]+$/, '');
  let hash = 0x811c9dc5;
  for (let i = 0; i < normalized.length; i += 1) {
    hash ^= normalized.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0').slice(0, 6);
}

/**
 * `grove-<repo>-<branch>-<hash>`: the repository and branch (or, for a detached HEAD, the
 * directory) for people, reduced to characters every client accepts and cut to a readable length,
 * and 6 hex digits of the worktree's path, so two repositories' `main` (or `feat/x` and `feat-x`)
 * never share a name in one config file. Stable for as long as the worktree keeps its path and
 * branch.
 */
export function serverName(target: Pick<ClientConfigTarget, 'branch' | 'path' | 'repo'>): string {
  const place = slug(
    target.branch ?? target.path.split(/[\\/]/).filter(Boolean).pop() ?? 'worktree',
  );
  const repo =
    target.repo === null
      ? ''
      : slug(target.repo)
          .slice(0, REPO_MAX)
          .replace(/[-_]+$/, '');
  const parts = repo && repo !== place ? [repo, place] : [place];
  const label =
    parts
      .filter(Boolean)
      .join('-')
      .slice(0, LABEL_MAX)
      .replace(/[-_]+$/, '') || 'worktree';
  return `grove-${label}-${pathHash(target.path)}`;
}

/**
 * The environment variable this worktree's env-expanding configs read its token from:
 * `GROVE_TOKEN_` and the server name's own part in capitals (`grove-app-main-3fa1c2` →
 * `GROVE_TOKEN_APP_MAIN_3FA1C2`). One per worktree, since each worktree has its own token.
 */
export function tokenEnvVar(target: Pick<ClientConfigTarget, 'branch' | 'path' | 'repo'>): string {
  return `GROVE_TOKEN_${serverName(target).slice('grove-'.length).toUpperCase().replace(/-/g, '_')}`;
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

/** Claude Code's project `.mcp.json` entry: Streamable HTTP, token from this worktree's variable. */
export function claudeCodeProjectEntry(target: ClientConfigTarget): Record<string, unknown> {
  return {
    type: 'http',
    url: target.urls.mcp,
    headers: { Authorization: `Bearer \${${tokenEnvVar(target)}}` },
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

/** Quotes a string for PowerShell (single quotes, a quote doubled). */
function powerShellQuote(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** The Connect tab's heading for the token variable card (the notes point to it). */
export const TOKEN_VARIABLE_HEADING = 'Token variable';

const readsVariable = (variable: string, sharedFile: boolean): string =>
  `Reads the token from ${variable}, this worktree's own variable` +
  (sharedFile ? ', so any number of worktrees can share this file' : '') +
  `: set it as "${TOKEN_VARIABLE_HEADING}" at the end of this tab says, then restart the client.`;

/** Every snippet, in the order the Connect tab shows them. */
export function clientConfigs(target: ClientConfigTarget): ClientConfigSnippet[] {
  const name = serverName(target);
  const variable = tokenEnvVar(target);
  const bearer = `Bearer ${target.token}`;
  const envBearer = `Bearer \${env:${variable}}`;
  return [
    {
      id: 'claude-desktop',
      client: 'Claude Desktop',
      title: 'claude_desktop_config.json',
      language: 'json',
      location:
        'macOS: ~/Library/Application Support/Claude/claude_desktop_config.json · Windows: %APPDATA%\\Claude\\claude_desktop_config.json · Linux: ~/.config/Claude/claude_desktop_config.json',
      note: "Runs Grove's own stdio bridge: no Node, npx, token or variable needed. It forwards to this server while Grove runs (the Clients list shows it), and serves the worktree itself when Grove is not running. Restart Claude Desktop after editing.",
      text: json({ mcpServers: { [name]: claudeDesktopEntry(target) } }),
    },
    {
      id: 'claude-desktop-mcp-remote',
      client: 'Claude Desktop',
      title: 'claude_desktop_config.json, through mcp-remote',
      language: 'json',
      location: 'The same file, instead of the entry above',
      note: 'The alternative: mcp-remote needs Node (npx) on your PATH and downloads the package on first use; it reaches the server only while Grove runs. The token is in the entry itself (the file is yours alone).',
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
      note: "Writes the token into Claude Code's own settings in your home (~/.claude.json): no variable needed.",
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
      location:
        '.mcp.json at the root of the worktree. The port is this machine’s: if .mcp.json is committed, git status shows the change.',
      note: readsVariable(variable, false),
      text: json({ mcpServers: { [name]: claudeCodeProjectEntry(target) } }),
    },
    {
      id: 'cursor',
      client: 'Cursor',
      title: 'mcp.json',
      language: 'json',
      location:
        '~/.cursor/mcp.json (every project), or .cursor/mcp.json in the project: add the entry to "mcpServers"',
      note: readsVariable(variable, true),
      text: json({
        mcpServers: { [name]: { url: target.urls.mcp, headers: { Authorization: envBearer } } },
      }),
    },
    {
      id: 'vscode',
      client: 'VS Code',
      title: '.vscode/mcp.json',
      language: 'json',
      location:
        '.vscode/mcp.json in the project, or your user mcp.json (key "servers", not "mcpServers"; add the input to "inputs")',
      note: "VS Code asks for this worktree's token once and stores it; paste the token shown on the Server tab.",
      text: json({
        inputs: [
          {
            type: 'promptString',
            // One input per worktree: a shared id would give every worktree the same token.
            id: `${name}-token`,
            description: `Grove token for ${name}`,
            password: true,
          },
        ],
        servers: {
          [name]: {
            type: 'http',
            url: target.urls.mcp,
            headers: { Authorization: `Bearer \${input:${name}-token}` },
          },
        },
      }),
    },
    {
      id: 'codex',
      client: 'Codex',
      title: 'config.toml',
      language: 'toml',
      location: '~/.codex/config.toml, at the end of the file (Streamable HTTP only)',
      note: readsVariable(variable, true),
      text: [
        `[mcp_servers.${tomlKey(name)}]`,
        `url = ${tomlString(target.urls.mcp)}`,
        `bearer_token_env_var = ${tomlString(variable)}`,
        '',
      ].join('\n'),
    },
    {
      id: 'windsurf',
      client: 'Windsurf',
      title: 'mcp_config.json',
      language: 'json',
      location:
        '~/.codeium/windsurf/mcp_config.json: add the entry to "mcpServers" (key "serverUrl", not "url")',
      note: readsVariable(variable, true),
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

export type TokenVariableSetupId =
  'shell-profile' | 'linux-environment-d' | 'macos-launchctl' | 'windows-user-variable';

/** One way to give clients this worktree's token variable. */
export interface TokenVariableSetup {
  id: TokenVariableSetupId;
  /** A short name (e.g. "macOS apps"). */
  label: string;
  /** Which clients it reaches, and where the line goes. */
  where: string;
  text: string;
}

/**
 * How clients get this worktree's token variable. A variable reaches a client only through the
 * environment of the process that starts it: a terminal client inherits the shell's, but an app
 * started from the dock, the desktop or the Start menu never reads the shell's profile, so each
 * system has its own place for it.
 */
export function tokenVariableSetups(target: ClientConfigTarget): TokenVariableSetup[] {
  const variable = tokenEnvVar(target);
  const token = target.token;
  return [
    {
      id: 'shell-profile',
      label: 'terminal clients',
      where:
        'Clients started from a terminal (Claude Code, the Codex CLI, cursor . in a terminal): a line in your shell profile (~/.zshrc, ~/.bashrc), then open a new terminal.',
      text: `export ${variable}=${shellQuote(token)}`,
    },
    {
      id: 'linux-environment-d',
      label: 'Linux apps',
      where:
        'Linux, apps started from the desktop (Cursor, Windsurf): a line in ~/.config/environment.d/grove.conf, read when you log in: log out and in once.',
      // environment.d(5) expands `$` and `\`; Grove's tokens are base64url, which holds neither.
      text: `${variable}=${token}`,
    },
    {
      id: 'macos-launchctl',
      label: 'macOS apps',
      where:
        'macOS, apps started from the Dock or Spotlight: run this in a terminal, then quit and reopen the app (it lasts until you log out or restart).',
      text: `launchctl setenv ${variable} ${shellQuote(token)}`,
    },
    {
      id: 'windows-user-variable',
      label: 'Windows apps',
      where:
        'Windows, apps started from the Start menu: run this once in PowerShell, then quit and reopen the app.',
      text: `[Environment]::SetEnvironmentVariable(${powerShellQuote(variable)}, ${powerShellQuote(token)}, 'User')`,
    },
  ];
}

/** Why a user's own global config may hold the token itself, and how (the tab's last word). */
export function tokenInFileNote(target: ClientConfigTarget): string {
  return (
    `Or, in a config file that is yours alone (~/.cursor/mcp.json, ~/.codeium/windsurf/mcp_config.json, ~/.codex/config.toml; never a file in a repository), write the token in: "Bearer ${target.token}" in place of "Bearer \${env:${tokenEnvVar(target)}}" (Codex: http_headers = { Authorization = "Bearer …" } in place of bearer_token_env_var). ` +
    "Then no variable is needed, however the app starts. Why this is fine: the token opens only this worktree's server on 127.0.0.1, and Grove's data directory already keeps it in your home; on a machine shared with other users, make the file yours alone (chmod 600). After Rotate token (Server tab), update the variable or the file."
  );
}
