// Dispatches HostApi commands (shared/host-api.ts) to the host, validating input and output with
// the contract's schemas. Every transport (headless HTTP, Electron IPC) goes through here.
import {
  hostCommands,
  isHostCommandName,
  type HostCommandName,
  type HostCommandOutput,
} from '../../shared/host-api.ts';
import { HostCommandError, type Host } from './host.ts';

type Handlers = {
  [N in HostCommandName]: (
    host: Host,
    input: never,
  ) => Promise<HostCommandOutput<N>> | HostCommandOutput<N>;
};

const handlers: Handlers = {
  getSnapshot: (host) => host.snapshot(),
  startServer: async (host, input: { worktreeId: string }) => {
    await host.startServer(input.worktreeId);
    return { ok: true as const };
  },
  stopServer: async (host, input: { worktreeId: string }) => {
    await host.stopServer(input.worktreeId);
    return { ok: true as const };
  },
  getConnectionInfo: (host, input: { worktreeId: string }) =>
    host.getConnectionInfo(input.worktreeId),
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
