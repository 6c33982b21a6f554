// The result of each NotarAI-compatible reconciliation tool, defined once: the engine's return
// types are inferred from these schemas (main/reconcile/), the MCP server advertises them as the
// tools' output schemas and validates every result against them (main/tools/reconcile-tools.ts),
// and the window parses the results it gets with them (renderer/src/reconcile/reconcile-calls.ts).
// Keys are NotarAI's (snake_case); Grove's additions say so in their descriptions, which
// docs/tools.md is generated from.
import { z } from 'zod';
import { SpecErrorSchema } from './reconcile.ts';

const paths = z.array(z.string());
const warnings = z
  .array(z.string())
  .optional()
  .describe(
    'Grove addition: problems that did not stop the call (a deprecated schema_version, a corrupt ' +
      'cache recreated, ...). Absent when there are none.',
  );

/** What `list_affected_specs` returns. */
export const ListAffectedSpecsResultSchema = z.object({
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
    .describe(
      'Grove addition: specs that failed to parse or validate (file, line, message), left ' +
        'out of affected_specs (NotarAI fails the whole call when a spec does not parse).',
    ),
  warnings,
});
export type ListAffectedSpecsResult = z.infer<typeof ListAffectedSpecsResultSchema>;

/** A listed file's status vs the base (`unchanged`: same as the base, changed since reconciled). */
export const FileReviewStatusSchema = z.enum([
  'added',
  'modified',
  'deleted',
  'renamed',
  'untracked',
  'unchanged',
]);
export type FileReviewStatus = z.infer<typeof FileReviewStatusSchema>;

/** get_spec_diff's `review` (Grove addition, with `review: true`). */
export const SpecReviewSchema = z.object({
  status: z
    .record(z.string(), FileReviewStatusSchema)
    .describe(
      'Each path of `files`, of spec_changes and of deleted_files (but those renamed away: ' +
        'see renamed_from) -> its status vs the base ' +
        '(git diff --name-status -M, untracked files apart); "unchanged": the same as the ' +
        'base, changed since it was reconciled.',
    ),
  renamed_from: z.record(z.string(), z.string()).describe('Renamed paths -> their base path.'),
  never_reconciled: paths.describe(
    'Paths of `files` and spec_changes with no reconciled fingerprint at all (nothing to ' +
      'compare their content with).',
  ),
  other_specs: z
    .record(z.string(), z.array(z.string()))
    .describe(
      'Paths of `files` and spec_changes -> the other specs that also govern them (marking ' +
        'the file reconciles it for those too); paths no other spec governs are absent.',
    ),
});
export type SpecReview = z.infer<typeof SpecReviewSchema>;

/** What `get_spec_diff` returns. */
export const SpecDiffResultSchema = z.object({
  diff: z
    .string()
    .describe(
      'Unified diff vs base_branch of the files in `files` that differ from it, as git ' +
        'prints it but without its final newline (as NotarAI returns it), minus ' +
        'exclude_patterns and binary files. Grove addition: the new-file hunks of untracked ' +
        "files and the deletion of each path in deleted_files, which NotarAI's git diff " +
        'cannot show.',
    ),
  files: paths.describe(
    'Governed files (spec files aside) present on disk whose content differs from the hash ' +
      'cache; all of them when the cache is cold or bypassed.',
  ),
  skipped: paths,
  excluded: paths.describe('The exclude_patterns applied.'),
  spec_changes: z.array(z.object({ path: z.string(), content: z.string() })),
  system_spec: z
    .object({ path: z.string(), content: z.string().optional() })
    .nullable()
    .describe('null when spec_changes is empty; without content when it is in spec_changes.'),
  binary_changes: paths.describe(
    'Files of `files` with a binary extension (png, pdf, zip, ...), and files whose content ' +
      'is binary among those diffed; none of them is in diff.',
  ),
  file_categories: z
    .record(z.string(), z.string())
    .describe(
      'Each path of `files` -> the first artifact category (in UTF-8 byte order) whose ' +
        'globs match it.',
    ),
  spec_invalidated: paths,
  deleted_files: paths.describe(
    'Grove addition: governed paths present in the base but gone from the working tree ' +
      '(deleted, or renamed away); never in `files`; their deletion is in diff.',
  ),
  review: SpecReviewSchema.optional().describe(
    'Grove addition (with review: true): what a review of the files needs beyond the diff.',
  ),
  warnings,
});
export type SpecDiffResult = z.infer<typeof SpecDiffResultSchema>;

/** What `get_changed_artifacts` returns. */
export const ChangedArtifactsResultSchema = z.object({
  changed_artifacts: paths,
  spec_invalidated: paths,
  warnings,
});
export type ChangedArtifactsResult = z.infer<typeof ChangedArtifactsResultSchema>;

/** What `mark_reconciled` returns. */
export const MarkReconciledResultSchema = z.object({
  updated: z.number().int().describe('Rows written.'),
  rejected: z
    .array(z.object({ path: z.string(), reason: z.string() }))
    .describe(
      'Grove addition: paths refused (outside the worktree, directories, special files), ' +
        'with the reason; NotarAI stores whatever path it is given.',
    ),
  mark_id: z
    .string()
    .optional()
    .describe(
      "Grove addition: names this mark. The Grove window's Undo restores exactly the cache " +
        "rows it replaced (only a worktree's last mark, while its server runs); it is no tool.",
    ),
  warnings,
});
export type MarkReconciledResult = z.infer<typeof MarkReconciledResultSchema>;

/** What the window's Undo of a mark (HostApi undoMark, no tool) did. */
export const UndoMarkResultSchema = z.object({
  /** Cache rows put back as they were before the mark. */
  restored: z.number().int().nonnegative(),
  /** Rows the mark had added (no row before it), deleted. */
  deleted: z.number().int().nonnegative(),
});
export type UndoMarkResult = z.infer<typeof UndoMarkResultSchema>;

/** What `clear_cache` returns. */
export const ClearCacheResultSchema = z.object({
  cleared: z.boolean().describe('True if the database existed.'),
});
export type ClearCacheResult = z.infer<typeof ClearCacheResultSchema>;

/** What `snapshot_state` returns. */
export const SnapshotStateResultSchema = z.object({
  files: z.number().int(),
  specs: z.number().int(),
  git_hash: z
    .string()
    .describe('HEAD\'s sha, or "" when HEAD names no commit yet (null in the file).'),
  state_path: z.string().describe('Absolute path of the file written.'),
  written: z
    .boolean()
    .optional()
    .describe('Grove addition (with keep_committed or dry_run): false for a dry run.'),
  cache_fingerprints: z
    .number()
    .int()
    .optional()
    .describe("Grove addition (with keep_committed or dry_run): rows of this machine's cache."),
  committed_fingerprints: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe(
      'Grove addition (with keep_committed or dry_run): fingerprints the state file held ' +
        'before (null: there was none, or it could not be read).',
    ),
  kept_committed: z
    .number()
    .int()
    .optional()
    .describe(
      "Grove addition (with keep_committed or dry_run): the state file's fingerprints kept " +
        'because the cache has no row for their file (0 without keep_committed).',
    ),
  cli_version: z
    .string()
    .optional()
    .describe(
      "Grove addition (with keep_committed or dry_run): the cli_version written: Grove's, or " +
        'the one the file held when it is higher (a snapshot never lowers it).',
    ),
  change: z
    .object({
      fields: z.array(
        z.object({
          field: z.string(),
          before: z.string().nullable(),
          after: z.string().nullable(),
        }),
      ),
      added: z.number().int(),
      changed: z.number().int(),
      removed: z.number().int(),
      sample: z.array(
        z.object({ path: z.string(), change: z.enum(['added', 'changed', 'removed']) }),
      ),
    })
    .optional()
    .describe(
      'Grove addition (with keep_committed or dry_run): what the write changes in the file: ' +
        'the fields whose value changes, fingerprints added, changed and removed, and the first ' +
        '20 of those in path order.',
    ),
});
export type SnapshotStateResult = z.infer<typeof SnapshotStateResultSchema>;
