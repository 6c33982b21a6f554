// Compares `grove check` and `grove score` with NotarAI 0.7's `notarai check` and `notarai score`
// on one repository (issue 25: "on NotarAI's own repository, `grove check` reports the same
// findings as NotarAI 0.7's `check`, apart from the differences the compatibility page lists").
// A script that prints, not a test: it needs a NotarAI binary, which CI does not have
// (docs/notarai-compatibility.md, "Checked against NotarAI 0.7 on its own repository", says how
// one was built offline).
//
// Usage:
//   node scripts/compare-notarai.ts [--notarai PATH] <repository>
//   NOTARAI_BIN=PATH node scripts/compare-notarai.ts <repository>
//
// It runs, in <repository>, `notarai check --format json` (normal and --strict) and `notarai
// score --format json` (NotarAI always works on its current directory), and this checkout's
// `grove check|score --format json <repository>` from its TypeScript sources (GROVE_CLI_ENTRY=
// source: the code checked is the code checked out, never a stale bundle). Findings are compared
// as sets of (type, tier, severity, spec_path, file_path, glob_pattern, message); then the order,
// the summary and the exit code. Scores are compared spec by spec, and once more with Grove's
// days term replaced by NotarAI's 30-day default (computed from the terms Grove's engine reports),
// which shows whether "the days fix" is the whole of a score difference.
//
// Each difference is labelled with the entry of the compatibility page that explains it, when the
// script can tell (a rule below for each); anything else is "NOT LISTED": look at it by hand. The
// exit code is 0 whatever the differences (2 for a usage error or a tool that did not run).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runGit, splitNul } from '../main/platform/git/run-git.ts';
import { childEnvironment, runProcess } from '../main/platform/run-process.ts';
import { compareUtf8 } from '../main/platform/path-order.ts';
import { loadScoringConfig } from '../main/reconcile/notarai07/notarai-configs.ts';
import {
  DEFAULT_DAYS_SINCE_RECONCILIATION,
  scoreSpecs,
} from '../main/reconcile/notarai07/notarai-score.ts';
import type { ScoringConfig } from '../main/reconcile/notarai07/notarai-configs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GROVE = path.join(ROOT, 'bin', 'grove.js');
const RUN_TIMEOUT_MS = 10 * 60_000;

/** Where each label points: the compatibility page's entries (docs/notarai-compatibility.md). */
const LISTED = {
  byteOrder: 'listed: Byte order',
  untracked: 'listed: Untracked files count',
  oneMatcher: 'listed: One glob matcher (files git ignores)',
  days: 'listed: The days fix',
} as const;
const NOT_LISTED = 'NOT LISTED';

interface Finding {
  type: string;
  tier: string;
  severity: string;
  spec_path: string | null;
  file_path: string | null;
  glob_pattern: string | null;
  message: string;
}
interface CheckJson {
  findings: Finding[];
  summary: { errors: number; warnings: number };
}
interface ScoreJson {
  overall: { score: number; status: string };
  specs: { spec_path: string; score: number; status: string }[];
}
interface Run<T> {
  code: number | null;
  json: T;
}
/** One line of the differences table. */
interface Difference {
  what: string;
  notarai: string;
  grove: string;
  label: string;
}

function usage(message: string): never {
  process.stderr.write(
    `${message}\nUsage: node scripts/compare-notarai.ts [--notarai PATH] <repository>` +
      ' (or NOTARAI_BIN=PATH)\n',
  );
  process.exit(2);
}

async function runJson<T>(
  label: string,
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<Run<T>> {
  const output = await runProcess(command, args, {
    cwd,
    env,
    timeoutMs: RUN_TIMEOUT_MS,
    maxStdoutBytes: 256 * 1024 * 1024,
    onOverflow: 'kill',
  });
  const stdout = output.stdout.toString('utf8');
  try {
    return { code: output.code, json: JSON.parse(stdout) as T };
  } catch {
    const why = output.startError ? String(output.startError) : output.stderr.toString('utf8');
    process.stderr.write(`${label} printed no JSON (exit ${output.code}): ${why.trim()}\n`);
    process.exit(2);
  }
}

/** The repository's files as git sees them: tracked, and untracked but not ignored. */
async function gitFiles(repo: string): Promise<{ tracked: Set<string>; untracked: Set<string> }> {
  const list = async (args: string[]) => {
    const output = await runGit(['ls-files', '-z', ...args], { cwd: repo, ceiling: undefined });
    return new Set(splitNul(output.stdout).map((name) => name.toString('utf8')));
  };
  return {
    tracked: await list([]),
    untracked: await list(['--others', '--exclude-standard']),
  };
}

const identity = (f: Finding) =>
  JSON.stringify([f.type, f.tier, f.severity, f.spec_path, f.file_path, f.glob_pattern]);
const whole = (f: Finding) => `${identity(f)}${f.message}`;

/** `File governed by multiple specs: F (a, b)` -> the spec list, sorted; null for other messages. */
function overlapSpecs(message: string): string | null {
  const match = /^File governed by multiple specs: .* \((.*)\)$/.exec(message);
  return match?.[1] ? match[1].split(', ').sort(compareUtf8).join(', ') : null;
}

/** Why a finding only one tool reports is (or is not) a listed difference. */
function labelOneSided(finding: Finding, files: { tracked: Set<string>; untracked: Set<string> }) {
  const file = finding.file_path;
  if (file === null || files.tracked.has(file)) return NOT_LISTED;
  if (files.untracked.has(file)) return LISTED.untracked;
  return LISTED.oneMatcher;
}

function compareCheck(
  mode: string,
  notarai: Run<CheckJson>,
  grove: Run<CheckJson>,
  files: { tracked: Set<string>; untracked: Set<string> },
): Difference[] {
  const differences: Difference[] = [];
  const ours = new Map(grove.json.findings.map((f) => [whole(f), f]));
  const theirs = new Map(notarai.json.findings.map((f) => [whole(f), f]));
  const onlyNotarai = notarai.json.findings.filter((f) => !ours.has(whole(f)));
  const onlyGrove = grove.json.findings.filter((f) => !theirs.has(whole(f)));
  // The same finding (all but the message) with another message: pair them up.
  const groveByIdentity = new Map<string, Finding[]>();
  for (const f of onlyGrove)
    groveByIdentity.set(identity(f), [...(groveByIdentity.get(identity(f)) ?? []), f]);
  const paired = new Set<Finding>();
  for (const f of onlyNotarai) {
    const twin = groveByIdentity.get(identity(f))?.shift();
    if (twin) {
      paired.add(f).add(twin);
      const sameSpecs =
        overlapSpecs(f.message) !== null && overlapSpecs(f.message) === overlapSpecs(twin.message);
      differences.push({
        what: `${mode}: message of ${f.type}`,
        notarai: f.message,
        grove: twin.message,
        label: sameSpecs ? `${LISTED.byteOrder} (spec list of an overlap)` : NOT_LISTED,
      });
    }
  }
  for (const f of onlyNotarai.filter((f) => !paired.has(f))) {
    differences.push({
      what: `${mode}: only NotarAI, ${f.type}`,
      notarai: f.message,
      grove: '',
      label: labelOneSided(f, files),
    });
  }
  for (const f of onlyGrove.filter((f) => !paired.has(f))) {
    differences.push({
      what: `${mode}: only Grove, ${f.type}`,
      notarai: '',
      grove: f.message,
      label: labelOneSided(f, files),
    });
  }
  // Order: the findings both report, in each tool's order; the group (type) order must agree.
  const common = (list: Finding[], other: Map<string, Finding>) =>
    list.filter((f) => other.has(whole(f)));
  const a = common(notarai.json.findings, ours);
  const b = common(grove.json.findings, theirs);
  const groups = (list: Finding[]) =>
    list.map((f) => f.type).filter((t, i, all) => t !== all[i - 1]);
  const moved = a.filter((f, i) => whole(f) !== whole(b[i] ?? f)).length;
  if (groups(a).join() !== groups(b).join()) {
    differences.push({
      what: `${mode}: group order`,
      notarai: groups(a).join(' '),
      grove: groups(b).join(' '),
      label: NOT_LISTED,
    });
  } else if (moved > 0) {
    differences.push({
      what: `${mode}: order inside groups`,
      notarai: `${moved} of ${a.length} common findings at another position`,
      grove: 'UTF-8 order (spec, file, glob, line, message)',
      label: LISTED.byteOrder,
    });
  }
  // The summary and the verdict follow from the findings: explained when every finding is.
  const explained = differences.every((d) => d.label !== NOT_LISTED);
  const summary = (run: Run<CheckJson>) =>
    `${run.json.summary.errors} errors, ${run.json.summary.warnings} warnings`;
  if (summary(notarai) !== summary(grove)) {
    differences.push({
      what: `${mode}: summary`,
      notarai: summary(notarai),
      grove: summary(grove),
      label: explained ? 'follows from the findings above' : NOT_LISTED,
    });
  }
  if (notarai.code !== grove.code) {
    differences.push({
      what: `${mode}: exit code`,
      notarai: String(notarai.code),
      grove: String(grove.code),
      label: explained ? 'follows from the findings above' : NOT_LISTED,
    });
  }
  return differences;
}

/** NotarAI's rounding: `(x * 100.0).round() / 100.0` (half away from zero; scores are >= 0). */
const round2 = (x: number) => Math.round(x * 100) / 100;
const status = (x: number) => (x < 0.3 ? 'healthy' : x < 0.6 ? 'review' : 'overdue');
const show = (s: { score: number; status: string } | undefined) =>
  s ? `${s.score.toFixed(2)} ${s.status}` : '-';

/** Grove's scores with the days term NotarAI uses (always its 30-day default), from Grove's terms. */
async function groveScoresAtNotaraiDays(repo: string) {
  const report = await scoreSpecs(repo);
  const weights: ScoringConfig = await loadScoringConfig(repo, []);
  const days = Math.min(1, DEFAULT_DAYS_SINCE_RECONCILIATION / 90);
  const raw = new Map<string, number>();
  for (const spec of report.specs) {
    const terms = { ...spec.terms, days_since_reconciliation: days };
    const sum = (Object.keys(weights) as (keyof ScoringConfig)[]).reduce(
      (total, key) => total + weights[key] * terms[key],
      0,
    );
    raw.set(spec.spec_path, Math.min(1, sum));
  }
  const values = [...raw.values()];
  const overall = values.length === 0 ? 0 : values.reduce((s, v) => s + v, 0) / values.length;
  return { days: report.days_since_reconciliation, raw, overall };
}

function compareScore(
  notarai: ScoreJson,
  grove: ScoreJson,
  at30: Awaited<ReturnType<typeof groveScoresAtNotaraiDays>>,
): { rows: string[][]; differences: Difference[] } {
  const rows: string[][] = [];
  const differences: Difference[] = [];
  const paths = [...new Set([...notarai.specs, ...grove.specs].map((s) => s.spec_path))].sort(
    compareUtf8,
  );
  const line = (
    name: string,
    n: { score: number; status: string } | undefined,
    g: { score: number; status: string } | undefined,
    raw: number | undefined,
  ) => {
    const fixed = raw === undefined ? undefined : { score: round2(raw), status: status(raw) };
    rows.push([name, show(n), show(g), show(fixed)]);
    if (show(n) === show(g)) return;
    differences.push({
      what: `score: ${name}`,
      notarai: show(n),
      grove: show(g),
      label: show(n) === show(fixed) ? LISTED.days : NOT_LISTED,
    });
  };
  for (const spec of paths) {
    line(
      spec,
      notarai.specs.find((s) => s.spec_path === spec),
      grove.specs.find((s) => s.spec_path === spec),
      at30.raw.get(spec),
    );
  }
  line('overall', notarai.overall, grove.overall, at30.overall);
  // Order: highest first in both; ties are NotarAI's directory order and Grove's path order.
  const order = (s: ScoreJson) => s.specs.map((x) => x.spec_path).join(', ');
  if (order(notarai) !== order(grove)) {
    differences.push({
      what: 'score: order of specs',
      notarai: order(notarai),
      grove: order(grove),
      label: 'check by hand (the scores above differ, or ties: Byte order)',
    });
  }
  return { rows, differences };
}

/**
 * One row per kind of difference (same `what` and label): how many, and the first as an example,
 * so 19 overlap messages listing their specs in another order read as one line.
 */
function folded(differences: Difference[]): string[][] {
  const rows = new Map<string, { first: Difference; count: number }>();
  for (const d of differences) {
    const key = `${d.what}\0${d.label}`;
    const row = rows.get(key);
    if (row) row.count++;
    else rows.set(key, { first: d, count: 1 });
  }
  return [...rows.values()].map(({ first, count }) => [
    first.what,
    String(count),
    first.notarai,
    first.grove,
    first.label,
  ]);
}

function table(header: string[], rows: string[][]): string {
  const escape = (cell: string) => cell.replaceAll('|', '\\|');
  return [header, header.map(() => '---'), ...rows]
    .map((row) => `| ${row.map(escape).join(' | ')} |`)
    .join('\n');
}

function counts(notarai: CheckJson, grove: CheckJson): string[][] {
  const byType = (json: CheckJson) => {
    const map = new Map<string, number>();
    for (const f of json.findings)
      map.set(
        `${f.type} (${f.tier}, ${f.severity})`,
        (map.get(`${f.type} (${f.tier}, ${f.severity})`) ?? 0) + 1,
      );
    return map;
  };
  const a = byType(notarai);
  const b = byType(grove);
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort(compareUtf8);
  return [
    ...keys.map((k) => [k, String(a.get(k) ?? 0), String(b.get(k) ?? 0)]),
    ['all findings', String(notarai.findings.length), String(grove.findings.length)],
  ];
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { notarai: { type: 'string' } },
    allowPositionals: true,
  });
  const notaraiBin = values.notarai ?? process.env.NOTARAI_BIN;
  if (!notaraiBin) usage('no NotarAI binary: pass --notarai PATH or set NOTARAI_BIN');
  if (positionals.length !== 1) usage('expected one repository path');
  const repo = path.resolve(positionals[0] ?? '.');
  if (!existsSync(path.join(repo, '.notarai'))) usage(`${repo} has no .notarai/`);
  const bin = path.resolve(notaraiBin);

  const env = childEnvironment();
  const groveEnv = { ...env, GROVE_CLI_ENTRY: 'source' };
  const notarai = <T>(args: string[]) =>
    runJson<T>(`notarai ${args.join(' ')}`, bin, args, repo, env);
  const grove = <T>(args: string[]) =>
    runJson<T>(`grove ${args.join(' ')}`, process.execPath, [GROVE, ...args, repo], ROOT, groveEnv);

  const version = (
    await runProcess(bin, ['--version'], {
      cwd: repo,
      env,
      timeoutMs: 30_000,
      maxStdoutBytes: 4096,
      onOverflow: 'kill',
    })
  ).stdout
    .toString('utf8')
    .trim();
  const head = (await runGit(['rev-parse', 'HEAD'], { cwd: repo, ceiling: undefined })).stdout
    .toString('utf8')
    .trim();
  const dirty =
    (await runGit(['status', '--porcelain'], { cwd: repo, ceiling: undefined })).stdout.length > 0;
  const files = await gitFiles(repo);

  const differences: Difference[] = [];
  const out: string[] = [
    `${version} vs. Grove (this checkout's sources) on ${repo} at ${head}${dirty ? ' (with local changes)' : ''}`,
    '',
  ];
  for (const strict of [false, true]) {
    const args = ['check', '--format', 'json', ...(strict ? ['--strict'] : [])];
    const n = await notarai<CheckJson>(args);
    const g = await grove<CheckJson>(args);
    const mode = strict ? 'check --strict' : 'check';
    out.push(
      `## ${mode}: findings by type (exit ${n.code} / ${g.code})`,
      '',
      table(['type (tier, severity)', 'NotarAI', 'Grove'], counts(n.json, g.json)),
      '',
    );
    differences.push(...compareCheck(mode, n, g, files));
  }
  const n = await notarai<ScoreJson>(['score', '--format', 'json']);
  const g = await grove<ScoreJson>(['score', '--format', 'json']);
  const at30 = await groveScoresAtNotaraiDays(repo);
  const score = compareScore(n.json, g.json, at30);
  out.push(
    `## score (Grove's days since reconciliation: ${at30.days}; NotarAI's: always ${DEFAULT_DAYS_SINCE_RECONCILIATION})`,
    '',
    table(
      ['spec', 'NotarAI', 'Grove', `Grove at ${DEFAULT_DAYS_SINCE_RECONCILIATION} days`],
      score.rows,
    ),
    '',
  );
  differences.push(...score.differences);

  const unexplained = differences.filter((d) => d.label === NOT_LISTED).length;
  out.push(
    `## Differences: ${differences.length} (${unexplained} not listed on docs/notarai-compatibility.md)`,
    '',
    differences.length === 0
      ? 'none'
      : table(['what', 'how many', 'NotarAI (first)', 'Grove (first)', 'why'], folded(differences)),
    '',
  );
  process.stdout.write(out.join('\n'));
}

await main();
