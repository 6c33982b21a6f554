// `grove` command line: a small dispatcher. `grove --version` and `grove --help` need nothing
// more than this module; every command is its own module, imported only when that command runs,
// so `grove bridge` never loads the host and `grove serve` never loads the bridge. bin/grove.js
// runs this from the bundle in out/cli/ (scripts/build-cli.ts), or from the sources without one.
// Commands: `serve` (serve-command.ts: the host and the UI without Electron), `bridge`
// (main/bridge/bridge-command.ts: MCP over stdio for one worktree), and NotarAI 0.7's `check`,
// `score`, `export-context` and `decisions` (main/notarai-cli/: the engine for CI, no host).
import { GROVE_VERSION } from '../platform/version.ts';
import { isUsageError, USAGE, usageError, type CliCommand } from './usage.ts';

/** Each command's module, loaded on demand (given the command's arguments). */
const COMMANDS: Record<string, (args: string[]) => Promise<CliCommand>> = {
  serve: async () => (await import('./serve-command.ts')).serveCommand,
  // NotarAI 0.7's commands on the engine, no host (main/notarai-cli/).
  ...Object.fromEntries(
    (['check', 'score', 'export-context'] as const).map((name) => [
      name,
      async (args: string[]): Promise<CliCommand> => {
        // The pool's threads start first, while the command loads (notarai-cli/pool-warm-up.ts).
        (await import('../notarai-cli/pool-warm-up.ts')).warmUpPool(name, args);
        const { NOTARAI_USAGE, runNotaraiCommand } =
          await import('../notarai-cli/notarai-commands.ts');
        return { usage: NOTARAI_USAGE, run: (args) => runNotaraiCommand(name, args) };
      },
    ]),
  ),
  // NotarAI 0.7's `decisions list|accept|reject` (main/notarai-cli/decisions-command.ts).
  decisions: async () => {
    const { DECISIONS_USAGE, runDecisionsCommand } =
      await import('../notarai-cli/decisions-command.ts');
    return { usage: DECISIONS_USAGE, run: (args) => runDecisionsCommand(args) };
  },
  bridge: async () => {
    const { BRIDGE_USAGE, runBridgeCommand } = await import('../bridge/bridge-command.ts');
    return { usage: BRIDGE_USAGE, run: runBridgeCommand };
  },
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '-v' || name === '--version') {
    console.log(GROVE_VERSION);
    return 0;
  }
  if (name === undefined || name === '-h' || name === '--help') {
    console.log(USAGE);
    return name === undefined ? 2 : 0;
  }
  let command: CliCommand | undefined;
  try {
    const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (!load) throw usageError(`unknown command: ${name}`);
    command = await load(rest);
    if (rest.includes('-h') || rest.includes('--help')) {
      // Help is asked for by a person at a terminal, not a client: stdout is fine for the bridge.
      process.stdout.write(`${command.usage}\n`);
      return 0;
    }
    return await command.run(rest);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`grove: ${message}\n`);
    if (isUsageError(error)) {
      process.stderr.write(`\n${command?.usage ?? USAGE}\n`);
      return 2;
    }
    return 1;
  }
}

/** Runs the CLI and exits when it is done (a running `serve` exits on SIGINT/SIGTERM). */
export async function runCli(argv: string[]): Promise<void> {
  const code = await main(argv);
  if (code < 0) return;
  // Writes to a pipe are asynchronous: process.exit would drop what is still queued (a report
  // piped to jq was cut at 64-128 KB). An empty write's callback runs once those before it left.
  await Promise.all([process.stdout, process.stderr].map(flushed));
  process.exit(code);
}

/** Resolves once what was written to `stream` has been handed to the system (or it failed). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0 || stream.destroyed) resolve();
    else stream.write('', () => resolve());
  });
}
