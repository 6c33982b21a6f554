// The messages exchanged between the host and one worktree process (over the fork/utilityProcess
// IPC channel). Both sides validate what they receive: the worktree process with the schema here,
// the host with worktree-to-host.ts's, kept apart so that a worktree process does not build the
// window model's schemas it never checks anything against (docs/performance.md, idle memory).
import { z } from 'zod';

export type { WorktreeToHost } from './worktree-to-host.ts';

export const HostToWorktreeSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('start'),
    /** Absolute path of the worktree root. */
    root: z.string(),
    /** The port to listen on; when taken, the process tries the following ones. */
    port: z.number().int().min(0).max(65535),
    /**
     * Ports the process never moves to: those the host's other worktrees have or remember, so
     * that a worktree that moves does not take a sibling's port.
     */
    avoidPorts: z.array(z.number().int().min(0).max(65535)).max(65_536).optional(),
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
  /** The user stopped a running just task in the window. */
  z.object({ type: z.literal('stop-task'), runId: z.string() }),
  /** The window's Undo of the last mark_reconciled; answered by `undo-mark-result`. */
  z.object({
    type: z.literal('undo-mark'),
    requestId: z.number().int(),
    markId: z.string().min(1).max(100),
  }),
  /**
   * The window lists, previews, accepts or rejects a decision proposal (people only: no MCP tool
   * accepts or rejects). `request` is a shared/decisions.ts DecisionRequest, validated by the
   * process when it handles it (main/worktree/decision-requests.ts, loaded then); the process
   * answers with `decision-answer` and the same `requestId`.
   */
  z.object({
    type: z.literal('decision-request'),
    requestId: z.number().int(),
    request: z.unknown(),
  }),
]);
export type HostToWorktree = z.infer<typeof HostToWorktreeSchema>;

/**
 * How many ports after the requested one a worktree process tries before giving up (ports it
 * skips, those of other worktrees, do not count).
 */
export const PORT_ATTEMPTS = 20;
