// NotarAI 0.7's decision proposals, defined once: the entries of `.notarai/decision-log.json` (as
// NotarAI's `DecisionProposal` reads and writes them), what the `list_decisions` and
// `propose_decision` tools return (main/tools/decision-tools.ts), and what the window will show.
// Keys are NotarAI's (snake_case); Grove's additions say so in their descriptions, which
// docs/tools.md is generated from. The log is read and written by main/reconcile/decisions.ts.
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
