// `grove check --format sarif`: the check's findings as a SARIF 2.1.0 log, so GitHub code scanning
// (and any SARIF viewer) shows spec drift on a pull request. One result per finding: `ruleId` is
// the finding's type (`coverage_gap`, `orphaned_glob`, ...) or, for lint findings, its rule
// (`L004`); `level` comes from its severity; its location is the uncovered or changed file, or the
// spec file at the line of the offending glob, behavior or `$ref` (Grove's `line`). NotarAI has no
// SARIF output; the rule list below describes Grove's finding types for the viewer.
import type { CheckFinding, CheckFindingType, CheckReport } from '../../shared/notarai-check.ts';
import { GROVE_VERSION } from '../platform/version.ts';

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

/**
 * The report as a SARIF 2.1.0 log. `rootUri` (a `file:` URI ending in `/`) tells viewers where
 * `%SRCROOT%` is; GitHub resolves results against the repository either way.
 */
export function checkReportToSarif(report: CheckReport, rootUri?: string): object {
  const ruleIds = [...new Set(report.findings.map((finding) => sarifRuleId(finding.type)))].sort();
  const ruleIndex = new Map(ruleIds.map((id, index) => [id, index]));
  const severityOf = new Map(report.findings.map((f) => [sarifRuleId(f.type), f]));
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
        ...(rootUri ? { originalUriBaseIds: { '%SRCROOT%': { uri: rootUri } } } : {}),
        columnKind: 'unicodeCodePoints',
        results: report.findings.map((finding) => {
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
      },
    ],
  };
}
