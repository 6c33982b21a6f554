// NotarAI 0.7's `check` for one worktree, and the live summary the window shows (with the
// scores of notarai-score.ts; both start from notarai-inputs.ts).
// Public API (types and schemas: shared/notarai-check.ts; stable, used by the CLI and the window):
//
//   runCheck(root, { strict? })       -> CheckReport   `notarai check --format json`, + line/passed
//   scoreSpecs(root, { specPath? })   -> DriftReport   `notarai score --format json`, + terms
//                                                     (notarai-score.ts)
//   checkExitCode(report)             -> 0 | 1
//   exportContext / renderContextMarkdown: notarai-export.ts
//
// Each is a plain function of a worktree root (no host, no server, no watcher): it opens the hash
// cache and the file jobs for the call and closes them. A running worktree process calls the
// `...WithParts` forms through ReconcileEngine instead, with the live index (live-index.ts): while
// nothing moved since the last scan, git's listing, the specs, the governed sets and the content
// hashes come from memory, so a warm check costs a cookie sync and in-memory matching.
//
// The same as NotarAI: finding types, tiers, severities, messages, check.yaml / lint.yaml /
// scoring.yaml, the score formula. Different on purpose (docs/notarai-compatibility.md): the one
// glob matcher (docs/globs.md) on git's files (tracked + untracked not ignored, so a new file is a
// coverage gap before it is committed); UTF-8 byte order; a spec whose YAML does not parse is a
// `spec_invalid` finding and the others are checked; a `$ref` leaving the worktree (`../..`, an
// absolute path, a symlink) is a `ref_outside_worktree` finding and its target is never opened;
// score's days come from `last_reconciliation.timestamp`, which NotarAI writes.
import type {
  CheckFinding,
  CheckFindingType,
  CheckReport,
  CheckTier,
  LiveCheck,
  LiveDrift,
} from '../../../shared/notarai-check.ts';
import { CHECK_FINDINGS_CAP, CHECK_TIERS } from '../../../shared/notarai-check-constants.ts';
import { statInsideRoot } from '../../platform/confined-fs.ts';
import { compareUtf8 } from '../../platform/path-order.ts';
import {
  filterInSlices,
  forEachInSlices,
  nextSlice,
  sliceDue,
} from '../../platform/time-slices.ts';
import { type EngineParts } from '../floor/classify.ts';
import { loadCheckConfig, loadLintConfig } from './notarai-configs.ts';
import { incompleteBehaviors, refCycles, runLint } from './notarai-lint.ts';
import { lineOf, type CheckSpec } from './notarai-specs.ts';
import {
  gatherInputs,
  isInternal,
  withCacheWarnings,
  withStandalone,
  type NotaraiInputs,
} from './notarai-inputs.ts';
import { scoreSpecsWithParts } from './notarai-score.ts';
import { coverageByFolder } from './notarai-coverage.ts';

/** Specs an overlapping_coverage message names at most (the rest are counted in it). */
export const MAX_OVERLAP_NAMES = 20;

/** Order of the groups (NotarAI's), findings sorted by UTF-8 bytes inside each. */
const GROUP: Record<CheckFindingType, number> = {
  spec_invalid: 0,
  coverage_gap: 1,
  orphaned_glob: 2,
  changed_since_reconciliation: 3,
  overlapping_coverage: 4,
  circular_ref: 5,
  ref_outside_worktree: 6,
  behavior_incomplete: 7,
  test_coverage_missing: 8,
  test_path_missing: 8,
  lint_l001: 9,
  lint_l004: 10,
  lint_l006: 11,
  lint_l007: 12,
  lint_l008: 13,
  lint_l009: 14,
  lint_l010: 15,
  lint_l011: 16,
};

const LINT_TIER: Partial<Record<string, CheckTier>> = {
  L001: 'drift',
  L004: 'critical',
  L006: 'housekeeping',
  L007: 'housekeeping',
  L008: 'housekeeping',
  L009: 'critical',
  L010: 'drift',
  L011: 'critical',
};

/** Whether a path inside the worktree exists: true, false, or 'outside' (a symlink out). */
async function lookUp(root: string, relative: string): Promise<boolean | 'outside'> {
  try {
    await statInsideRoot(root, relative);
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return message.includes('outside the worktree') ? 'outside' : false;
  }
}

function finding(
  type: CheckFindingType,
  tier: CheckTier,
  severity: 'error' | 'warning',
  message: string,
  where: { spec?: string; file?: string; glob?: string; line?: number | null },
): CheckFinding {
  return {
    type,
    tier,
    severity,
    message,
    spec_path: where.spec ?? null,
    file_path: where.file ?? null,
    glob_pattern: where.glob ?? null,
    line: where.line ?? null,
  };
}

/** coverage_gap: every listed file no spec governs (internal and excluded files left out). */
function coverageGaps(
  parts: EngineParts,
  inputs: NotaraiInputs,
  signal: AbortSignal | undefined,
): Promise<CheckFinding[]> {
  const isGap = (file: string) =>
    !isInternal(file) && !inputs.governedAll.has(file) && !inputs.exclude.test(file);
  const gap = (file: string) =>
    finding('coverage_gap', 'housekeeping', 'warning', `File not governed by any spec: ${file}`, {
      file,
    });
  const compute = async () => {
    const gaps: CheckFinding[] = [];
    await forEachInSlices(
      inputs.listing.present,
      (file) => isGap(file) && gaps.push(gap(file)),
      signal,
    );
    return gaps;
  };
  if (!parts.memo) return compute();
  // A file added or removed changes its own finding only.
  return parts.memo.keepAlongListing(
    parts,
    'coverage-gaps',
    [inputs.governedAll],
    inputs.listing,
    inputs.generation,
    compute,
    async (gaps, added, removed) => {
      const gone = new Set(removed);
      const next =
        gone.size === 0
          ? gaps.slice()
          : await filterInSlices(gaps, (item) => !gone.has(item.file_path as string), signal);
      for (const file of added) if (isGap(file)) next.push(gap(file));
      return next;
    },
  );
}

/** overlapping_coverage: each file's first MAX_OVERLAP_NAMES specs, and how many in all. */
function overlaps(
  parts: EngineParts,
  inputs: NotaraiInputs,
  parsed: readonly CheckSpec[],
  signal: AbortSignal | undefined,
): Promise<CheckFinding[]> {
  // (The governed sets alone: the same governedAll, the same layout, whatever else was listed.)
  const compute = async (): Promise<CheckFinding[]> => {
    // A file's one spec as its path; an object only once a second spec governs it (most files
    // have one: no object and array for each of 20,000 files).
    const owners = new Map<string, string | { names: string[]; count: number }>();
    for (const spec of parsed) {
      await forEachInSlices(
        inputs.governed.get(spec.path) ?? [],
        (file) => {
          const entry = owners.get(file);
          if (entry === undefined) owners.set(file, spec.path);
          else if (typeof entry === 'string')
            owners.set(file, { names: [entry, spec.path], count: 2 });
          else if (entry.count++ < MAX_OVERLAP_NAMES) entry.names.push(spec.path);
        },
        signal,
      );
    }
    const found: CheckFinding[] = [];
    for (const [file, entry] of owners) {
      if (typeof entry === 'string') continue;
      const { names, count } = entry;
      const more = count > names.length ? `, and ${count - names.length} more` : '';
      found.push(
        finding(
          'overlapping_coverage',
          'housekeeping',
          'warning',
          `File governed by multiple specs: ${file} (${names.join(', ')}${more})`,
          { file },
        ),
      );
    }
    return found;
  };
  return parts.memo ? parts.memo.keep('overlaps', [inputs.governedAll], compute) : compute();
}

/** Every finding of check, before check.yaml and --strict. */
export async function collectFindings(
  parts: EngineParts,
  inputs: NotaraiInputs,
  warnings: string[],
  signal?: AbortSignal,
): Promise<CheckFinding[]> {
  const { specs } = inputs;
  const findings: CheckFinding[] = [];
  const parsed = specs.filter((spec) => spec.errors.length === 0);
  for (const spec of specs) {
    for (const error of spec.errors) {
      findings.push(
        finding(
          'spec_invalid',
          'critical',
          'error',
          `Spec does not parse: ${error.message} (in ${spec.path})`,
          { spec: spec.path, line: error.line },
        ),
      );
    }
    for (const error of spec.schemaErrors) {
      warnings.push(`${error.file}${error.line ? `:${error.line}` : ''}: ${error.message}`);
    }
  }
  // coverage_gap (kept with the inputs' layout: it moves with the listing and the specs only)
  for (const gap of await coverageGaps(parts, inputs, signal)) findings.push(gap);
  // orphaned_glob
  for (const spec of parsed) {
    for (const glob of inputs.orphaned.get(spec.path) ?? []) {
      findings.push(
        finding(
          'orphaned_glob',
          'critical',
          'error',
          `Artifact glob matches no files: ${glob.pattern} (in ${spec.path})`,
          {
            spec: spec.path,
            glob: glob.pattern,
            line: lineOf(spec, ['artifacts', glob.category, glob.index, 'path']),
          },
        ),
      );
    }
  }
  // changed_since_reconciliation
  for (const file of inputs.changed ?? []) {
    findings.push(
      finding(
        'changed_since_reconciliation',
        'drift',
        'warning',
        `File changed since last reconciliation: ${file}`,
        { file },
      ),
    );
  }
  // overlapping_coverage (kept with the layout, as coverage_gap)
  for (const overlap of await overlaps(parts, inputs, parsed, signal)) findings.push(overlap);
  // circular_ref
  const { cycles, dropped } = await refCycles(parsed, signal);
  for (const cycle of cycles) {
    findings.push(
      finding(
        'circular_ref',
        'critical',
        'error',
        `Circular $ref chain: ${cycle.path.join(' -> ')}`,
        { spec: cycle.path[0] as string, line: cycle.line },
      ),
    );
  }
  if (dropped > 0) warnings.push(`${dropped} more $ref cycles not reported`);
  // ref_outside_worktree, and the lookups L004 needs (a known spec exists without a lookup)
  // A spec that loaded exists (the loader read it confined); any other target is looked up.
  const known = new Set(parsed.map((spec) => spec.path));
  const refExists = new Map<string, boolean>();
  for (const spec of parsed) {
    for (const ref of spec.refs) {
      let outside = ref.outside;
      if (!outside && !known.has(ref.resolved) && !refExists.has(ref.resolved)) {
        const found = await lookUp(parts.root, ref.resolved);
        if (found === 'outside') outside = true;
        else refExists.set(ref.resolved, found);
      }
      if (outside) {
        findings.push(
          finding(
            'ref_outside_worktree',
            'critical',
            'error',
            `$ref leaves the worktree: ${ref.ref} (in ${spec.path}); its target is not read`,
            { spec: spec.path, line: lineOf(spec, [ref.field, ref.index, '$ref']) },
          ),
        );
      }
      if (sliceDue()) await nextSlice(signal);
    }
  }
  // behavior_incomplete
  const incomplete = incompleteBehaviors(parsed);
  for (const item of incomplete) {
    findings.push(
      finding(
        'behavior_incomplete',
        'housekeeping',
        'warning',
        `Behavior '${item.name}' missing '${item.field}' field (in ${item.spec.path})`,
        { spec: item.spec.path, line: lineOf(item.spec, ['behaviors', item.index]) },
      ),
    );
  }
  // T001 / T002
  for (const spec of parsed) {
    if ((spec.value['tier'] ?? 'full') !== 'full' || spec.value['cross_cutting'] === true) continue;
    const code = (spec.value['artifacts'] as Record<string, unknown> | undefined)?.['code'];
    const hasCode = Array.isArray(code) && code.length > 0;
    const behaviors = spec.value['behaviors'];
    if (!Array.isArray(behaviors)) continue;
    for (const [index, behavior] of behaviors.entries()) {
      if (sliceDue()) await nextSlice(signal);
      const entry = (behavior ?? {}) as Record<string, unknown>;
      const name = typeof entry['name'] === 'string' ? entry['name'] : '<unnamed>';
      const testedBy = entry['tested_by'];
      if (!Array.isArray(testedBy)) {
        if (hasCode) {
          findings.push(
            finding(
              'test_coverage_missing',
              'housekeeping',
              'warning',
              `T001: Behavior '${name}' has no tested_by entry`,
              { spec: spec.path, line: lineOf(spec, ['behaviors', index]) },
            ),
          );
        }
        continue;
      }
      for (const [testIndex, test] of testedBy.entries()) {
        const testPath = (test as { path?: unknown } | null)?.path;
        if (typeof testPath !== 'string') continue;
        const outside =
          testPath.startsWith('/') ||
          /^[A-Za-z]:/.test(testPath) ||
          testPath.split(/[\\/]/).includes('..');
        if (!outside && (await lookUp(parts.root, testPath)) === true) continue;
        findings.push(
          finding(
            'test_path_missing',
            'critical',
            'error',
            `T002: Test path does not exist: ${testPath} (behavior '${name}' in ${spec.path})` +
              (outside ? '; it is outside the worktree and was not looked up' : ''),
            {
              spec: spec.path,
              file: testPath,
              line: lineOf(spec, ['behaviors', index, 'tested_by', testIndex, 'path']),
            },
          ),
        );
      }
    }
  }
  // lint, minus L002, L003, L005 (behavior_incomplete and circular_ref say the same)
  const lintConfig = await loadLintConfig(parts.root, warnings);
  for (const lint of runLint({
    specs: parsed,
    config: lintConfig,
    refExists,
    cycles,
    incomplete,
    now: parts.now(),
  })) {
    const tier = LINT_TIER[lint.rule];
    if (!tier) continue;
    findings.push(
      finding(
        `lint_${lint.rule.toLowerCase()}` as CheckFindingType,
        tier,
        lint.severity === 'error' ? 'error' : 'warning',
        lint.message,
        { spec: lint.spec_path, line: lint.line },
      ),
    );
  }
  return findings;
}

const nullable = (a: string | null, b: string | null) =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : compareUtf8(a, b);

/** NotarAI's group order, UTF-8 bytes inside (spec, file, glob, line, message). */
export function sortFindings(findings: CheckFinding[]): CheckFinding[] {
  return findings.sort(
    (a, b) =>
      GROUP[a.type] - GROUP[b.type] ||
      nullable(a.spec_path, b.spec_path) ||
      nullable(a.file_path, b.file_path) ||
      nullable(a.glob_pattern, b.glob_pattern) ||
      (a.line ?? 0) - (b.line ?? 0) ||
      compareUtf8(a.message, b.message),
  );
}

const tierRank = (tier: CheckTier) => CHECK_TIERS.indexOf(tier);

/** Applies check.yaml and --strict, counts, and gives the verdict (NotarAI's rules). */
export function checkReport(
  all: CheckFinding[],
  config: { warnOn: CheckTier; failOn: CheckTier | null },
  strict: boolean,
  warnings: string[],
): CheckReport {
  const findings = sortFindings(
    all
      .filter((item) => tierRank(item.tier) <= tierRank(config.warnOn))
      .map((item) =>
        strict && item.severity === 'warning' ? { ...item, severity: 'error' as const } : item,
      ),
  );
  const errors = findings.filter((item) => item.severity === 'error').length;
  const failing = strict
    ? findings.length > 0
    : config.failOn !== null
      ? findings.some((item) => tierRank(item.tier) <= tierRank(config.failOn as CheckTier))
      : errors > 0;
  return {
    findings,
    summary: { errors, warnings: findings.length - errors },
    passed: !failing,
    exit_code: failing ? 1 : 0,
    warnings,
  };
}

/** The exit code of `check` for a report (2, no `.notarai/`, is decided before any check). */
export function checkExitCode(report: CheckReport): 0 | 1 {
  return report.exit_code;
}

/**
 * `withSnapshot`: Grove's rule for "changed since reconciled" instead of NotarAI's (the hash
 * cache, and the committed snapshot for files it has no row for; `--with-snapshot`).
 */
export interface CheckOptions {
  strict?: boolean;
  withSnapshot?: boolean;
}

/** `check` with an engine's parts (the worktree process, with its live index). */
export async function runCheckWithParts(
  parts: EngineParts,
  options: CheckOptions & { signal?: AbortSignal; inputs?: NotaraiInputs } = {},
): Promise<CheckReport> {
  const warnings: string[] = [];
  const inputs =
    options.inputs ??
    (await gatherInputs(parts, {
      sync: true,
      withSnapshot: options.withSnapshot ?? false,
      ...(options.signal ? { signal: options.signal } : {}),
    }));
  const config = await loadCheckConfig(parts.root, warnings);
  const all = await collectFindings(parts, inputs, warnings, options.signal);
  return checkReport(all, config, options.strict ?? false, warnings);
}

/** The check summary, first findings, coverage and drift scores the reconcile-state carries. */
export async function liveCheckWithParts(
  parts: EngineParts,
  signal?: AbortSignal,
): Promise<{ check: LiveCheck; drift: LiveDrift }> {
  // The window's one truth: Grove's rule, as the Reconciliation tab counts (issue 34).
  const inputs = await gatherInputs(parts, { withSnapshot: true, ...(signal ? { signal } : {}) });
  const report = await runCheckWithParts(parts, { inputs, ...(signal ? { signal } : {}) });
  const drift = await scoreSpecsWithParts(parts, { inputs, ...(signal ? { signal } : {}) });
  return {
    check: {
      errors: report.summary.errors,
      warnings: report.summary.warnings,
      passed: report.passed,
      findings: report.findings.slice(0, CHECK_FINDINGS_CAP),
      coverage: await coverageByFolder(inputs, signal, parts),
      changedSinceReconciled: inputs.changed?.size ?? 0,
      changedByCacheAlone: inputs.changedByCacheAlone,
    },
    drift: {
      score: drift.overall.score,
      status: drift.overall.status,
      specs: drift.specs.map(({ spec_path, score, status: word }) => ({
        spec_path,
        score,
        status: word,
      })),
    },
  };
}

/** NotarAI's `check` for the worktree at `root` (see the header). */
export function runCheck(root: string, options: CheckOptions = {}): Promise<CheckReport> {
  return withStandalone(root, async (parts) =>
    withCacheWarnings(parts, await runCheckWithParts(parts, options)),
  );
}
