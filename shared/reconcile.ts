// The reconciliation state of one worktree as the UI sees it: per spec, what it governs, what
// changed since it was last reconciled, whether the branch's changes (vs the chosen base) affect
// it; totals; specs that failed to load. Computed by the worktree process (main/reconcile/),
// pushed to the host as a `reconcile-state` message, validated with these schemas on arrival.
// No Node, DOM or Electron imports: this file is part of the contract.
import { z } from 'zod';
import { DecisionsSummarySchema } from './decisions.ts';
import { DriftStatusSchema, LiveCheckSchema, LiveDriftSchema } from './notarai-check.ts';

/** How many paths a per-spec list carries at most (counts are always exact). */
export const RECONCILE_PATHS_CAP = 50;

/** A spec file that could not be loaded or validated. */
export const SpecErrorSchema = z.object({
  /** POSIX path relative to the worktree root, e.g. `.notarai/auth.spec.yaml`. */
  file: z.string(),
  /** 1-based line of the problem, when known. */
  line: z.number().int().positive().nullable(),
  message: z.string(),
});
export type SpecError = z.infer<typeof SpecErrorSchema>;

/** One valid spec's reconciliation state. */
export const SpecReconcileStateSchema = z.object({
  /** POSIX path relative to the worktree root. */
  path: z.string(),
  /** First line of `intent`, shortened: a title for lists. */
  title: z.string(),
  intent: z.string(),
  /** The spec's behaviors (empty for registered/derived specs that have none). */
  behaviors: z.array(z.object({ name: z.string(), given: z.string(), then: z.string() })),
  constraints: z.array(z.string()),
  invariants: z.array(z.string()),
  /** Paths (relative to the worktree root) of the specs this one lists under `subsystems`. */
  subsystems: z.array(z.string()),
  /** `full` unless the spec says `registered` or `derived`. */
  tier: z.enum(['full', 'registered', 'derived']),
  isSystemSpec: z.boolean(),
  /** Files on disk the spec's artifact globs match (spec files included). */
  governedFiles: z.number().int().nonnegative(),
  /** Governed files whose content differs from the hash cache (never reconciled or edited since). */
  changedSinceReconciled: z.number().int().nonnegative(),
  /** The first RECONCILE_PATHS_CAP of them, sorted. */
  changedSinceReconciledPaths: z.array(z.string()),
  /**
   * One line on why it drifted, e.g. "2 files changed since the committed snapshot: Cargo.toml,
   * README.md; spec edited"; null when nothing changed since reconciled.
   */
  driftReason: z.string().nullable().optional(),
  /** True when the spec file itself (or a spec it governs) changed since it was reconciled. */
  specInvalidated: z.boolean(),
  /** Some file changed vs the base matches the spec's globs. */
  affected: z.boolean(),
  /** Number of changed-vs-base paths the spec governs (deleted paths included). */
  affectedFiles: z.number().int().nonnegative(),
  /** The first RECONCILE_PATHS_CAP of them, sorted. */
  affectedPaths: z.array(z.string()),
  /**
   * Unix ms the spec itself was last marked reconciled (its file's row in the hash cache, or the
   * committed snapshot's fingerprint of it); null if never.
   */
  lastReconciledAt: z.number().nullable(),
  /** Where lastReconciledAt comes from: this machine's hash cache or the committed snapshot. */
  reconciledBy: z.enum(['cache', 'snapshot']).nullable(),
  /** NotarAI 0.7's drift score of this spec (`score`); absent until the first check ran. */
  drift: z.object({ score: z.number(), status: DriftStatusSchema }).nullable().optional(),
});
export type SpecReconcileState = z.infer<typeof SpecReconcileStateSchema>;

export const ReconcileTotalsSchema = z.object({
  specs: z.number().int().nonnegative(),
  invalidSpecs: z.number().int().nonnegative(),
  affectedSpecs: z.number().int().nonnegative(),
  /** Specs with at least one governed file changed since reconciled. */
  specsNeedingReconciliation: z.number().int().nonnegative(),
  /** Distinct files governed by at least one spec. */
  governedFiles: z.number().int().nonnegative(),
  /** Distinct governed files changed since reconciled. */
  changedSinceReconciled: z.number().int().nonnegative(),
  /** All paths changed vs the base (governed or not). */
  changedVsBase: z.number().int().nonnegative(),
});
export type ReconcileTotals = z.infer<typeof ReconcileTotalsSchema>;

export const ReconcileStateSchema = z.object({
  /** The base branch (or ref) the `affected` figures compare against. */
  base: z.string(),
  /** Why the base could not be used (it does not resolve, ...); `affected` is then all false. */
  baseError: z.string().nullable(),
  /** Unix ms when this state was computed. */
  computedAt: z.number(),
  /** How long computing it took, in ms. */
  durationMs: z.number().nonnegative(),
  /** Path of the system spec, if any. */
  systemSpec: z.string().nullable(),
  /**
   * The committed snapshot (`.notarai/reconciliation_state.json`) the state also reads: what it
   * fingerprinted counts as reconciled where the hash cache has no row. Null when there is none.
   */
  snapshot: z
    .object({
      at: z.number().nullable(),
      gitHash: z.string().nullable(),
      branch: z.string().nullable(),
    })
    .nullable(),
  specs: z.array(SpecReconcileStateSchema),
  totals: ReconcileTotalsSchema,
  specErrors: z.array(SpecErrorSchema),
  /** Problems that did not stop the computation (a corrupt cache recreated, ...). */
  warnings: z.array(z.string()),
  /** NotarAI 0.7's `check` of the worktree (summary, first findings, coverage by folder). */
  check: LiveCheckSchema.nullable().optional(),
  /** NotarAI 0.7's `score`: the overall drift score and each spec's. */
  drift: LiveDriftSchema.nullable().optional(),
  /** NotarAI 0.7's decision proposals (.notarai/decision-log.json): counts, per spec. */
  decisions: DecisionsSummarySchema.nullable().optional(),
});
export type ReconcileState = z.infer<typeof ReconcileStateSchema>;
