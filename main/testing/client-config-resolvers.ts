// Test support: how each HTTP MCP client turns one entry of its config file into a URL and request
// headers, environment variables resolved the way that client documents it, so a test can connect
// the real SDK client exactly where the client would. Never used by production code.
//
// - Claude Code (`.mcp.json`, code.claude.com/docs/en/mcp "Environment variable expansion"):
//   `${VAR}` and `${VAR:-default}` in `url` and `headers` (also command, args, env); an unset
//   variable without a default stays as written (Claude Code warns, then sends the text).
// - Cursor (`~/.cursor/mcp.json` or `.cursor/mcp.json`, key `url`) and Windsurf
//   (`~/.codeium/windsurf/mcp_config.json`, key `serverUrl`): `${env:NAME}` in url and headers; an
//   unset variable becomes empty, as in VS Code's variable resolver, which both are built on.
// - Codex (`~/.codex/config.toml`, `[mcp_servers.<name>]`, Streamable HTTP): `url`;
//   `bearer_token_env_var = "NAME"` sends `Authorization: Bearer <$NAME>`; `http_headers` are
//   sent as written; `env_http_headers = { Header = "NAME" }` sends `$NAME` as that header. Codex
//   refuses to start a server whose variable is unset or empty.
import { parse as parseToml } from 'smol-toml';

export type Env = Readonly<Record<string, string | undefined>>;

/** Where one client connects and with which headers. */
export interface ResolvedHttpServer {
  url: string;
  headers: Record<string, string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringRecord(value: unknown, what: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new Error(`${what} is not a table of strings`);
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw new Error(`${what}.${key} is not a string`);
    out[key] = item;
  }
  return out;
}

function mapHeaders(
  headers: Record<string, string>,
  resolve: (text: string) => string,
): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, resolve(v)]));
}

/** The `mcpServers.<name>` entry of a JSON config file's text. */
function jsonEntry(text: string, name: string): Record<string, unknown> {
  const config: unknown = JSON.parse(text);
  const entry = isRecord(config) && isRecord(config['mcpServers']) && config['mcpServers'][name];
  if (!isRecord(entry)) throw new Error(`no mcpServers.${name} in the file`);
  return entry;
}

/** Claude Code: `${VAR}` / `${VAR:-default}`; an unset variable without a default stays as is. */
export function expandClaudeCode(text: string, env: Env): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (whole, name: string, fallback: string | undefined) =>
      env[name] ?? (fallback === undefined ? whole : fallback),
  );
}

/** One `.mcp.json` entry of type http, as Claude Code connects to it. */
export function resolveClaudeCode(text: string, name: string, env: Env): ResolvedHttpServer {
  const entry = jsonEntry(text, name);
  if (entry['type'] !== 'http' || typeof entry['url'] !== 'string') {
    throw new Error(`mcpServers.${name} is not an http server`);
  }
  const expand = (value: string) => expandClaudeCode(value, env);
  return {
    url: expand(entry['url']),
    headers: mapHeaders(stringRecord(entry['headers'], 'headers'), expand),
  };
}

/** Cursor and Windsurf: `${env:NAME}`, an unset variable as empty. */
export function expandEnvColon(text: string, env: Env): string {
  return text.replace(/\$\{env:([^}]+)\}/g, (_whole, name: string) => env[name] ?? '');
}

/** One entry of `~/.cursor/mcp.json` (`url`) or Windsurf's `mcp_config.json` (`serverUrl`). */
export function resolveCursorLike(
  text: string,
  name: string,
  env: Env,
  urlKey: 'url' | 'serverUrl',
): ResolvedHttpServer {
  const entry = jsonEntry(text, name);
  const url = entry[urlKey];
  if (typeof url !== 'string') throw new Error(`mcpServers.${name}.${urlKey} is missing`);
  const expand = (value: string) => expandEnvColon(value, env);
  return {
    url: expand(url),
    headers: mapHeaders(stringRecord(entry['headers'], 'headers'), expand),
  };
}

/** One `[mcp_servers.<name>]` table of a Codex `config.toml`, as Codex connects to it. */
export function resolveCodex(text: string, name: string, env: Env): ResolvedHttpServer {
  const config = parseToml(text);
  const servers = config['mcp_servers'];
  const table = isRecord(servers) ? servers[name] : undefined;
  if (!isRecord(table)) throw new Error(`no [mcp_servers.${name}] in the file`);
  if (typeof table['url'] !== 'string') throw new Error(`mcp_servers.${name}.url is missing`);
  const variable = (envName: unknown, what: string): string => {
    if (typeof envName !== 'string') throw new Error(`${what} is not a string`);
    const value = env[envName];
    if (!value) throw new Error(`Codex: ${envName} (${what} of ${name}) is not set`);
    return value;
  };
  const headers = { ...stringRecord(table['http_headers'], 'http_headers') };
  for (const [header, envName] of Object.entries(
    stringRecord(table['env_http_headers'], 'env_http_headers'),
  )) {
    headers[header] = variable(envName, `env_http_headers.${header}`);
  }
  if (table['bearer_token_env_var'] !== undefined) {
    headers['Authorization'] =
      `Bearer ${variable(table['bearer_token_env_var'], 'bearer_token_env_var')}`;
  }
  return { url: table['url'], headers };
}
