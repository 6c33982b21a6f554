// The HostApi contract: every command the renderer can send to the host and every event the host
// pushes back. Both transports implement it from this one table — the Electron preload (IPC) and
// the headless HTTP client (POST /api/<command> + an SSE event stream at /api/events) — and the
// host validates every input with the same schemas.
import { z } from 'zod';
import { chatCommands, ChatHostEventSchema } from './chat.ts';
import { decisionCommands } from './decisions.ts';
import {
  ActivityEntrySchema,
  ConnectionInfoSchema,
  HostSnapshotSchema,
  RepoStateSchema,
  WorktreeStateSchema,
  type WorktreeState,
} from './model.ts';
import { ReconcileStateSchema } from './reconcile.ts';
import { UndoMarkResultSchema } from './reconcile-results.ts';

const WorktreeRef = z.object({ worktreeId: z.string().min(1) });

/** One tool as `tools/list` describes it (schemas are JSON Schema objects). */
export const ToolInfoSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
});
export type ToolInfo = z.infer<typeof ToolInfoSchema>;

/** What a tool call returned: MCP content blocks, the structured result, and whether it failed. */
export const ToolCallResultSchema = z.object({
  isError: z.boolean(),
  content: z.array(z.record(z.string(), z.unknown())),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  durationMs: z.number(),
});
export type ToolCallResult = z.infer<typeof ToolCallResultSchema>;

/** Where a client config was written, and the backup of the file it replaced (if any). */
export const ConfigWriteResultSchema = z.object({
  path: z.string(),
  backupPath: z.string().nullable(),
  serverName: z.string(),
  /** True when the file already held exactly this entry: nothing was written. */
  unchanged: z.boolean(),
});
export type ConfigWriteResult = z.infer<typeof ConfigWriteResultSchema>;

/** What adding a server entry to a config file would write; nothing is written by asking. */
export const ConfigPreviewSchema = z.object({
  path: z.string(),
  serverName: z.string(),
  /** The file's text now (null: there is no file). */
  before: z.string().nullable(),
  /** Its text after the change: only Grove's entry differs. */
  after: z.string(),
  /** True when the file already holds exactly this entry. */
  unchanged: z.boolean(),
});
export type ConfigPreview = z.infer<typeof ConfigPreviewSchema>;

/** The ports a worktree's server may be moved to (below 1024 needs privileges on most systems). */
export const WORKTREE_PORT_MIN = 1024;
export const WORKTREE_PORT_MAX = 65535;

const Empty = z.object({});
const Ok = z.object({ ok: z.literal(true) });

/** Every command: its input schema and its output schema. */
export const hostCommands = {
  getSnapshot: { input: Empty, output: HostSnapshotSchema },
  /** Opens the repository containing `path` (any path inside one of its worktrees). */
  addRepo: { input: z.object({ path: z.string().min(1) }), output: RepoStateSchema },
  /** Stops the repository's servers and forgets it (and its worktrees' ports and tokens). */
  removeRepo: { input: z.object({ repoId: z.string().min(1) }), output: Ok },
  startServer: { input: WorktreeRef, output: Ok },
  stopServer: { input: WorktreeRef, output: Ok },
  restartServer: { input: WorktreeRef, output: Ok },
  /** Ends a running tool call now: its client gets an error saying it was cancelled in Grove. */
  cancelToolCall: { input: WorktreeRef.extend({ callId: z.string().min(1) }), output: Ok },
  /**
   * Undoes the worktree's last mark_reconciled (`markId`: its result's mark_id): the hash cache
   * rows it replaced come back, those it added go. Refused, nothing changed, for an older mark or
   * when a row was written again since.
   */
  undoMark: {
    input: WorktreeRef.extend({ markId: z.string().min(1).max(100) }),
    output: UndoMarkResultSchema,
  },
  /** Stops a running just task now (its recipe and what it started); its client gets an error. */
  stopTask: { input: WorktreeRef.extend({ runId: z.string().min(1) }), output: Ok },
  getConnectionInfo: { input: WorktreeRef, output: ConnectionInfoSchema },
  /** Replaces the token at once: the old one is refused from then on. */
  rotateToken: { input: WorktreeRef, output: ConnectionInfoSchema },
  setWorktreeSettings: {
    input: WorktreeRef.extend({
      autostart: z.boolean().optional(),
      requireToken: z.boolean().optional(),
      /** Offer list_just_tasks and run_just_task (they run the worktree's just recipes). */
      justTasks: z.boolean().optional(),
    }),
    output: WorktreeStateSchema,
  },
  /** Chooses the base branch reconciliation compares against (null: the repo's default). */
  setReconcileBase: {
    input: WorktreeRef.extend({ base: z.string().min(1).nullable() }),
    output: WorktreeStateSchema,
  },
  /** Moves a worktree's server to another port (restarting it if it runs). */
  setWorktreePort: {
    input: WorktreeRef.extend({
      port: z.number().int().min(WORKTREE_PORT_MIN).max(WORKTREE_PORT_MAX),
    }),
    output: WorktreeStateSchema,
  },
  /**
   * Moves a worktree whose server moved (another program had taken its port) back to that port,
   * restarting it if it runs; refused while the port is still taken.
   */
  reclaimPort: { input: WorktreeRef, output: WorktreeStateSchema },
  /** Keeps the port a worktree moved to: the window stops offering the old one. */
  keepMovedPort: { input: WorktreeRef, output: WorktreeStateSchema },
  /** The tools a worktree's server offers, asked by the host's own MCP client (the tool console). */
  listTools: { input: WorktreeRef, output: z.object({ tools: z.array(ToolInfoSchema) }) },
  /** Calls one tool through the tool console; a tool error comes back as `isError: true`. */
  callTool: {
    input: WorktreeRef.extend({
      name: z.string().min(1),
      arguments: z.record(z.string(), z.unknown()),
    }),
    output: ToolCallResultSchema,
  },
  /** What adding this worktree to Claude Desktop's config file would write (nothing is written). */
  previewClaudeDesktop: { input: WorktreeRef, output: ConfigPreviewSchema },
  /**
   * Adds (or replaces) this worktree's entry in Claude Desktop's config file, changing no other
   * entry; the old file is backed up beside it. With `expected` (the `before` of the preview the
   * user saw), a file that changed since is refused untouched.
   */
  addToClaudeDesktop: {
    input: WorktreeRef.extend({ expected: z.string().nullable().optional() }),
    output: ConfigWriteResultSchema,
  },
  /** What adding this worktree to `<worktree>/.mcp.json` would write (nothing is written). */
  previewProjectMcpJson: { input: WorktreeRef, output: ConfigPreviewSchema },
  /**
   * Adds (or replaces) this worktree's entry in `<worktree>/.mcp.json` (Claude Code), changing no
   * other entry; the old file is backed up in the data directory. With `expected` (the `before` of
   * the preview the user saw), a file that changed since is refused untouched.
   */
  addToProjectMcpJson: {
    input: WorktreeRef.extend({ expected: z.string().nullable().optional() }),
    output: ConfigWriteResultSchema,
  },
  /** The chat panel (shared/chat.ts): settings, conversations, send, stop, reconcile. */
  ...chatCommands,
  /** Decision proposals (shared/decisions.ts): list, preview an accept, accept, reject. */
  ...decisionCommands,
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
  /** A worktree's reconciliation state changed (files or specs edited, cache updated...). */
  z.object({
    type: z.literal('reconcile-state'),
    worktreeId: z.string(),
    state: ReconcileStateSchema,
  }),
  /** New tool calls of one worktree, oldest first. */
  z.object({
    type: z.literal('activity'),
    worktreeId: z.string(),
    entries: z.array(ActivityEntrySchema),
  }),
  /** Progress of a chat answer (shared/chat.ts ChatEvent), per conversation. */
  ChatHostEventSchema,
]);
export type HostEvent = z.infer<typeof HostEventSchema>;

/** One named method per command: `api.startServer({ worktreeId })`. */
export type HostCommandMethods = {
  [N in HostCommandName]: (input: HostCommandInput<N>) => Promise<HostCommandOutput<N>>;
};

/**
 * What the renderer holds: one object, whichever transport is underneath (the Electron preload's
 * `window.groveHost`, or HTTP under `grove serve`). It has a named method for every command in
 * `hostCommands` — transports build them from that table (see `commandMethods`), so adding a
 * command needs no change in any transport — and `onEvent`.
 */
export type HostApi = HostCommandMethods & {
  /** Subscribes to host events (first a full snapshot); returns the function that unsubscribes. */
  onEvent(listener: (event: HostEvent) => void): () => void;
};

/** Builds the named command methods from one function that sends a command by name. */
export function commandMethods(
  send: (name: HostCommandName, input: unknown) => Promise<unknown>,
): HostCommandMethods {
  const methods: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const name of Object.keys(hostCommands) as HostCommandName[]) {
    methods[name] = (input) => send(name, input);
  }
  return methods as HostCommandMethods;
}

export type { WorktreeState };

/** Native helpers the desktop app's preload adds (`window.groveNative`); absent in a browser. */
export interface NativeApi {
  /** Opens the system folder picker; resolves to the chosen path, or null if cancelled. */
  pickRepositoryFolder(): Promise<string | null>;
}
