// NotarAI 0.7's CLI-only commands as read-only MCP tools of every worktree server: `check_specs`
// (`notarai check`), `get_drift_score` (`notarai score`) and `export_context`
// (`notarai export-context`), closed over the worktree's ReconcileEngine like the six
// reconciliation tools (reconcile-tools.ts): NotarAI's keys, Grove's additions described as such
// in the output schemas (shared/notarai-check.ts), which docs/tools.md is generated from.
// This module imports the engine's type only; the engine loads on the first call.
import { z } from 'zod';
import {
  CheckReportSchema,
  DriftReportSchema,
  ExportContextResultSchema,
} from '../../shared/notarai-check.ts';
import type { EngineLoader } from './engine-loader.ts';
import { defineTool, readOnlyLocal } from './tool-definition.ts';
import type { ToolDefinition } from './tool-definition.ts';

/** Cold on 200,000 files takes seconds; never minutes. */
const CHECK_DEADLINE_MS = 120_000;

const specPath = z
  .string()
  .describe(
    'The spec, relative to the worktree root: a *.spec.yaml file under .notarai/ ' +
      '(e.g. ".notarai/auth.spec.yaml").',
  );

/**
 * Grove's rule for "changed since reconciled", opt-in: NotarAI's (the default) counts only what
 * this machine's hash cache marked; with it, files the cache has no row for are judged by the
 * committed snapshot (`.notarai/reconciliation_state.json`), so a fresh clone sees the team's
 * reconciled state. The window uses it (docs/notarai-compatibility.md).
 */
const withSnapshotArgument = z
  .boolean()
  .default(false)
  .describe(
    'Also count the committed snapshot (.notarai/reconciliation_state.json) as reconciled for ' +
      "files this machine's hash cache has no row for (Grove's rule, as the Grove window " +
      "counts); default false: NotarAI's rule, the hash cache alone.",
  );

const checkSpecsTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'check_specs',
    title: 'Check specs',
    description:
      "NotarAI's deterministic drift check (`notarai check`), no LLM: files no spec governs " +
      "(tracked and untracked, minus the system spec's exclude), artifact globs matching " +
      'nothing, governed files changed since reconciliation, files governed by several specs, ' +
      '$ref cycles and $refs leaving the worktree, incomplete or untested behaviors, missing ' +
      'test paths, lint rules L001-L011; in tiers critical / drift / housekeeping, filtered and ' +
      'judged by .notarai/check.yaml and lint.yaml. `passed` is the CI verdict.',
    inputSchema: z.object({
      strict: z
        .boolean()
        .default(false)
        .describe('Every warning becomes an error, and any finding fails (as `--strict`).'),
      with_snapshot: withSnapshotArgument,
    }),
    outputSchema: CheckReportSchema,
    annotations: readOnlyLocal,
    deadlineMs: CHECK_DEADLINE_MS,
    handler: async (args, ctx) =>
      (await engine()).check({ strict: args.strict, withSnapshot: args.with_snapshot }, ctx.signal),
  });

const getDriftScoreTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'get_drift_score',
    title: 'Get drift score',
    description:
      "NotarAI's drift score per spec (`notarai score`): 0 to 1 from files changed since " +
      'reconciliation, days since the last reconciliation, proposed decisions, orphaned globs, ' +
      'open questions and unspecced files beside governed ones (weights in ' +
      '.notarai/scoring.yaml); healthy below 0.3, review below 0.6, else overdue. Highest first.',
    inputSchema: z.object({ spec_path: specPath.optional(), with_snapshot: withSnapshotArgument }),
    outputSchema: DriftReportSchema,
    annotations: readOnlyLocal,
    deadlineMs: CHECK_DEADLINE_MS,
    handler: async (args, ctx) =>
      (await engine()).driftScore(
        {
          withSnapshot: args.with_snapshot,
          ...(args.spec_path === undefined ? {} : { specPath: args.spec_path }),
        },
        ctx.signal,
      ),
  });

const exportContextTool = (engine: EngineLoader): ToolDefinition =>
  defineTool({
    name: 'export_context',
    title: 'Export context',
    description:
      "NotarAI's reconciliation context (`notarai export-context`): for every spec whose " +
      'artifact globs match a file changed vs base_branch (or the one spec_path), its text, the ' +
      'governed files changed (binary ones apart), their diff and categories. ' +
      'format "markdown" adds NotarAI\'s reconcile-prompt text, as its reconcile skill reads it.',
    inputSchema: z.object({
      base_branch: z
        .string()
        .describe('Branch, tag or commit to compare the working tree against (e.g. "main").'),
      spec_path: specPath.optional(),
      format: z
        .enum(['json', 'markdown'])
        .default('json')
        .describe('"markdown" also returns the reconcile-prompt text in `markdown`.'),
    }),
    outputSchema: ExportContextResultSchema,
    annotations: readOnlyLocal,
    deadlineMs: CHECK_DEADLINE_MS,
    whenAnswerTooBig:
      'name one spec with spec_path, or use get_spec_diff with exclude_patterns to leave the ' +
      'biggest changed files out and read them with read_file',
    handler: async (args, ctx) => {
      const loaded = await engine();
      const exported = await loaded.exportContext(
        {
          baseBranch: args.base_branch,
          ...(args.spec_path === undefined ? {} : { specPath: args.spec_path }),
        },
        ctx.signal,
      );
      if (args.format !== 'markdown') return exported;
      return { ...exported, markdown: loaded.renderContextMarkdown(exported.contexts) };
    },
  });

/** The three tools, after the six reconciliation tools. */
export function createNotaraiCheckTools(engine: EngineLoader): ToolDefinition[] {
  return [checkSpecsTool(engine), getDriftScoreTool(engine), exportContextTool(engine)];
}
