// Dispatches HostApi commands (shared/host-api.ts) to the host, validating input and output with
// the contract's schemas. Every transport (headless HTTP, Electron IPC) goes through here.
import {
  hostCommands,
  isHostCommandName,
  type HostCommandInput,
  type HostCommandName,
  type HostCommandOutput,
} from '../../shared/host-api.ts';
import { HostCommandError, type Host } from './host.ts';
import { RepoPathError } from './worktree-discovery.ts';

type Handlers = {
  [N in HostCommandName]: (
    host: Host,
    input: never,
  ) => Promise<HostCommandOutput<N>> | HostCommandOutput<N>;
};

type Input<N extends HostCommandName> = HostCommandInput<N>;
const ok = { ok: true as const };

const handlers: Handlers = {
  getSnapshot: (host) => host.snapshot(),
  addRepo: async (host, input: Input<'addRepo'>) => {
    try {
      return await host.addRepo(input.path);
    } catch (error) {
      // "not a git repository: ..." is the user's to fix, not a host failure.
      if (error instanceof RepoPathError) throw new HostCommandError(error.message);
      throw error;
    }
  },
  removeRepo: async (host, input: Input<'removeRepo'>) => {
    await host.removeRepo(input.repoId);
    return ok;
  },
  startServer: async (host, input: Input<'startServer'>) => {
    await host.startServer(input.worktreeId);
    return ok;
  },
  stopServer: async (host, input: Input<'stopServer'>) => {
    await host.stopServer(input.worktreeId);
    return ok;
  },
  restartServer: async (host, input: Input<'restartServer'>) => {
    await host.restartServer(input.worktreeId);
    return ok;
  },
  getConnectionInfo: (host, input: Input<'getConnectionInfo'>) =>
    host.getConnectionInfo(input.worktreeId),
  rotateToken: (host, input: Input<'rotateToken'>) => host.rotateToken(input.worktreeId),
  setWorktreeSettings: (host, { worktreeId, ...changes }: Input<'setWorktreeSettings'>) =>
    host.setWorktreeSettings(worktreeId, changes),
  setWorktreePort: (host, input: Input<'setWorktreePort'>) =>
    host.setWorktreePort(input.worktreeId, input.port),
};

/** Runs one command by name; invalid names or input throw HostCommandError with the reason. */
export async function runHostCommand(host: Host, name: string, input: unknown): Promise<unknown> {
  if (!isHostCommandName(name)) throw new HostCommandError(`unknown command: ${name}`);
  const parsed = hostCommands[name].input.safeParse(input ?? {});
  if (!parsed.success) {
    throw new HostCommandError(`invalid input for ${name}: ${parsed.error.issues[0]?.message}`);
  }
  const handler = handlers[name] as (host: Host, input: unknown) => unknown;
  return hostCommands[name].output.parse(await handler(host, parsed.data));
}
