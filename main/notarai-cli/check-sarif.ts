// `grove check --format sarif`: the check's findings as a SARIF 2.1.0 log, so GitHub code scanning
// (and any SARIF viewer) shows spec drift on a pull request. One result per finding: `ruleId` is
// the finding's type (`coverage_gap`, `orphaned_glob`, ...) or, for lint findings, its rule
// (`L004`); `level` comes from its severity; its location is the uncovered or changed file, or the
// spec file at the line of the offending glob, behavior or `$ref` (Grove's `line`). NotarAI has no
// SARIF output; the rule list below describes Grove's finding types for the viewer.
//
// Within GitHub's upload limits (docs.github.com, "SARIF support for code scanning" and "SARIF
// results exceed one or more limits"): at most 25,000 results per run and 10 MB per file once
// gzip-compressed, or the upload is rejected whole. A bigger report is cut, as GitHub itself keeps
// the results it displays, by severity: errors first, then warnings, each by tier (critical,
// drift, housekeeping), then in the report's order; what is left out is counted in the run's
// `properties` and in a warning notification of its invocation (sarifText).
import { gzipSync } from 'node:zlib';
import type { CheckFinding, CheckFindingType, CheckReport } from '../../shared/notarai-check.ts';
import { GROVE_VERSION } from '../platform/version.ts';

/** GitHub code scanning's limits on one SARIF upload. */
export const SARIF_LIMITS = {
  /** Results per run (more: the file is rejected). */
  results: 25_000,
  /** Bytes of the file once gzip-compressed (10 MB; counted as 10,000,000 to stay clear). */
  gzipBytes: 10_000_000,
};

const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';
const INFORMATION_URI = 'https://github.com/davidroeca/NotarAI';

/** What each rule means, in the words a reviewer reads beside a result. */
const RULE_TEXT: Record<string, string> = {
  spec_invalid: 'A spec file does not parse or does not validate against the NotarAI schema.',
  coverage_gap: 'A project file that no spec governs.',
  orphaned_glob: "A spec's artifact glob that matches no file.",
  changed_since_reconciliation: 'A governed file changed since it was last reconciled.',
  overlapping_coverage: 'A file governed by more than one spec.',
  circular_ref: 'A cycle of $ref links between specs.',
  ref_outside_worktree: 'A $ref that leaves the worktree (never opened).',
  behavior_incomplete: 'A behavior without a given or a then.',
  test_coverage_missing: 'A behavior of a full-tier spec with no tested_by (T001).',
  test_path_missing: 'A tested_by path that does not exist (T002).',
  L001: 'A full-tier spec with no behaviors.',
  L004: 'A $ref whose target does not exist.',
  L006: 'A decision without a rationale, older than the configured age.',
  L007: 'The spec has open questions.',
  L008: 'An artifact glob that is exactly **/*.',
  L009: 'The spec has an outdated schema_version.',
  L010: 'Two behaviors share a name.',
  L011: 'A cross_cutting spec is referenced from subsystems.',
};

/** The SARIF rule id of a finding: its lint rule (`L004`) or its type. */
export function sarifRuleId(type: CheckFindingType): string {
  return type.startsWith('lint_') ? type.slice('lint_'.length).toUpperCase() : type;
}

/** A worktree-relative POSIX path as a URI reference (each segment percent-encoded). */
function relativeUri(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

function location(finding: CheckFinding): object[] {
  // The file the finding is about, when it is a project file; else the spec, at its line.
  const onFile = finding.file_path !== null && finding.type !== 'test_path_missing';
  const path = onFile ? finding.file_path : (finding.spec_path ?? finding.file_path);
  if (path === null) return [];
  const line = !onFile && finding.line !== null ? { region: { startLine: finding.line } } : {};
  return [
    {
      physicalLocation: {
        artifactLocation: { uri: relativeUri(path), uriBaseId: '%SRCROOT%' },
        ...line,
      },
    },
  ];
}

/** What was left out of a cut log. */
export interface SarifCut {
  /** Findings in the report. */
  total: number;
  /** Findings left out. */
  omitted: number;
}

const TIER_RANK: Record<CheckFinding['tier'], number> = { critical: 0, drift: 1, housekeeping: 2 };

/**
 * The indexes of the report's findings, most severe first: errors, then warnings, each by tier,
 * then in the report's order (the order GitHub keeps results in when it displays fewer).
 */
export function severityOrder(findings: readonly CheckFinding[]): number[] {
  const rank = (finding: CheckFinding) =>
    (finding.severity === 'error' ? 0 : 3) + TIER_RANK[finding.tier];
  return findings
    .map((_, index) => index)
    .sort((a, b) => rank(findings[a]!) - rank(findings[b]!) || a - b);
}

/**
 * The report as a SARIF 2.1.0 log. `rootUri` (a `file:` URI ending in `/`) tells viewers where
 * `%SRCROOT%` is; GitHub resolves results against the repository either way. `keep`: the indexes
 * of the findings to write (in the report's order), all by default; `cut` says what was left out.
 */
export function checkReportToSarif(
  report: CheckReport,
  rootUri?: string,
  { keep, cut }: { keep?: ReadonlySet<number>; cut?: SarifCut } = {},
): object {
  const ruleIds = [...new Set(report.findings.map((finding) => sarifRuleId(finding.type)))].sort();
  const ruleIndex = new Map(ruleIds.map((id, index) => [id, index]));
  const severityOf = new Map(report.findings.map((f) => [sarifRuleId(f.type), f]));
  const findings = keep ? report.findings.filter((_, index) => keep.has(index)) : report.findings;
  const note = cut && cut.omitted > 0 ? cutNote(cut) : undefined;
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'Grove',
            version: GROVE_VERSION,
            informationUri: INFORMATION_URI,
            rules: ruleIds.map((id) => ({
              id,
              name: id,
              shortDescription: { text: RULE_TEXT[id] ?? id },
              defaultConfiguration: {
                level: severityOf.get(id)?.severity === 'error' ? 'error' : 'warning',
              },
              properties: { tier: severityOf.get(id)?.tier },
            })),
          },
        },
        ...(note
          ? {
              invocations: [
                {
                  executionSuccessful: true,
                  toolExecutionNotifications: [
                    {
                      level: 'warning',
                      descriptor: { id: 'results-cut' },
                      message: { text: note },
                    },
                  ],
                },
              ],
            }
          : {}),
        ...(rootUri ? { originalUriBaseIds: { '%SRCROOT%': { uri: rootUri } } } : {}),
        columnKind: 'unicodeCodePoints',
        results: findings.map((finding) => {
          const ruleId = sarifRuleId(finding.type);
          return {
            ruleId,
            ruleIndex: ruleIndex.get(ruleId),
            level: finding.severity === 'error' ? 'error' : 'warning',
            message: { text: finding.message },
            locations: location(finding),
            // NotarAI's keys of the finding, for tools that read SARIF properties.
            properties: Object.fromEntries(
              Object.entries({
                tier: finding.tier,
                spec_path: finding.spec_path,
                file_path: finding.file_path,
                glob_pattern: finding.glob_pattern,
              }).filter(([, value]) => value !== null),
            ),
          };
        }),
        ...(cut && cut.omitted > 0
          ? { properties: { totalResults: cut.total, omittedResults: cut.omitted } }
          : {}),
      },
    ],
  };
}

/** The notification of a cut log (and the CLI's warning). */
export function cutNote(cut: SarifCut): string {
  return (
    `${cut.omitted} of ${cut.total} results left out: GitHub code scanning rejects a run of more ` +
    `than ${SARIF_LIMITS.results} results or a file over 10 MB gzip-compressed; the most severe ` +
    'were kept (errors, then warnings, each by tier: critical, drift, housekeeping). ' +
    '`grove check --format json` lists them all.'
  );
}

/** Characters of a result besides its message and paths (pretty-printed keys, rule, level). */
const RESULT_OVERHEAD = 600;
/** How many times the compressed limit the text may come to before it is gzipped to be sure. */
const RAW_FACTOR = 10;

const serialize = (log: object) => `${JSON.stringify(log, null, 2)}\n`;

/**
 * The SARIF file `grove check --format sarif` writes: the whole log when it is within
 * `limits`, else the most severe findings that fit (severityOrder), the rest counted. The size is
 * checked on the text itself: what fits uncompressed fits compressed; otherwise it is gzipped,
 * and the number kept scaled down until it fits.
 */
export function sarifText(
  report: CheckReport,
  rootUri?: string,
  limits: typeof SARIF_LIMITS = SARIF_LIMITS,
): { text: string; cut: SarifCut } {
  const total = report.findings.length;
  const order = severityOrder(report.findings);
  // Before any text is built, as many as an estimate of their size allows (UTF-16 units, each
  // path written thrice): RAW_FACTOR times the compressed limit, about what JSON compresses to.
  let kept = 0;
  let estimate = 0;
  for (const index of order.slice(0, limits.results)) {
    const finding = report.findings[index]!;
    estimate +=
      RESULT_OVERHEAD +
      finding.message.length +
      3 *
        ((finding.file_path?.length ?? 0) +
          (finding.spec_path?.length ?? 0) +
          (finding.glob_pattern?.length ?? 0));
    if (estimate > limits.gzipBytes * RAW_FACTOR) break;
    kept++;
  }
  for (;;) {
    const cut = { total, omitted: total - kept };
    const text = serialize(
      checkReportToSarif(
        report,
        rootUri,
        kept === total ? {} : { keep: new Set(order.slice(0, kept)), cut },
      ),
    );
    // gzip adds at most ~0.03% and 18 bytes to incompressible text.
    const bytes = Buffer.byteLength(text);
    if (bytes + 1024 <= limits.gzipBytes * 0.99) return { text, cut };
    const compressed = gzipSync(text).length;
    if (compressed <= limits.gzipBytes || kept === 0) return { text, cut };
    kept = Math.floor((kept * limits.gzipBytes * 0.9) / compressed);
  }
}
