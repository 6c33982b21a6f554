// The six NotarAI-compatible reconciliation tools, as ToolDefinitions closed over one worktree's
// ReconcileEngine: same names, input schemas and output keys as `notarai mcp`, plus Grove's
// additions (spec_errors, deleted_files, rejected, warnings), each described as a "Grove addition"
// in the tool reference (docs/tools.md; docs/notarai-compatibility.md says why). Registered next
// to the file tools on every MCP session; the MCP layer adds structuredContent and sorted-key JSON
// text.
// The definitions are needed before the server listens, the engine only when a tool runs: handlers
// get the engine from `engine()` (loaded on demand by reconcile-service.ts), and this module
// imports its type only.
import { z } from 'zod';
import {
  ChangedArtifactsResultSchema,
  ClearCacheResultSchema,
  ListAffectedSpecsResultSchema,
  MarkReconciledResultSchema,
  SnapshotStateResultSchema,
  SpecDiffResultSchema,
} from '../../shared/reconcile-results.ts';
import { defineTool, readOnlyLocal } from './tool-definition.ts';
import type { ToolDefinition } from './tool-definition.ts';
import type { EngineLoader } from './engine-loader.ts';
import { createNotaraiCheckTools } from './notarai-check-tools.ts';
import { createDecisionTools } from './decision-tools.ts';

/** The worktree's engine, loaded on first use; rejects with a readable error if it cannot load. */
/** Deadline of the tools that scan every governed file (200,000 files cold take seconds, not minutes). */
const RECONCILE_DEADLINE_MS = 120_000;

const baseBranch = z
  .string()
  .describe(
    'Branch, tag or commit to compare the working tree against (e.g. "main", "origin/main"). ' +
      'Must resolve to a commit; a value starting with "-" is refused.',
  );
const specPath = z
  .string()
  .describe(
    'The spec, relative to the worktree root: a *.spec.yaml file under .notarai/ ' +
      '(e.g. ".notarai/auth.spec.yaml").',
  );
const listAffectedSpecsTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'list_affected_specs',
    title: 'List affected specs',
    description:
      'Lists the files changed between base_branch and the working tree (committed, staged, ' +
      'unstaged, deleted, untracked; both sides of a rename) and the specs under .notarai/ ' +
      'whose artifact globs match any of them, with their behaviors, constraints and ' +
      'invariants. Start a reconciliation here. Broken specs are listed in spec_errors.',
    inputSchema: z.object({ base_branch: baseBranch }),
    outputSchema: ListAffectedSpecsResultSchema,
    annotations: readOnlyLocal,
    deadlineMs: RECONCILE_DEADLINE_MS,
    handler: async (args, ctx) => (await engine()).listAffectedSpecs(args.base_branch, ctx.signal),
  });

const getSpecDiffTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'get_spec_diff',
    title: 'Get spec diff',
    description:
      'The changes to review for one spec: its governed files whose content differs from the ' +
      'hash cache (`files`; all of them when the cache is cold) and the unified diff vs ' +
      'base_branch of those that differ from the base (binary files listed in binary_changes ' +
      'instead). Files unchanged since mark_reconciled are `skipped`, or `spec_invalidated` when ' +
      'the spec itself changed since. Changed spec files come whole in spec_changes, with the ' +
      'system spec for context.',
    inputSchema: z.object({
      spec_path: specPath,
      base_branch: baseBranch,
      exclude_patterns: z
        .array(z.string())
        .optional()
        .describe(
          'Globs (same syntax as artifact globs, see docs/globs.md) whose files are left out of ' +
            'the diff text; they stay in `files`. A pattern without "/" matches a file name at ' +
            'any depth, as in .gitignore ("*.lock" drops "web/yarn.lock"); one with "/" is ' +
            'anchored at the worktree root ("docs/**").',
        ),
      bypass_cache: z
        .boolean()
        .default(false)
        .describe('Ignore the hash cache (without deleting it): every governed file is listed.'),
      with_snapshot: z
        .boolean()
        .default(false)
        .describe(
          'Grove addition: also count the committed snapshot (.notarai/reconciliation_state.json) ' +
            "as reconciled for files this machine's hash cache has no row for (Grove's rule, as " +
            "the Grove window counts); default false: NotarAI's rule, the hash cache alone.",
        ),
      review: z
        .boolean()
        .default(false)
        .describe(
          "Grove addition: add `review`, each listed file's status vs the base, the files " +
            'never reconciled and the other specs governing each file.',
        ),
    }),
    outputSchema: SpecDiffResultSchema,
    annotations: readOnlyLocal,
    deadlineMs: RECONCILE_DEADLINE_MS,
    whenAnswerTooBig:
      'leave the biggest changed files out of the diff text with exclude_patterns (they stay ' +
      'listed in `files`) and read them with read_file, or run `git diff <base_branch> -- <file>`',
    handler: async (args, ctx) => (await engine()).getSpecDiff(args, ctx.signal),
  });

const getChangedArtifactsTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'get_changed_artifacts',
    title: 'Get changed artifacts',
    description:
      "A spec's governed files (of one artifact category if artifact_type is given) whose " +
      'content differs from the hash cache, without asking git. spec_invalidated lists the ' +
      'unchanged ones when the spec itself changed since it was reconciled.',
    inputSchema: z.object({
      spec_path: specPath,
      artifact_type: z
        .string()
        .optional()
        .describe(
          'An artifact category of the spec (e.g. "code", "docs", "tests"). A category the ' +
            'spec does not declare gives empty lists, as in NotarAI (with a warning).',
        ),
    }),
    outputSchema: ChangedArtifactsResultSchema,
    annotations: readOnlyLocal,
    deadlineMs: RECONCILE_DEADLINE_MS,
    handler: async (args, ctx) => (await engine()).getChangedArtifacts(args, ctx.signal),
  });

const markReconciledTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'mark_reconciled',
    title: 'Mark reconciled',
    description:
      'Records the current content (BLAKE3) of files you have reviewed in the hash cache, so ' +
      'later get_spec_diff calls skip them until they change. Include the spec files you read. ' +
      'Missing files are skipped; paths outside the worktree and directories are rejected.',
    inputSchema: z.object({
      files: z.array(z.string()).describe('Paths relative to the worktree root.'),
    }),
    outputSchema: MarkReconciledResultSchema,
    annotations: { ...readOnlyLocal, readOnlyHint: false },
    deadlineMs: RECONCILE_DEADLINE_MS,
    handler: async (args, ctx) => (await engine()).markReconciled(args.files, ctx.signal),
  });

const clearCacheTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'clear_cache',
    title: 'Clear cache',
    description:
      "Deletes the hash cache (.notarai/.cache/notarai.db, and Grove's stat file grove-stats.db " +
      'beside it): every governed file counts as changed again.',
    inputSchema: z.object({}),
    outputSchema: ClearCacheResultSchema,
    annotations: { ...readOnlyLocal, readOnlyHint: false, destructiveHint: true },
    handler: async () => (await engine()).clearCache(),
  });

const snapshotStateTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'snapshot_state',
    title: 'Snapshot state',
    description:
      "Writes .notarai/reconciliation_state.json as NotarAI's CLI does (the cache fingerprints, " +
      "HEAD, the branch or null when detached, and cli_version: Grove's version) at the end of " +
      "a reconciliation. Without arguments it is NotarAI's tool: the file holds this machine's " +
      'cache only, so on a fresh clone (empty cache) it replaces the committed fingerprints. ' +
      'Grove additions: keep_committed keeps them, dry_run only says what would be written.',
    inputSchema: z.object({
      keep_committed: z
        .boolean()
        .optional()
        .describe(
          'Grove addition: also keep the fingerprints the existing state file holds for files ' +
            "the cache has no row for (the cache's rows win). Default false: NotarAI's behaviour.",
        ),
      dry_run: z
        .boolean()
        .optional()
        .describe(
          'Grove addition: write nothing (nor create the cache); answer with the counts the ' +
            'file would hold and how many fingerprints the existing one holds.',
        ),
    }),
    outputSchema: SnapshotStateResultSchema,
    annotations: { ...readOnlyLocal, readOnlyHint: false, idempotentHint: false },
    handler: async (args) =>
      (await engine()).snapshotState({
        ...(args.keep_committed !== undefined ? { keepCommitted: args.keep_committed } : {}),
        ...(args.dry_run !== undefined ? { dryRun: args.dry_run } : {}),
      }),
  });

/**
 * The six tools, in NotarAI's order, then NotarAI 0.7's check, score and export-context
 * (notarai-check-tools.ts), then its decision proposals (decision-tools.ts).
 */
export function createReconcileTools(engine: EngineLoader): ToolDefinition[] {
  return [
    listAffectedSpecsTool(engine),
    getSpecDiffTool(engine),
    getChangedArtifactsTool(engine),
    markReconciledTool(engine),
    clearCacheTool(engine),
    snapshotStateTool(engine),
    ...createNotaraiCheckTools(engine),
    ...createDecisionTools(),
  ];
}
