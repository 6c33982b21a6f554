// NotarAI 0.7's `check`, `score` and `export-context`, as Grove serves them: the serialisable
// results and their zod schemas, defined once. The engine (main/reconcile/notarai07/notarai-check.ts and the
// modules beside it) returns these types, the MCP tools `check_specs`, `get_drift_score` and
// `export_context` advertise them as output schemas (main/tools/notarai-check-tools.ts), the CLI
// (`grove check|score|export-context`) prints them, and the window reads the summary, the coverage
// tree and the drift scores from the reconcile-state (shared/reconcile.ts).
// Keys are NotarAI's (snake_case); Grove's additions say so in their descriptions. The contract:
// ../shared/notarai-07.md (team folder); the differences on purpose: docs/notarai-compatibility.md.
// No Node, DOM or Electron imports: this file is part of the contract.
//
// Engine API (main/reconcile/notarai07/notarai-check.ts; plain functions of a worktree root, no host):
//   runCheck(root, { strict? })                  -> CheckReport   (NotarAI `check --format json`)
//   scoreSpecs(root, { specPath? })              -> DriftReport   (NotarAI `score --format json`)
//   exportContext(root, { baseBranch, specPath? }) -> ExportContextResult (NotarAI `export-context`)
//   renderContextMarkdown(contexts)              -> string        (NotarAI's reconcile prompt)
//   checkExitCode(report)                        -> 0 | 1         (2, no .notarai/, is the CLI's)
import { z } from 'zod';
import { CHECK_FINDING_TYPES, CHECK_TIERS, type LINT_RULES } from './notarai-check-constants.ts';

export {
  CHECK_FINDING_TYPES,
  CHECK_TIERS,
  COVERAGE_FOLDERS_CAP,
  CHECK_FINDINGS_CAP,
  LINT_RULES,
} from './notarai-check-constants.ts';

export const CheckTierSchema = z.enum(CHECK_TIERS);
export type CheckTier = z.infer<typeof CheckTierSchema>;

export const CheckSeveritySchema = z.enum(['error', 'warning']);
export type CheckSeverity = z.infer<typeof CheckSeveritySchema>;

export type LintRule = (typeof LINT_RULES)[number];

export const CheckFindingTypeSchema = z.enum(CHECK_FINDING_TYPES);
export type CheckFindingType = z.infer<typeof CheckFindingTypeSchema>;

const nullableString = z.union([z.string(), z.literal(null)]);

/** One finding of `check`: NotarAI's seven keys plus Grove's `line`. */
export const CheckFindingSchema = z.object({
  type: CheckFindingTypeSchema.describe(
    "NotarAI's finding type (lint findings are lint_l00x). Grove additions: spec_invalid (a " +
      'spec that does not parse or validate; NotarAI fails the whole command) and ' +
      'ref_outside_worktree (a $ref leaving the worktree; its target is never opened).',
  ),
  tier: CheckTierSchema,
  severity: CheckSeveritySchema,
  message: z.string(),
  // anyOf [string, null], not zod's `.nullable()` (type: ["string", "null"], which strict
  // clients such as Gemini reject; main/tools/tool-definition.ts orNull says the same).
  spec_path: nullableString,
  file_path: nullableString,
  glob_pattern: nullableString,
  line: z
    .number()
    .int()
    .positive()
    .nullable()
    .describe(
      'Grove addition: 1-based line in spec_path of what the finding is about (the glob, the ' +
        'behavior, the $ref, the decision), when it has one.',
    ),
});
export type CheckFinding = z.infer<typeof CheckFindingSchema>;

export const CheckSummarySchema = z.object({
  errors: z.number().int().nonnegative(),
  warnings: z.number().int().nonnegative(),
});
export type CheckSummary = z.infer<typeof CheckSummarySchema>;

/** What `check_specs` returns (and `grove check --format json` prints). */
export const CheckReportSchema = z.object({
  findings: z
    .array(CheckFindingSchema)
    .describe(
      "In NotarAI's group order (spec_invalid first, then coverage gaps, orphaned globs, changed, " +
        'overlaps, cycles, incomplete behaviors, T001/T002, lint by rule), UTF-8 byte order ' +
        'inside each group; after check.yaml warn_on and --strict are applied.',
    ),
  summary: CheckSummarySchema,
  passed: z
    .boolean()
    .describe('Grove addition: the verdict (exit code 0): fail_on, else no error; strict: none.'),
  exit_code: z
    .union([z.literal(0), z.literal(1)])
    .describe('Grove addition: the exit code `notarai check` would give (0 passed, 1 failing).'),
  warnings: z
    .array(z.string())
    .describe(
      'Grove addition: problems that did not stop the check (check.yaml, lint.yaml or ' +
        'decision-log.json unreadable or invalid: defaults used).',
    ),
});
export type CheckReport = z.infer<typeof CheckReportSchema>;

export const DriftStatusSchema = z.enum(['healthy', 'review', 'overdue']);
export type DriftStatus = z.infer<typeof DriftStatusSchema>;

/** Each term of the formula, as a ratio in [0, 1] before its weight (Grove addition). */
export const DriftTermsSchema = z.object({
  files_changed: z.number(),
  days_since_reconciliation: z.number(),
  unresolved_decisions: z.number(),
  orphaned_globs: z.number(),
  open_questions: z.number(),
  unspecced_files: z.number(),
});
export type DriftTerms = z.infer<typeof DriftTermsSchema>;

export const SpecDriftScoreSchema = z.object({
  spec_path: z.string(),
  score: z.number().describe('Rounded to 2 decimals.'),
  status: DriftStatusSchema,
  terms: DriftTermsSchema.describe(
    'Grove addition: each ratio of the formula (weights from .notarai/scoring.yaml).',
  ),
});
export type SpecDriftScore = z.infer<typeof SpecDriftScoreSchema>;

/**
 * A spec that score or export-context left out because it cannot be read: its YAML does not
 * parse, its artifact globs do not compile, or the file cannot be opened (check reports the same
 * as a `spec_invalid` finding). NotarAI stops the whole command at the first such spec.
 */
export const UnreadableSpecSchema = z.object({
  spec_path: z.string(),
  line: z.number().int().positive().nullable().describe('1-based, when known.'),
  message: z.string(),
});
export type UnreadableSpec = z.infer<typeof UnreadableSpecSchema>;

/** What `get_drift_score` returns (and `grove score --format json` prints, terms aside). */
export const DriftReportSchema = z.object({
  overall: z.object({ score: z.number(), status: DriftStatusSchema }),
  specs: z.array(SpecDriftScoreSchema).describe('Highest score first, then path (UTF-8 bytes).'),
  weights: DriftTermsSchema.optional().describe(
    "Grove addition: each term's weight, from .notarai/scoring.yaml (NotarAI's defaults where " +
      "it sets none); a spec's score is the sum of weight x term, at most 1.",
  ),
  days_since_reconciliation: z
    .number()
    .describe(
      'Grove addition: the days used, from last_reconciliation.timestamp of ' +
        '.notarai/reconciliation_state.json (30 when there is none).',
    ),
  warnings: z.array(z.string()).describe('Grove addition: configs unreadable or invalid.'),
  unreadable_specs: z
    .array(UnreadableSpecSchema)
    .describe(
      'Grove addition: specs that cannot be read (YAML, artifact globs), one entry per error; ' +
        'they are not scored.',
    ),
});
export type DriftReport = z.infer<typeof DriftReportSchema>;

/** One spec's context from `export-context`. */
export const ExportContextSchema = z.object({
  spec_path: z.string(),
  spec_name: z.string().describe('The file stem, e.g. "auth.spec".'),
  spec_content: z.string(),
  base_branch: z.string(),
  changed_files: z.array(z.string()),
  binary_changes: z.array(z.string()),
  diff: z.string(),
  file_categories: z.record(z.string(), z.string()),
});
export type ExportContext = z.infer<typeof ExportContextSchema>;

/** What `export_context` returns: always a list in the tool; `markdown` when asked for. */
export const ExportContextResultSchema = z.object({
  contexts: z.array(ExportContextSchema),
  markdown: z
    .string()
    .optional()
    .describe(
      'With format: "markdown": NotarAI\'s reconcile-prompt text of every context. A name ' +
        'holding a control character (or beginning with ") is C-quoted as git quotes paths ' +
        '("src/a\\nb"); a name holding backticks gets a longer code span.',
    ),
  unreadable_specs: z
    .array(UnreadableSpecSchema)
    .describe(
      'Grove addition: specs that cannot be read (YAML, artifact globs), one entry per error; ' +
        'left out, so whether the changes touch them is unknown.',
    ),
});
export type ExportContextResult = z.infer<typeof ExportContextResultSchema>;

/** How much of one folder the specs govern (files below it, at any depth). */
export const CoverageFolderSchema = z.object({
  /** POSIX path relative to the worktree root; '' is the root. */
  path: z.string(),
  files: z.number().int().nonnegative(),
  governed: z.number().int().nonnegative(),
});
export type CoverageFolder = z.infer<typeof CoverageFolderSchema>;

/** The live check the worktree process reports with each reconcile-state. */
export const LiveCheckSchema = z.object({
  errors: z.number().int().nonnegative(),
  warnings: z.number().int().nonnegative(),
  passed: z.boolean(),
  /** The first CHECK_FINDINGS_CAP findings (the summary counts all). */
  findings: z.array(CheckFindingSchema),
  /** Folders holding project files (outside .notarai/ and .git/), by path, UTF-8 bytes. */
  coverage: z.object({
    files: z.number().int().nonnegative(),
    governed: z.number().int().nonnegative(),
    folders: z.array(CoverageFolderSchema),
    /** True when folders were cut at COVERAGE_FOLDERS_CAP (shallowest kept). */
    truncated: z.boolean(),
  }),
  /**
   * Governed files changed since reconciled, by the window's one rule: this machine's hash cache,
   * and for files it has no row for, the committed snapshot (the Reconciliation tab's count).
   */
  changedSinceReconciled: z.number().int().nonnegative().optional(),
  /**
   * What `grove check` (NotarAI's rule: the hash cache alone) counts here; null when this machine
   * has no hash cache (it then reports no changed file).
   */
  changedByCacheAlone: z.number().int().nonnegative().nullable().optional(),
});
export type LiveCheck = z.infer<typeof LiveCheckSchema>;

export const LiveDriftSchema = z.object({
  score: z.number(),
  status: DriftStatusSchema,
  specs: z.array(z.object({ spec_path: z.string(), score: z.number(), status: DriftStatusSchema })),
});
export type LiveDrift = z.infer<typeof LiveDriftSchema>;
