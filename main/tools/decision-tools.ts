// NotarAI 0.7's decision proposals as tools of every worktree server: `list_decisions` (read-only:
// what awaits a person) and `propose_decision` (appends one proposal to .notarai/decision-log.json,
// the only file it writes, through the confined layer, bounded and validated), so an agent with
// read-only access to the code can still propose what a spec should record. Accepting and
// rejecting stay human actions (`grove decisions`, the window): no tool does them. The work is
// main/reconcile/notarai07/decisions.ts, loaded on the first call; result schemas: shared/decisions.ts.
import { z } from 'zod';
import { ListDecisionsResultSchema, ProposeDecisionResultSchema } from '../../shared/decisions.ts';
import { defineTool, readOnlyLocal } from './tool-definition.ts';
import type { ToolDefinition } from './tool-definition.ts';

/** The core, loaded with the first call (the definitions are needed before the server listens). */
const decisions = () => import('../reconcile/notarai07/decisions.ts');

const specPath = z
  .string()
  .describe(
    'The spec, relative to the worktree root: a *.spec.yaml file under .notarai/ ' +
      '(e.g. ".notarai/auth.spec.yaml").',
  );

const listDecisionsTool: ToolDefinition = defineTool({
  name: 'list_decisions',
  title: 'List decisions',
  description:
    "The decision proposals in .notarai/decision-log.json (NotarAI 0.7's `notarai decisions " +
    'list`): each with its index (its position in the log), spec, date, choice, rationale, ' +
    'origin, status and related files. Status "proposed" awaits a person, who accepts it (the ' +
    "decision goes into the spec's decisions:) or rejects it with `grove decisions` or in " +
    "Grove's window; tools cannot. A log that cannot be read is an error naming the problem.",
  inputSchema: z.object({
    status: z
      .string()
      .optional()
      .describe('Only proposals with this status: "proposed", "accepted" or "rejected".'),
    spec_path: specPath.optional().describe('Only the proposals of this spec.'),
  }),
  outputSchema: ListDecisionsResultSchema,
  annotations: readOnlyLocal,
  handler: async (args, ctx) =>
    (await decisions()).listDecisions(ctx.root, {
      status: args.status,
      specPath: args.spec_path,
    }),
});

const proposeDecisionTool: ToolDefinition = defineTool({
  name: 'propose_decision',
  title: 'Propose decision',
  description:
    'Proposes a decision for a spec: appends it, status "proposed", to ' +
    '.notarai/decision-log.json (the only file written) for a person to accept or reject — ' +
    "NotarAI 0.7's reconciliation records design choices the code made this way. Use it when " +
    'the code took a decision the spec does not record. The spec must exist; the choice is one ' +
    'line; the log must be readable and stays under 1 MiB.',
  inputSchema: z.object({
    spec_path: specPath,
    choice: z.string().describe('What was decided, in one line (at most 500 characters).'),
    rationale: z
      .string()
      .describe('Why, as a person reviewing it needs to read it (line breaks kept; 20,000 max).'),
    related_files: z
      .array(z.string())
      .optional()
      .describe('Files the decision concerns, relative to the worktree root (at most 200).'),
    origin: z
      .string()
      .optional()
      .describe('Who proposes it (default "reconciliation"; NotarAI also uses "human").'),
    date: z.string().optional().describe('YYYY-MM-DD (default: today).'),
  }),
  outputSchema: ProposeDecisionResultSchema,
  annotations: { ...readOnlyLocal, readOnlyHint: false, idempotentHint: false },
  handler: async (args, ctx) => (await decisions()).proposeDecision(ctx.root, args),
});

/** The two tools, after NotarAI 0.7's check, score and export-context. */
export function createDecisionTools(): ToolDefinition[] {
  return [listDecisionsTool, proposeDecisionTool];
}
