// The `bridge` command line, shared by both binaries that run it: `grove bridge` (bin/grove.js,
// main/headless/cli.ts) and the packaged app's binary started with `bridge` as its first argument
// (main/electron/electron-main.ts). Parses the arguments, keeps stdout for the protocol, logs to
// stderr, and runs the bridge until the client closes stdin. Clients file whatever a stdio server
// writes to stderr as an error (Claude Code: "Server stderr: ..."), so by default only what needs
// the user's attention goes there (warnings, errors); `--verbose` adds what the bridge is doing.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { defaultDataDirectory } from '../host/data-directory.ts';
import { UserError } from '../platform/errors.ts';
import { createLogger, stderrSink } from '../platform/log.ts';
import { runBridge } from './bridge.ts';
import { hasAppDatabase } from './find-host.ts';

export const BRIDGE_USAGE = `Usage: grove bridge [options] <worktree-path>

Speaks MCP over stdio (for Claude Desktop and any stdio client) for the worktree the path is in.
When a Grove host (the app, or grove serve) serves that worktree, forwards to its server, so the
window shows the client and its calls; otherwise serves the worktree itself. stdout carries the
protocol only; stderr gets warnings and errors (what needs your attention).

Options:
  --data-dir DIR   the data directory of the host to look for (default: ${defaultDataDirectory()})
  --local          serve in this process even when a host serves the worktree
  --verbose        also say on stderr what the bridge does (where it serves from, when it moves);
                   GROVE_BRIDGE_DEBUG=1 adds debugging detail
  -h, --help       show this help`;

/**
 * Runs `grove bridge <args>` until the client closes stdin; resolves with the exit code. Anything
 * written to stdout that is not protocol would break the client, so from here on console output of
 * any module goes to stderr. A bad command line throws a UserError whose cause is 'usage'.
 */
export async function runBridgeCommand(args: string[]): Promise<number> {
  for (const method of ['log', 'info', 'debug'] as const) console[method] = console.error;
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      local: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) {
    throw new UserError(`grove bridge takes one worktree path, got ${positionals.length}`, {
      code: 'invalid-argument',
      cause: 'usage',
    });
  }
  const dataDir = path.resolve(values['data-dir'] ?? defaultDataDirectory());
  const log = createLogger([stderrSink('debug')], {
    scope: 'bridge',
    minLevel: process.env.GROVE_BRIDGE_DEBUG ? 'debug' : values.verbose ? 'info' : 'warn',
  });
  // A data directory given on purpose where no host ever ran is most likely a mistyped one: the
  // bridge then serves the worktree itself and no window lists the client, so say why.
  if (values['data-dir'] !== undefined && !values.local && !hasAppDatabase(dataDir)) {
    log.warn(
      `no Grove host uses ${dataDir} (no app database there): serving the worktree in this ` +
        `process, so no Grove window lists this client; give --data-dir the host's data ` +
        `directory (default ${defaultDataDirectory()})`,
    );
  }
  const running = await runBridge({
    worktreePath: positionals[0]!,
    dataDir,
    local: values.local,
    log,
  });
  process.on('SIGTERM', () => void running.close());
  process.on('SIGINT', () => void running.close());
  await running.closed;
  return 0;
}
