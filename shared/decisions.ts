// NotarAI 0.7's decision proposals, defined once: the entries of `.notarai/decision-log.json` (as
// NotarAI's `DecisionProposal` reads and writes them), what the `list_decisions` and
// `propose_decision` tools return (main/tools/decision-tools.ts), and what the window will show.
// Keys are NotarAI's (snake_case); Grove's additions say so in their descriptions, which
// docs/tools.md is generated from. The log is read and written by main/reconcile/notarai07/decisions.ts.
import { z } from 'zod';

/** The statuses NotarAI gives a proposal; a log may hold others (they are listed, never acted on). */
export const DECISION_STATUSES = ['proposed', 'accepted', 'rejected'] as const;

/**
 * One entry of the log as NotarAI reads it (serde: every string required, `related_files` and
 * `reject_reason` optional). Keys NotarAI does not know are kept (passthrough), and written back.
 */
export const DecisionLogEntrySchema = z.looseObject({
  spec_path: z.string(),
  date: z.string(),
  choice: z.string(),
  rationale: z.string(),
  origin: z.string(),
  status: z.string(),
  related_files: z.array(z.string()).optional(),
  reject_reason: z.string().nullable().optional(),
});
export type DecisionLogEntry = z.infer<typeof DecisionLogEntrySchema>;

/** The whole file: `{"proposals": [...]}` (other top-level keys are kept). */
export const DecisionLogSchema = z.looseObject({ proposals: z.array(DecisionLogEntrySchema) });
export type DecisionLogFile = z.infer<typeof DecisionLogSchema>;

/** A proposal as the tools and the window see it: the log entry and its index there. */
export const DecisionSchema = z.object({
  index: z
    .number()
    .int()
    .describe(
      "The proposal's position in the log, as `notarai decisions list` numbers it and " +
        '`decisions accept|reject <spec> <index>` take it. Accepting removes the entry, so the ' +
        'indexes after it shift down by one.',
    ),
  spec_path: z.string().describe('The spec the decision belongs to (relative to the root).'),
  date: z.string().describe('YYYY-MM-DD.'),
  choice: z.string().describe('What was decided, in one line.'),
  rationale: z.string().describe('Why (line breaks kept).'),
  origin: z.string().describe('Who proposed it: "reconciliation", "human", ...'),
  status: z.string().describe('"proposed" (awaiting a person), "accepted" or "rejected".'),
  related_files: z.array(z.string()).describe('Files the decision concerns (may be empty).'),
  // anyOf [string, null], not zod's `.nullable()` (type: ["string", "null"], which strict
  // clients refuse: main/mcp/schema-portability.test.ts).
  reject_reason: z
    .union([z.string(), z.literal(null)])
    .describe('Why it was rejected; null when none was given.'),
});
export type Decision = z.infer<typeof DecisionSchema>;

/** What `list_decisions` returns. */
export const ListDecisionsResultSchema = z.object({
  decisions: z
    .array(DecisionSchema)
    .describe('The proposals that pass the filters, in log order (by index).'),
  total: z.number().int().describe('Entries in the log, whatever their status or spec.'),
  proposed: z
    .number()
    .int()
    .describe('Entries of the log still awaiting a person (status "proposed").'),
  log_path: z
    .string()
    .describe('The log, relative to the root: .notarai/decision-log.json (absent: no proposals).'),
});
export type ListDecisionsResult = z.infer<typeof ListDecisionsResultSchema>;

/** What `propose_decision` returns. */
export const ProposeDecisionResultSchema = z.object({
  decision: DecisionSchema.describe('The proposal as written, status "proposed".'),
  total: z.number().int().describe('Entries in the log now.'),
  log_path: z.string().describe('The file written, relative to the root.'),
});
export type ProposeDecisionResult = z.infer<typeof ProposeDecisionResultSchema>;

// ---- the window's review (HostApi commands, through the worktree process protocol) -------------

/** Which proposal a person acts on: the spec and the index `list` gave it. */
const ProposalRefSchema = z.object({
  specPath: z.string().min(1).max(4096),
  index: z.number().int().nonnegative(),
});

/**
 * What a window's accept or reject checks before writing: the proposal it showed (every field,
 * index included), so a log changed since (an entry removed, indexes shifted, a rationale edited)
 * is refused rather than acting on another proposal; and for an accept, the SHA-256 of the spec
 * text whose change it showed.
 */
export const DecisionExpectationSchema = z.object({
  decision: DecisionSchema,
  specSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});
export type DecisionExpectation = z.infer<typeof DecisionExpectationSchema>;

/** The reason a person gives for a reject (optional, as in NotarAI; one page at most). */
export const MAX_REJECT_REASON_CHARS = 2_000;

/** What a window asks the worktree process about decisions (one message each). */
export const DecisionRequestSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('list') }),
  ProposalRefSchema.extend({ action: z.literal('plan-accept') }),
  ProposalRefSchema.extend({ action: z.literal('accept'), expected: DecisionExpectationSchema }),
  ProposalRefSchema.extend({
    action: z.literal('reject'),
    reason: z.string().max(MAX_REJECT_REASON_CHARS).optional(),
    expected: DecisionExpectationSchema,
  }),
]);
export type DecisionRequest = z.infer<typeof DecisionRequestSchema>;

/**
 * What accepting a proposal would change, shown before anything is written: the spec's change as
 * a unified diff (every changed line, a little context), the SHA-256 of the spec text it applies
 * to, and how many log entries stay.
 */
export const AcceptPreviewSchema = z.object({
  decision: DecisionSchema,
  specPath: z.string(),
  /** `--- a/<spec>` / `+++ b/<spec>`, one hunk: exactly what the accept writes into the spec. */
  specDiff: z.string(),
  specSha256: z.string(),
  /** The log after the accept: the entry removed, so this many entries stay. */
  remaining: z.number().int().nonnegative(),
  logPath: z.string(),
});
export type AcceptPreview = z.infer<typeof AcceptPreviewSchema>;

/** What an accept or a reject did: the decision as written, and the files it wrote. */
export const DecisionActionResultSchema = z.object({
  decision: DecisionSchema,
  written: z.array(z.string()),
});
export type DecisionActionResult = z.infer<typeof DecisionActionResultSchema>;

/**
 * The decisions part of a worktree's reconciliation state: counts, per spec the proposals
 * awaiting a person, and a revision that changes whenever the log's content does (the window lists
 * the proposals again then). Null revision: there is no log.
 */
export const DecisionsSummarySchema = z.object({
  /** Entries of the log. */
  total: z.number().int().nonnegative(),
  /** Entries awaiting a person (status "proposed"). */
  proposed: z.number().int().nonnegative(),
  /** Specs with proposals awaiting a person, sorted by path. */
  bySpec: z.array(z.object({ specPath: z.string(), proposed: z.number().int().nonnegative() })),
  revision: z.string().nullable(),
  /** Why the log cannot be read or is not valid (counts are then 0); null when fine. */
  problem: z.string().nullable(),
});
export type DecisionsSummary = z.infer<typeof DecisionsSummarySchema>;

const WorktreeProposalRef = ProposalRefSchema.extend({ worktreeId: z.string().min(1) });

/**
 * The window's decision commands (HostApi, shared/host-api.ts): the host passes each to the
 * worktree's process (`decision-request`), which reads and writes through main/reconcile/.
 */
export const decisionCommands = {
  /** Every proposal of the log, with its index (`grove decisions list`). */
  listDecisions: {
    input: z.object({ worktreeId: z.string().min(1) }),
    output: ListDecisionsResultSchema,
  },
  /** What accepting a proposal would write into its spec (nothing is written). */
  previewAcceptDecision: { input: WorktreeProposalRef, output: AcceptPreviewSchema },
  /**
   * Accepts a proposal (`grove decisions accept`): refused untouched when the proposal or the
   * spec changed since the preview `expected` describes.
   */
  acceptDecision: {
    input: WorktreeProposalRef.extend({ expected: DecisionExpectationSchema }),
    output: DecisionActionResultSchema,
  },
  /**
   * Rejects a proposal (`grove decisions reject`, `reason` optional): refused untouched when it
   * is no longer the proposal `expected` shows.
   */
  rejectDecision: {
    input: WorktreeProposalRef.extend({
      reason: z.string().max(MAX_REJECT_REASON_CHARS).optional(),
      expected: DecisionExpectationSchema,
    }),
    output: DecisionActionResultSchema,
  },
} as const;
