// The constants of NotarAI 0.7's check (shared/notarai-check.ts re-exports them with the schemas
// built from them), in a module of their own without zod: the engine and `grove check` need these
// values, not the MCP output schemas, whose construction cost the CLI's start ~10 ms.
// No Node, DOM or Electron imports: this file is part of the contract.

/** NotarAI's tiers, most severe first (`warn_on` / `fail_on` compare in this order). */
export const CHECK_TIERS = ['critical', 'drift', 'housekeeping'] as const;

/** The lint rules NotarAI 0.7 knows. */
export const LINT_RULES = [
  'L001',
  'L002',
  'L003',
  'L004',
  'L005',
  'L006',
  'L007',
  'L008',
  'L009',
  'L010',
  'L011',
] as const;

/**
 * Finding types, in NotarAI's group order (check prints groups in this order; Grove sorts inside
 * each group by UTF-8 bytes). `spec_invalid` and `ref_outside_worktree` are Grove's.
 */
export const CHECK_FINDING_TYPES = [
  'spec_invalid',
  'coverage_gap',
  'orphaned_glob',
  'changed_since_reconciliation',
  'overlapping_coverage',
  'circular_ref',
  'ref_outside_worktree',
  'behavior_incomplete',
  'test_coverage_missing',
  'test_path_missing',
  'lint_l001',
  'lint_l004',
  'lint_l006',
  'lint_l007',
  'lint_l008',
  'lint_l009',
  'lint_l010',
  'lint_l011',
] as const;

/** How many folders and findings the reconcile-state carries at most (counts stay exact). */
export const COVERAGE_FOLDERS_CAP = 2000;
export const CHECK_FINDINGS_CAP = 500;
