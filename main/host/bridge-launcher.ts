// How this machine runs `grove bridge` (main/bridge/) for a worktree: the command and arguments a
// stdio client such as Claude Desktop is given by the Connect tab and by "Add to Claude Desktop".
// The shell that runs the host knows which program that is: the packaged app's own binary, or,
// from a source checkout, this Node running bin/grove.js.
import { fileURLToPath } from 'node:url';
import type { BridgeCommand } from '../../shared/model.ts';

/** The program and leading arguments that make up `grove` on this machine. */
export interface GroveLauncher {
  command: string;
  args: string[];
}

/**
 * `grove` from a source checkout: the Node running this host (the pinned Node 24 when started
 * through npm; bin/grove.js needs its type stripping) with bin/grove.js.
 */
export function sourceCheckoutLauncher(nodePath: string = process.execPath): GroveLauncher {
  return {
    command: nodePath,
    args: [fileURLToPath(new URL('../../bin/grove.js', import.meta.url))],
  };
}

/**
 * The bridge command for one worktree. The data directory is always named: the client starts the
 * bridge without this host's environment (GROVE_DATA_DIR), and must find this host.
 */
export function bridgeCommand(
  launcher: GroveLauncher,
  dataDir: string,
  worktreePath: string,
): BridgeCommand {
  return {
    command: launcher.command,
    args: [...launcher.args, 'bridge', '--data-dir', dataDir, worktreePath],
  };
}
