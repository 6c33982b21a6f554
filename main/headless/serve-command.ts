// `grove serve [options] [<repo-path>...]`: runs the host without Electron — one MCP server per
// worktree of each repo, plus the UI in a browser. Prints, per worktree, its branch, path, URLs and
// token (or, with --json, machine-readable lines: first {"event":"ready",...}, then host events),
// and keeps running until SIGINT or SIGTERM. Loaded by the dispatcher (cli.ts) only for `serve`.
import { parseArgs } from 'node:util';
import path from 'node:path';
import { defaultDataDirectory } from '../host/data-directory.ts';
import { Host } from '../host/host.ts';
import { acquireHostLock, HostRunningError } from '../host/host-lock.ts';
import { UserError } from '../platform/errors.ts';
import { GROVE_VERSION } from '../platform/version.ts';
import { startUiServer, type UiServer } from './ui-server.ts';
import type { WorktreeState } from '../../shared/model.ts';
import type { CliCommand } from './usage.ts';
import { USAGE, usageError } from './usage.ts';

const DEFAULT_UI_PORT = 47100;

interface ServeOptions {
  repoPaths: string[];
  dataDir: string;
  uiPort: number;
  ui: boolean;
  json: boolean;
  /** Offer the just tools on every worktree served (`--just-tasks`). */
  justTasks: boolean;
  /** First port for new worktrees (env GROVE_FIRST_PORT), so several hosts can coexist. */
  firstPort: number | undefined;
}

function parseServeArgs(args: string[]): ServeOptions {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      'ui-port': { type: 'string' },
      'no-ui': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'just-tasks': { type: 'boolean', default: false },
    },
  });
  const uiPort = values['ui-port'] === undefined ? DEFAULT_UI_PORT : Number(values['ui-port']);
  if (!Number.isInteger(uiPort) || uiPort < 0 || uiPort > 65535) {
    throw usageError(`--ui-port must be a port number (0-65535), got ${values['ui-port']}`);
  }
  const firstPort = process.env.GROVE_FIRST_PORT ? Number(process.env.GROVE_FIRST_PORT) : undefined;
  if (
    firstPort !== undefined &&
    !(Number.isInteger(firstPort) && firstPort > 0 && firstPort < 65536)
  ) {
    throw usageError(`GROVE_FIRST_PORT must be a port number, got ${process.env.GROVE_FIRST_PORT}`);
  }
  return {
    firstPort,
    repoPaths: positionals,
    dataDir: path.resolve(values['data-dir'] ?? defaultDataDirectory()),
    uiPort,
    ui: !values['no-ui'],
    json: values.json,
    justTasks: values['just-tasks'],
  };
}

function describeStatus(worktree: WorktreeState): string {
  const { status } = worktree;
  switch (status.state) {
    case 'running':
      return `running on port ${status.port}`;
    case 'error':
      return `error: ${status.message}`;
    default:
      return status.state;
  }
}

/**
 * Writes lines to `stream` until whoever reads it is gone: a pipe whose reader exited (EPIPE), or
 * any other write error, ends the output, never the process (an uncaught EPIPE ended `grove serve
 * --json` once the program reading its events exited, and with it every worktree server). `onGone`
 * is told once. Node ignores SIGPIPE, so the error event is all there is.
 */
export function outputUntilGone(
  stream: NodeJS.WriteStream,
  onGone: (error: Error) => void,
): (line: string) => void {
  let gone = false;
  stream.on('error', (error: Error) => {
    if (gone) return;
    gone = true;
    onGone(error);
  });
  return (line) => {
    if (!gone && !stream.destroyed) stream.write(`${line}\n`);
  };
}

async function serve(options: ServeOptions): Promise<void> {
  // Once the reader of stdout or stderr is gone, Grove serves on, said in grove.log.
  const logTo: { host?: Host } = {};
  const gone =
    (name: string) =>
    (error: Error): void =>
      logTo.host?.log.warn(`${name} closed (${error.message}); serving on without writing to it`);
  const out = outputUntilGone(process.stdout, gone('stdout'));
  const err = outputUntilGone(process.stderr, gone('stderr'));
  // Before the ready line: what the start waits for, when it waits.
  const announce = (message: string, worktree?: string): void => {
    if (options.json) out(JSON.stringify({ event: 'waiting', message, worktree }));
    else err(`grove: ${worktree ? `${worktree}: ` : ''}${message}`);
  };
  // One host per data directory: refused while another runs, waits while one is stopping.
  const lock = await acquireHostLock(options.dataDir, {
    shell: 'serve',
    onWaiting: (holder) => announce(`waiting for the previous Grove (pid ${holder.pid}) to stop`),
  });
  const host = await Host.open({
    dataDir: options.dataDir,
    firstPort: options.firstPort,
    justTasks: options.justTasks,
  }).catch((error: unknown) => {
    lock.release();
    throw error;
  });
  logTo.host = host;
  let ui: UiServer | undefined;
  /**
   * The one way out, for a signal and a failed start alike: the UI, then every worktree process
   * (their ports free), and only then the lock — a start the signal interrupts launches nothing
   * more once the host is closing (Host.startAll), and is waited for.
   */
  let closing: Promise<void> | undefined;
  const shutDown = (): Promise<void> =>
    (closing ??= (async () => {
      lock.publish({ state: 'stopping' });
      const uiAtStop = ui;
      await uiAtStop?.close();
      await host.close();
      await starting.catch(() => undefined); // it ends soon: the host is closed
      if (ui !== uiAtStop) await ui?.close(); // started meanwhile
      lock.release(); // only now: every worktree process has exited, its port is free
    })());
  const stop = async (signal: string): Promise<void> => {
    if (closing) {
      process.exit(1); // a second Ctrl+C: give up waiting
    }
    if (!options.json) err(`\n${signal}: stopping servers...`);
    await shutDown();
    if (options.json) out(JSON.stringify({ event: 'stopped' }));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  // (Declared after the handlers that read it: no signal is handled before this line has run.)
  const starting = (async () => {
    if (options.repoPaths.length > 0) {
      for (const repoPath of options.repoPaths) await host.addRepo(repoPath);
    } else {
      for (const failure of await host.restoreRepos()) {
        err(`grove: skipped ${failure.path}: ${failure.error}`);
      }
      if (host.snapshot().repos.length === 0) {
        throw usageError(`no repositories opened before in ${options.dataDir}: give a path`);
      }
    }
    const stopAnnouncing = host.onEvent((event) => {
      if (event.type !== 'worktree-changed') return;
      const { status, path: worktree } = event.worktree;
      if (status.state === 'starting' && status.detail) announce(status.detail, worktree);
    });
    await host.startAll();
    stopAnnouncing();
    if (options.ui && !closing) {
      ui = await startUiServer({ host, port: options.uiPort, token: host.uiToken() });
    }
  })();
  try {
    await starting;
  } catch (error) {
    const stoppedBySignal = closing !== undefined;
    await shutDown();
    if (stoppedBySignal) return; // the failure is the stop's doing; the stop exits
    throw error;
  }
  if (closing) return; // stopped while starting: no ready line; the stop exits
  lock.publish({ state: 'running', ui: ui?.url ?? null });

  const worktrees = host.snapshot().repos.flatMap((repo) => repo.worktrees);
  if (options.json) {
    out(
      JSON.stringify({
        event: 'ready',
        ui: ui?.url ?? null,
        worktrees: worktrees.map((worktree) => {
          const { token } = host.getConnectionInfo(worktree.id);
          return {
            path: worktree.path,
            branch: worktree.branch,
            sse: worktree.urls.sse,
            mcp: worktree.urls.mcp,
            token,
            ...(worktree.status.state === 'error' ? { error: worktree.status.message } : {}),
          };
        }),
      }),
    );
    host.onEvent((event) => {
      if (event.type === 'snapshot') return;
      const { type, ...rest } = event;
      out(JSON.stringify({ event: type, ...rest }));
    });
    return;
  }
  out(`Grove ${GROVE_VERSION}: ${worktrees.length} worktree server(s)\n`);
  for (const worktree of worktrees) {
    const { token } = host.getConnectionInfo(worktree.id);
    out(`  ${worktree.branch ?? '(detached)'}  ${worktree.path}`);
    out(`    status  ${describeStatus(worktree)}`);
    if (worktree.portNotice) out(`    note    ${worktree.portNotice}`);
    out(`    SSE     ${worktree.urls.sse}`);
    out(`    HTTP    ${worktree.urls.mcp}`);
    out(`    token   ${token}\n`);
  }
  if (ui) {
    out(`UI: ${ui.url}`);
    out('Open it in a browser; its Connect tab has ready-made configs for each client.\n');
  }
  out('Press Ctrl+C to stop.');
}

/** `grove serve`: never returns an exit code of its own (-1); it runs until a signal. */
export const serveCommand: CliCommand = {
  usage: USAGE,
  async run(args) {
    const options = parseServeArgs(args);
    try {
      await serve(options);
    } catch (error) {
      if (options.json) {
        // --json consumers read stdout only: the failure as one event line too.
        const holder = error instanceof HostRunningError ? error.holder : undefined;
        const message = error instanceof Error ? error.message : String(error);
        const code = error instanceof UserError ? error.code : undefined;
        console.log(
          JSON.stringify({ event: 'error', message, code, pid: holder?.pid, ui: holder?.ui }),
        );
      }
      throw error;
    }
    return -1;
  },
};
