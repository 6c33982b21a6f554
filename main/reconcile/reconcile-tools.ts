// The six NotarAI-compatible reconciliation tools, as ToolDefinitions closed over one worktree's
// ReconcileEngine: same names, input schemas and output keys as `notarai mcp`, plus Grove's
// additions (spec_errors, deleted_files, rejected, warnings). Registered next to the file tools
// on every MCP session; the MCP layer adds structuredContent and sorted-key JSON text.
// The definitions are needed before the server listens, the engine only when a tool runs: handlers
// get the engine from `engine()` (loaded on demand by reconcile-service.ts), and this module
// imports its type only.
import { z } from 'zod';
import { SpecErrorSchema } from '../../shared/reconcile.ts';
import { defineTool, readOnlyLocal } from '../tools/tool-definition.ts';
import type { ToolDefinition } from '../tools/tool-definition.ts';
import type { ReconcileEngine } from './reconcile-engine.ts';

/** The worktree's engine, loaded on first use; rejects with a readable error if it cannot load. */
/** Deadline of the tools that scan every governed file (200,000 files cold take seconds, not minutes). */
const RECONCILE_DEADLINE_MS = 120_000;

export type EngineLoader = () => Promise<ReconcileEngine>;

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
const paths = z.array(z.string());
const warnings = z
  .array(z.string())
  .optional()
  .describe('Problems that did not stop the call (a corrupt cache recreated, ...).');

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
    outputSchema: z.object({
      changed_files: paths.describe('Every path changed vs the base, sorted.'),
      affected_specs: z.array(
        z.object({
          spec_path: z.string(),
          // NotarAI's behaviors are mappings (name, given, then...).
          behaviors: z.array(z.record(z.string(), z.unknown())).nullable(),
          constraints: z.array(z.string()).nullable(),
          invariants: z.array(z.string()).nullable(),
        }),
      ),
      spec_errors: z
        .array(SpecErrorSchema)
        .describe('Specs that failed to parse or validate (file, line, message); skipped.'),
      warnings,
    }),
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
            'the diff text; they stay in `files`.',
        ),
      bypass_cache: z
        .boolean()
        .default(false)
        .describe('Ignore the hash cache (without deleting it): every governed file is listed.'),
    }),
    outputSchema: z.object({
      diff: z.string(),
      files: paths,
      skipped: paths,
      excluded: paths.describe('The exclude_patterns applied.'),
      spec_changes: z.array(z.object({ path: z.string(), content: z.string() })),
      system_spec: z
        .object({ path: z.string(), content: z.string().optional() })
        .nullable()
        .describe('null when spec_changes is empty; without content when it is in spec_changes.'),
      binary_changes: paths,
      file_categories: z.record(z.string(), z.string()),
      spec_invalidated: paths,
      deleted_files: paths.describe(
        'Governed paths deleted since the base (their deletion is in diff).',
      ),
      warnings,
    }),
    annotations: readOnlyLocal,
    deadlineMs: RECONCILE_DEADLINE_MS,
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
        .describe('An artifact category of the spec (e.g. "code", "docs", "tests").'),
    }),
    outputSchema: z.object({
      changed_artifacts: paths,
      spec_invalidated: paths,
      warnings,
    }),
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
    outputSchema: z.object({
      updated: z.number().int().describe('Rows written.'),
      rejected: z
        .array(z.object({ path: z.string(), reason: z.string() }))
        .describe('Paths refused, with the reason.'),
      warnings,
    }),
    annotations: { ...readOnlyLocal, readOnlyHint: false },
    deadlineMs: RECONCILE_DEADLINE_MS,
    handler: async (args, ctx) => (await engine()).markReconciled(args.files, ctx.signal),
  });

const clearCacheTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'clear_cache',
    title: 'Clear cache',
    description:
      'Deletes the hash cache (.notarai/.cache/notarai.db): every governed file counts as ' +
      'changed again.',
    inputSchema: z.object({}),
    outputSchema: z.object({ cleared: z.boolean().describe('True if the database existed.') }),
    annotations: { ...readOnlyLocal, readOnlyHint: false, destructiveHint: true },
    handler: async () => (await engine()).clearCache(),
  });

const snapshotStateTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'snapshot_state',
    title: 'Snapshot state',
    description:
      'Writes .notarai/reconciliation_state.json (the cache fingerprints, HEAD and branch) at ' +
      'the end of a reconciliation.',
    inputSchema: z.object({}),
    outputSchema: z.object({
      files: z.number().int(),
      specs: z.number().int(),
      git_hash: z.string(),
      state_path: z.string().describe('Absolute path of the file written.'),
    }),
    annotations: { ...readOnlyLocal, readOnlyHint: false, idempotentHint: false },
    handler: async () => (await engine()).snapshotState(),
  });

/** The six tools, in NotarAI's order. */
export function createReconcileTools(engine: EngineLoader): ToolDefinition[] {
  return [
    listAffectedSpecsTool(engine),
    getSpecDiffTool(engine),
    getChangedArtifactsTool(engine),
    markReconciledTool(engine),
    clearCacheTool(engine),
    snapshotStateTool(engine),
  ];
}
