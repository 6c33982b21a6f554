// The messages a worktree process sends the host (worktree-protocol.ts has the other direction),
// with the schema the host validates each of them with. Imported by the host; the worktree
// process imports only the type.
import { z } from 'zod';
import {
  ActivityEntrySchema,
  ClientInfoSchema,
  RunningCallSchema,
  RunningTaskSchema,
} from './model.ts';
import { LogRecordSchema } from './log-record.ts';
import { ReconcileStateSchema } from './reconcile.ts';
import { UndoMarkResultSchema } from './reconcile-results.ts';

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
  z.object({
    type: z.literal('clients'),
    clients: z.array(ClientInfoSchema),
    /** Health checks (closed clients that made no call) dropped from the list since the last message. */
    healthChecks: z.number().int().nonnegative().optional(),
  }),
  /** New tool calls since the last message, oldest first. */
  z.object({ type: z.literal('activity'), entries: z.array(ActivityEntrySchema) }),
  /** The tool calls running now (whenever the set changes, batched like activity). */
  z.object({ type: z.literal('running-calls'), calls: z.array(RunningCallSchema) }),
  /** The just tasks running now (whenever one starts or ends). */
  z.object({ type: z.literal('running-tasks'), tasks: z.array(RunningTaskSchema) }),
  /** The worktree's reconciliation state: after start, then whenever it changes. */
  z.object({ type: z.literal('reconcile-state'), state: ReconcileStateSchema }),
  /** The start waits for something (its port, held by a Grove server that is stopping). */
  z.object({ type: z.literal('waiting'), detail: z.string() }),
  /** The process cannot serve (root missing, no free port...); it exits after sending this. */
  z.object({ type: z.literal('fatal'), message: z.string() }),
  /** The answer to `undo-mark`: what it restored, or why it was refused (nothing changed). */
  z.object({
    type: z.literal('undo-mark-result'),
    requestId: z.number().int(),
    result: UndoMarkResultSchema.optional(),
    error: z.string().optional(),
  }),
  /**
   * The answer to a `decision-request` with this `requestId`: its result (checked by the host
   * against the command's output schema, shared/decisions.ts), or the refusal, with the
   * UserError's code.
   */
  z.object({
    type: z.literal('decision-answer'),
    requestId: z.number().int(),
    ok: z.boolean(),
    result: z.unknown().optional(),
    message: z.string().optional(),
    code: z.string().optional(),
  }),
  /** A record of the worktree process's log: the host writes it to its log file. */
  z.object({ type: z.literal('log'), record: LogRecordSchema }),
]);
export type WorktreeToHost = z.infer<typeof WorktreeToHostSchema>;
