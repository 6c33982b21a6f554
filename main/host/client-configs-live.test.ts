// Several worktrees added to one client config, exactly as the Connect tab says, against a real
// host: two worktrees of one repository and the `main` of a second repository with the same
// directory name (so only the worktree's path tells the two `main`s apart). Cursor's and
// Windsurf's global files and Codex's config.toml each hold every worktree's entry; each worktree
// has Claude Code's .mcp.json written by "Add to project .mcp.json". The token variables come from
// the lines the tab gives: the shell-profile line read by a real interactive bash (a terminal
// client), and the Linux environment.d line read by systemd's own generator (an app started from
// the desktop). Each entry is resolved the way its client resolves variables
// (main/testing/client-config-resolvers.ts) and the real SDK client lists the tools of every URL.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  clientConfigs,
  clientConfigTarget,
  serverName,
  tokenEnvVar,
  tokenVariableSetups,
  type ClientConfigTarget,
  type ClientId,
  type TokenVariableSetupId,
} from '../../shared/client-configs.ts';
import type { ConnectionInfo } from '../../shared/model.ts';
import type { ConfigPreview } from '../../shared/host-api.ts';
import { initializeBody } from '../testing/mcp-clients.ts';
import {
  resolveClaudeCode,
  resolveCodex,
  resolveCursorLike,
  type Env,
  type ResolvedHttpServer,
} from '../testing/client-config-resolvers.ts';
import { randomFirstPort } from '../testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';
import { setJsonEntry } from './json-entry-edit.ts';
import { runHostCommand } from './host-commands.ts';
import { Host } from './host.ts';

const run = promisify(execFile);
const ENVIRONMENT_D_GENERATOR =
  '/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator';

interface Worktree {
  target: ClientConfigTarget;
  name: string;
  root: string;
}

let host: Host;
let home: string;
const repos: TempRepo[] = [];
const worktrees: Worktree[] = [];

const files = () => ({
  cursor: path.join(home, '.cursor', 'mcp.json'),
  windsurf: path.join(home, '.codeium', 'windsurf', 'mcp_config.json'),
  codex: path.join(home, '.codex', 'config.toml'),
  bashrc: path.join(home, '.bashrc'),
  environmentD: path.join(home, '.config', 'environment.d', 'grove.conf'),
});

function snippet(target: ClientConfigTarget, id: ClientId): string {
  const found = clientConfigs(target).find((s) => s.id === id);
  if (!found) throw new Error(`no ${id} snippet`);
  return found.text;
}

function setupLine(target: ClientConfigTarget, id: TokenVariableSetupId): string {
  return tokenVariableSetups(target).find((s) => s.id === id)!.text;
}

/**
 * "Add the entry to mcpServers": the snippet is the new file, or its entry goes into the file's
 * mcpServers (as a user pastes it; json-entry-edit keeps the rest of the file as it was).
 */
async function addJsonEntry(file: string, text: string, name: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const existing = await readFile(file, 'utf8').catch(() => null);
  if (existing === null) {
    await writeFile(file, `${text}\n`);
    return;
  }
  const entry = (JSON.parse(text) as { mcpServers: Record<string, Record<string, unknown>> })
    .mcpServers[name]!;
  await writeFile(file, setJsonEntry(existing, 'mcpServers', name, entry).text);
}

/** Parses `env -0` output. */
function parseEnv(output: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of output.split('\0')) {
    const at = pair.indexOf('=');
    if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

/** The environment a new terminal gets: an interactive bash, which reads ~/.bashrc. */
async function terminalEnv(): Promise<Env> {
  const { stdout } = await run('bash', ['-i', '-c', 'env -0'], {
    env: { HOME: home, PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
  return parseEnv(stdout);
}

/** The environment a desktop session gives apps: systemd's environment.d generator's output. */
async function desktopEnv(): Promise<Env> {
  const { stdout } = await run(ENVIRONMENT_D_GENERATOR, [], {
    env: { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') },
  });
  const env: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) env[line.slice(0, at)] = line.slice(at + 1);
  }
  return env;
}

/** Connects the real SDK client as the resolved config says and lists the tools. */
async function toolNames(server: ResolvedHttpServer): Promise<string[]> {
  const client = new Client({ name: 'config-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: server.headers },
  });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

/** The HTTP status of an initialize sent as the resolved config says. */
async function initializeStatus(server: ResolvedHttpServer): Promise<number> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: {
      ...server.headers,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(initializeBody()),
  });
  await response.body?.cancel();
  return response.status;
}

/** How each client resolves its entry of the files written above. */
async function resolvedEntries(env: Env, worktree: Worktree) {
  const { cursor, windsurf, codex } = files();
  return {
    cursor: resolveCursorLike(await readFile(cursor, 'utf8'), worktree.name, env, 'url'),
    windsurf: resolveCursorLike(await readFile(windsurf, 'utf8'), worktree.name, env, 'serverUrl'),
    codex: resolveCodex(await readFile(codex, 'utf8'), worktree.name, env),
    claudeCode: resolveClaudeCode(
      await readFile(path.join(worktree.root, '.mcp.json'), 'utf8'),
      worktree.name,
      env,
    ),
  };
}

beforeAll(async () => {
  const first = await makeTempRepo({ 'notes.txt': 'first\n' });
  const second = await makeTempRepo({ 'notes.txt': 'second\n' });
  repos.push(first, second);
  await addWorktree(first, 'feature-x');
  home = await makeTempDir('grove-home-');
  host = await Host.open({
    dataDir: await makeTempDir('grove-configs-data-'),
    firstPort: randomFirstPort(),
    worktreePollMs: 0,
  });
  await host.addRepo(first.root);
  await host.addRepo(second.root);
  await host.startAll();

  // The Connect tab of each worktree: its target, as the tab builds it.
  for (const repo of host.snapshot().repos) {
    for (const worktree of repo.worktrees) {
      const info = (await runHostCommand(host, 'getConnectionInfo', {
        worktreeId: worktree.id,
      })) as ConnectionInfo;
      const target = clientConfigTarget(worktree, repo, info);
      worktrees.push({ target, name: serverName(target), root: worktree.path });

      // Cursor, Windsurf: the entry into the one global file. Codex: the table at its end.
      await addJsonEntry(files().cursor, snippet(target, 'cursor'), serverName(target));
      await addJsonEntry(files().windsurf, snippet(target, 'windsurf'), serverName(target));
      await mkdir(path.dirname(files().codex), { recursive: true });
      await appendFile(files().codex, snippet(target, 'codex'));
      // Claude Code: "Add to project .mcp.json…", then "Write .mcp.json".
      const preview = (await runHostCommand(host, 'previewProjectMcpJson', {
        worktreeId: worktree.id,
      })) as ConfigPreview;
      await runHostCommand(host, 'addToProjectMcpJson', {
        worktreeId: worktree.id,
        expected: preview.before,
      });
      // The token variable: the shell-profile line, and the Linux desktop line.
      await appendFile(files().bashrc, `${setupLine(target, 'shell-profile')}\n`);
      await mkdir(path.dirname(files().environmentD), { recursive: true });
      await appendFile(files().environmentD, `${setupLine(target, 'linux-environment-d')}\n`);
    }
  }
}, 60_000);

afterAll(async () => {
  await host?.close();
  for (const repo of repos) await repo.cleanup();
});

describe('every worktree in one client config, as the Connect tab says', () => {
  it('gives three worktrees (two repositories named alike, both on main) three names and variables', async () => {
    expect(worktrees).toHaveLength(3);
    expect(new Set(worktrees.map((w) => w.name)).size).toBe(3);
    expect(new Set(worktrees.map((w) => tokenEnvVar(w.target))).size).toBe(3);
    const mains = worktrees.filter((w) => w.target.branch === 'main');
    expect(mains.map((w) => w.target.repo)).toEqual(['repo', 'repo']);
    expect(mains[0]!.name).not.toBe(mains[1]!.name);
    // One global file each, holding every worktree's entry.
    const cursor = JSON.parse(await readFile(files().cursor, 'utf8'));
    expect(Object.keys(cursor.mcpServers).sort()).toEqual(worktrees.map((w) => w.name).sort());
    // No token in any of the files: only variables.
    for (const file of [files().cursor, files().windsurf, files().codex]) {
      const text = await readFile(file, 'utf8');
      for (const { target } of worktrees) expect(text).not.toContain(target.token);
    }
  });

  it('from a terminal (~/.bashrc): Cursor, Windsurf, Codex and Claude Code reach every worktree', async () => {
    const env = await terminalEnv();
    for (const worktree of worktrees) {
      expect(env[tokenEnvVar(worktree.target)]).toBe(worktree.target.token);
      const resolved = await resolvedEntries(env, worktree);
      for (const [client, server] of Object.entries(resolved)) {
        expect(server.url, `${client} → ${worktree.name}`).toBe(worktree.target.urls.mcp);
        expect(await toolNames(server), `${client} → ${worktree.name}`).toContain('read_file');
      }
    }
  });

  it.skipIf(!existsSync(ENVIRONMENT_D_GENERATOR))(
    "from the desktop (Linux environment.d, read by systemd's generator): the apps reach every worktree",
    async () => {
      const env = await desktopEnv();
      for (const worktree of worktrees) {
        const { cursor, windsurf, codex } = await resolvedEntries(env, worktree);
        for (const [client, server] of Object.entries({ cursor, windsurf, codex })) {
          expect(await toolNames(server), `${client} → ${worktree.name}`).toContain('read_file');
        }
      }
    },
  );

  it("one worktree's token does not open another's server: a shared variable could not work", async () => {
    const [a, b] = worktrees;
    const env = await terminalEnv();
    // a's entries read a's variable; give it b's token, as one GROVE_TOKEN for all would.
    const mixed = { ...env, [tokenEnvVar(a!.target)]: b!.target.token };
    const resolved = await resolvedEntries(mixed, a!);
    for (const server of Object.values(resolved)) expect(await initializeStatus(server)).toBe(403);
    // And with its own token, a's server answers the same request.
    expect(await initializeStatus((await resolvedEntries(env, a!)).cursor)).toBe(200);
  });
});
