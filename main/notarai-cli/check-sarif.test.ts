// `grove check --format sarif` within GitHub code scanning's upload limits (25,000 results per run,
// 10 MB gzip-compressed per file): a real repository with more uncovered files than a run may
// hold, checked by the real command in this process, and a synthetic report of incompressible
// names cut to a small byte limit; every log validated against the SARIF 2.1.0 schema.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckFinding, CheckReport } from '../../shared/notarai-check.ts';
import { makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';
import { SARIF_LIMITS, sarifText, severityOrder } from './check-sarif.ts';
import { runNotaraiCommand, type CommandOutput } from './notarai-commands.ts';

interface SarifLog {
  runs: {
    results: { ruleId: string; level: string; properties: { file_path?: string } }[];
    properties?: { totalResults: number; omittedResults: number };
    invocations?: {
      executionSuccessful: boolean;
      toolExecutionNotifications: { level: string; message: { text: string } }[];
    }[];
  }[];
}

async function sarifValidator() {
  const require = createRequire(import.meta.url);
  const schemaPath = require.resolve('schemastore/schemas/json/sarif-2.1.0.json');
  const schema = JSON.parse(await readFile(schemaPath, 'utf8')) as object;
  // unicodeRegExp off: the published schema's `language` pattern has a stray `]` (see
  // notarai-commands.test.ts).
  const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats.default(ajv);
  return ajv.compile(schema);
}

const repos: TempRepo[] = [];
afterAll(async () => {
  await Promise.all(repos.map((repo) => repo.cleanup()));
});

describe('grove check --format sarif: within GitHub code scanning upload limits', () => {
  it('a repository with more findings than a run may hold: the most severe 25,000, the rest counted', async () => {
    // 25,010 uncovered files (warnings, housekeeping, listed first in the report), then a glob
    // that matches nothing and a spec that does not parse (errors, listed after most of them).
    const repo = await makeTempRepo({
      '.notarai/app.spec.yaml':
        "schema_version: '0.8'\nintent: App\ntier: registered\n" +
        'artifacts:\n  code:\n    - path: src/**\n    - path: gone/**\n',
      '.notarai/broken.spec.yaml': 'intent: [unclosed\n',
      'src/a.ts': 'a\n',
    });
    repos.push(repo);
    const uncovered = 25_010;
    const names = Array.from(
      { length: uncovered },
      (_, i) => `u/${Math.floor(i / 1000)}/f${i}.txt`,
    );
    for (let dir = 0; dir * 1000 < uncovered; dir++) {
      await mkdir(path.join(repo.root, 'u', String(dir)), { recursive: true });
    }
    for (let i = 0; i < names.length; i += 500) {
      await Promise.all(
        names.slice(i, i + 500).map((name) => writeFile(path.join(repo.root, name), 'x\n')),
      );
    }
    let stdout = '';
    let stderr = '';
    const out: CommandOutput = {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      colours: false,
    };
    const json = await runJson(repo.root);
    const code = await runNotaraiCommand('check', ['--format', 'sarif', repo.root], out);
    expect(code).toBe(json.code);
    expect(code).toBe(1);
    const total = json.findings.length;
    expect(total).toBeGreaterThan(SARIF_LIMITS.results);
    const gapFiles = json.findings.filter((f) => f.type === 'coverage_gap').map((f) => f.file_path);
    expect(gapFiles.filter((file) => file?.startsWith('u/'))).toHaveLength(uncovered);

    const log = JSON.parse(stdout) as SarifLog;
    const validate = await sarifValidator();
    expect(validate(log), JSON.stringify(validate.errors?.slice(0, 5), null, 2)).toBe(true);
    const [run] = log.runs;
    expect(run!.results).toHaveLength(SARIF_LIMITS.results);
    // Every error kept, the warnings after them up to the limit.
    const errors = json.findings.filter((f) => f.severity === 'error');
    expect(errors.map((f) => f.type).sort()).toEqual(['orphaned_glob', 'spec_invalid']);
    expect(
      run!.results
        .filter((r) => r.level === 'error')
        .map((r) => r.ruleId)
        .sort(),
    ).toEqual(['orphaned_glob', 'spec_invalid']);
    const omitted = total - SARIF_LIMITS.results;
    expect(run!.properties).toEqual({ totalResults: total, omittedResults: omitted });
    const note = run!.invocations?.[0]?.toolExecutionNotifications[0];
    expect(note?.level).toBe('warning');
    expect(note?.message.text).toMatch(new RegExp(`^${omitted} of ${total} results left out`));
    expect(stderr).toContain(`warning: ${omitted} of ${total} results left out`);
    // The gaps kept are the report's first ones (its order), the last ones left out.
    const keptGaps = run!.results
      .filter((r) => r.ruleId === 'coverage_gap')
      .map((r) => r.properties.file_path);
    const gaps = json.findings.filter((f) => f.type === 'coverage_gap').map((f) => f.file_path);
    expect(keptGaps).toEqual(gaps.slice(0, keptGaps.length));
    expect(gzipSync(stdout).length).toBeLessThanOrEqual(SARIF_LIMITS.gzipBytes);
  }, 300_000);

  it('a log over the byte limit keeps the most severe results that fit once gzip-compressed', async () => {
    // Incompressible names (random hex), so that gzip cannot bring the text under the limit.
    const finding = (index: number, severity: CheckFinding['severity']): CheckFinding => ({
      type: severity === 'error' ? 'orphaned_glob' : 'coverage_gap',
      tier: severity === 'error' ? 'drift' : 'housekeeping',
      severity,
      message: `finding ${index}`,
      spec_path: severity === 'error' ? '.notarai/a.spec.yaml' : null,
      file_path: severity === 'error' ? null : `f/${randomBytes(400).toString('hex')}`,
      glob_pattern: severity === 'error' ? `g/${randomBytes(400).toString('hex')}` : null,
      line: severity === 'error' ? 5 : null,
    });
    const findings = Array.from({ length: 3_000 }, (_, i) =>
      finding(i, i % 10 === 9 ? 'error' : 'warning'),
    );
    const report: CheckReport = {
      findings,
      summary: { errors: 300, warnings: 2_700 },
      passed: false,
      exit_code: 1,
      warnings: [],
    };
    const limits = { results: SARIF_LIMITS.results, gzipBytes: 500_000 };
    const { text, cut } = sarifText(report, undefined, limits);
    const compressed = gzipSync(text).length;
    expect(compressed).toBeLessThanOrEqual(limits.gzipBytes);
    const log = JSON.parse(text) as SarifLog;
    const validate = await sarifValidator();
    expect(validate(log), JSON.stringify(validate.errors?.slice(0, 5), null, 2)).toBe(true);
    const results = log.runs[0]!.results;
    // Cut: each result is ~1.9 KB of hex, gzip ~1 KB: about 500 fit, not all 3,000.
    expect(cut.total).toBe(3_000);
    expect(cut.omitted).toBe(3_000 - results.length);
    expect(results.length).toBeGreaterThan(100);
    expect(results.length).toBeLessThan(3_000);
    // The 300 errors first, then warnings.
    const levels = results.map((result) => result.level);
    expect(levels.filter((level) => level === 'error')).toHaveLength(Math.min(300, results.length));
    expect(log.runs[0]!.properties).toEqual({ totalResults: 3_000, omittedResults: cut.omitted });
    // Within the limit and not far below it: the cut keeps what fits, not a handful.
    expect(compressed).toBeGreaterThan(limits.gzipBytes / 2);
  });

  it('a report within the limits is written whole, without a note', () => {
    const report: CheckReport = {
      findings: [
        {
          type: 'coverage_gap',
          tier: 'housekeeping',
          severity: 'warning',
          message: 'not governed',
          spec_path: null,
          file_path: 'a.ts',
          glob_pattern: null,
          line: null,
        },
      ],
      summary: { errors: 0, warnings: 1 },
      passed: true,
      exit_code: 0,
      warnings: [],
    };
    const { text, cut } = sarifText(report);
    expect(cut).toEqual({ total: 1, omitted: 0 });
    const run = (JSON.parse(text) as SarifLog).runs[0]!;
    expect(run.results).toHaveLength(1);
    expect(run.properties).toBeUndefined();
    expect(run.invocations).toBeUndefined();
  });

  it('severityOrder: errors, then warnings, each by tier, then in the report order', () => {
    const f = (severity: CheckFinding['severity'], tier: CheckFinding['tier']) =>
      ({ severity, tier }) as CheckFinding;
    expect(
      severityOrder([
        f('warning', 'housekeeping'),
        f('warning', 'critical'),
        f('error', 'housekeeping'),
        f('error', 'critical'),
        f('warning', 'critical'),
        f('error', 'drift'),
      ]),
    ).toEqual([3, 5, 2, 1, 4, 0]);
  });
});

/** `grove check --format json` on `root`, in this process. */
async function runJson(root: string): Promise<{ code: number; findings: CheckFinding[] }> {
  let stdout = '';
  const code = await runNotaraiCommand('check', ['--format', 'json', root], {
    stdout: (text) => (stdout += text),
    stderr: () => undefined,
    colours: false,
  });
  return { code, findings: (JSON.parse(stdout) as { findings: CheckFinding[] }).findings };
}
