// The HostApi contract: every command the renderer can send to the host and every event the host
// pushes back. Both transports implement it from this one table — the Electron preload (IPC) and
// the headless HTTP client (POST /api/<command> + an SSE event stream at /api/events) — and the
// host validates every input with the same schemas.
import { z } from 'zod';
import {
  ConnectionInfoSchema,
  HostSnapshotSchema,
  WorktreeStateSchema,
  type ConnectionInfo,
  type HostSnapshot,
  type WorktreeState,
} from './model.ts';

const WorktreeRef = z.object({ worktreeId: z.string().min(1) });
const Empty = z.object({});
const Ok = z.object({ ok: z.literal(true) });

/** Every command: its input schema and its output schema. */
export const hostCommands = {
  getSnapshot: { input: Empty, output: HostSnapshotSchema },
  startServer: { input: WorktreeRef, output: Ok },
  stopServer: { input: WorktreeRef, output: Ok },
  getConnectionInfo: { input: WorktreeRef, output: ConnectionInfoSchema },
} as const;

export type HostCommandName = keyof typeof hostCommands;
export type HostCommandInput<N extends HostCommandName> = z.infer<
  (typeof hostCommands)[N]['input']
>;
export type HostCommandOutput<N extends HostCommandName> = z.infer<
  (typeof hostCommands)[N]['output']
>;

export function isHostCommandName(name: string): name is HostCommandName {
  return Object.hasOwn(hostCommands, name);
}

/** Events pushed by the host. A new subscriber first receives a full `snapshot`. */
export const HostEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('snapshot'), snapshot: HostSnapshotSchema }),
  z.object({ type: z.literal('worktree-changed'), worktree: WorktreeStateSchema }),
]);
export type HostEvent = z.infer<typeof HostEventSchema>;

/** What the renderer holds: one object, whichever transport is underneath. */
export interface HostApi {
  getSnapshot(): Promise<HostSnapshot>;
  startServer(worktreeId: string): Promise<void>;
  stopServer(worktreeId: string): Promise<void>;
  getConnectionInfo(worktreeId: string): Promise<ConnectionInfo>;
  /** Subscribes to host events; returns the function that unsubscribes. */
  onEvent(listener: (event: HostEvent) => void): () => void;
}

export type { WorktreeState };
