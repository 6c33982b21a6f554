// The messages exchanged between the host and one worktree process (over the fork/utilityProcess
// IPC channel). Both sides validate what they receive with these schemas.
import { z } from 'zod';
import { ActivityEntrySchema, ClientInfoSchema, RunningCallSchema } from './model.ts';
import { LogRecordSchema } from './log-record.ts';
import { ReconcileStateSchema } from './reconcile.ts';

export const HostToWorktreeSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('start'),
    /** Absolute path of the worktree root. */
    root: z.string(),
    /** The port to listen on; when taken, the process tries the following ones. */
    port: z.number().int().min(0).max(65535),
    token: z.string().min(16),
    /** When false, requests need no token (Host and Origin are still checked). */
    requireToken: z.boolean(),
  }),
  /** A rotated token or changed requirement, effective for the very next request. */
  z.object({ type: z.literal('set-token'), token: z.string().min(16), requireToken: z.boolean() }),
  z.object({ type: z.literal('ping'), id: z.number().int() }),
  z.object({ type: z.literal('shutdown') }),
  /** The base branch the reconciliation state's `affected` figures compare against. */
  z.object({ type: z.literal('set-reconcile-base'), base: z.string().min(1) }),
  /**
   * Offer (or stop offering) the opt-in just task tools (list_just_tasks, run_just_task); sent
   * after `start` when on, and whenever the user changes it. Off until this says otherwise.
   */
  z.object({ type: z.literal('set-just-tasks'), enabled: z.boolean() }),
  /** The user cancelled a running tool call in the window. */
  z.object({ type: z.literal('cancel-call'), callId: z.string() }),
]);
export type HostToWorktree = z.infer<typeof HostToWorktreeSchema>;

export const WorktreeToHostSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('listening'),
    port: z.number().int().positive(),
    /** Set when the requested port was in use and the server took this one instead. */
    requestedPort: z.number().int().nullable(),
  }),
  z.object({
    type: z.literal('pong'),
    id: z.number().int(),
    /** How long the tool layer's probe (a file-system call through the thread pool) has been pending. */
    toolLayerPendingMs: z.number().nonnegative().optional(),
  }),
  /** The server's clients changed (sent at most a few times a second). */
  z.object({ type: z.literal('clients'), clients: z.array(ClientInfoSchema) }),
  /** New tool calls since the last message, oldest first. */
  z.object({ type: z.literal('activity'), entries: z.array(ActivityEntrySchema) }),
  /** The tool calls running now (whenever the set changes, batched like activity). */
  z.object({ type: z.literal('running-calls'), calls: z.array(RunningCallSchema) }),
  /** The worktree's reconciliation state: after start, then whenever it changes. */
  z.object({ type: z.literal('reconcile-state'), state: ReconcileStateSchema }),
  /** The process cannot serve (root missing, no free port...); it exits after sending this. */
  z.object({ type: z.literal('fatal'), message: z.string() }),
  /** A record of the worktree process's log: the host writes it to its log file. */
  z.object({ type: z.literal('log'), record: LogRecordSchema }),
]);
export type WorktreeToHost = z.infer<typeof WorktreeToHostSchema>;

/** How many ports after the requested one a worktree process tries before giving up. */
export const PORT_ATTEMPTS = 20;
