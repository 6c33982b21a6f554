// NotarAI's own tests for lint, score, export-context and decisions (davidroeca/NotarAI,
// crates/notarai/tests/{lint,score,export_context,decisions}_test.rs), ported case by case, each
// named for the NotarAI test and behaviour it pins, on repositories built here. Grove has no
// `lint` command: its rules are pinned through `grove check --format json` (lint_l00x findings;
// L002, L003 and L005 are check's behavior_incomplete and circular_ref, as in NotarAI's check) and
// through runLint for the severities check does not show (info). The decisions cases here pin
// the log's proposals as score reads them; `grove decisions` itself is pinned against NotarAI's
// recorded answers in decisions-command.test.ts. Differences on purpose:
// docs/notarai-compatibility.md.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, makeTempDir, makeTempRepo, writeFiles } from '../testing/temp-repo.ts';
import { loadLintConfig } from '../reconcile/notarai07/notarai-configs.ts';
import { incompleteBehaviors, refCycles, runLint } from '../reconcile/notarai07/notarai-lint.ts';
import { checkSpecs } from '../reconcile/notarai07/notarai-specs.ts';
import { loadSpecs } from '../reconcile/specs/spec-loader.ts';
import { runNotaraiCommand, type CommandOutput } from './notarai-commands.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function grove(command: 'check' | 'score' | 'export-context', ...args: string[]) {
  const run: Run = { code: 0, stdout: '', stderr: '' };
  const out: CommandOutput = {
    stdout: (text) => (run.stdout += text),
    stderr: (text) => (run.stderr += text),
    colours: false,
  };
  run.code = await runNotaraiCommand(command, args, out);
  return run;
}

/** A git repository holding `files`, committed (no README: it would be a coverage gap). */
async function project(files: Record<string, string>): Promise<string> {
  const made = await makeTempRepo(files);
  cleanups.push(() => made.cleanup());
  await git(made.root, 'rm', '-q', 'README.md');
  await git(made.root, 'commit', '-q', '-m', 'initial');
  return made.root;
}

/** A directory that is not a git repository, holding `files`. */
async function plainDir(files: Record<string, string> = {}): Promise<string> {
  const dir = await makeTempDir();
  cleanups.push(async () => (await import('node:fs/promises')).rm(dir, { recursive: true }));
  await writeFiles(dir, files);
  return dir;
}

type Finding = { type: string; severity: string; message: string; spec_path: string | null };
const checkJson = async (root: string) => {
  const run = await grove('check', '--format', 'json', root);
  return { ...run, json: JSON.parse(run.stdout) as { findings: Finding[]; summary: object } };
};
const ofType = (findings: Finding[], type: string) => findings.filter((f) => f.type === type);

/** NotarAI's lint on the worktree (runLint with what check gives it), for info severities. */
async function lint(root: string) {
  const specSet = await loadSpecs(root);
  const specs = (await checkSpecs(specSet)).filter((spec) => spec.errors.length === 0);
  const refExists = new Map<string, boolean>();
  for (const spec of specs) {
    for (const ref of spec.refs)
      refExists.set(ref.resolved, existsSync(path.join(root, ref.resolved)));
  }
  return runLint({
    specs,
    config: await loadLintConfig(root, []),
    refExists,
    cycles: (await refCycles(specs)).cycles,
    incomplete: incompleteBehaviors(specs),
    now: Date.now(),
  });
}

const SRC = { 'src/main.rs': 'fn main() {}' };
const FULL_NO_BEHAVIORS = `schema_version: '0.8'
intent: 'No behaviors'
artifacts:
  code:
    - path: 'src/*.rs'
      role: 'source'
`;
const registered = (extra: string) => `schema_version: '0.8'
intent: 'Spec'
tier: registered
artifacts:
  code:
    - path: 'src/*.rs'
      role: 'source'
${extra}`;

describe('lint (NotarAI lint_test.rs), through grove check', () => {
  it('lint_exits_2_when_not_initialized: no .notarai/ exits 2 naming it', async () => {
    const run = await grove('check', await plainDir());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('.notarai/');
  });

  it('lint_exits_0_when_clean: a full spec with a complete behavior passes', async () => {
    const root = await project({
      ...SRC,
      '.notarai/app.spec.yaml': `schema_version: '0.8'
intent: 'Clean spec'
behaviors:
  - name: test_behavior
    given: 'some input'
    then: 'some output'
    tested_by:
      - path: src/main.rs
artifacts:
  code:
    - path: 'src/*.rs'
      role: 'source'
`,
    });
    const run = await checkJson(root);
    expect(run.json.findings).toEqual([]);
    expect(run.code).toBe(0);
  });

  it('lint_l001_tier1_no_behaviors: a full spec without behaviors is an error (exit 1)', async () => {
    const root = await project({ ...SRC, '.notarai/app.spec.yaml': FULL_NO_BEHAVIORS });
    const run = await checkJson(root);
    expect(ofType(run.json.findings, 'lint_l001')).toHaveLength(1);
    expect(ofType(run.json.findings, 'lint_l001')[0]?.severity).toBe('error');
    expect(run.code).toBe(1);
  });

  it('lint_l001_skips_registered_tier: a registered spec needs no behaviors (exit 0)', async () => {
    const root = await project({ ...SRC, '.notarai/app.spec.yaml': registered('') });
    const run = await checkJson(root);
    expect(ofType(run.json.findings, 'lint_l001')).toEqual([]);
    expect(run.code).toBe(0);
  });

  it('lint_l002_missing_given / lint_l003_missing_then: one warning each', async () => {
    const spec = (field: string, value: string) => `schema_version: '0.8'
intent: 'Missing ${field}'
behaviors:
  - name: no_${field}
    ${field === 'given' ? 'then' : 'given'}: '${value}'
artifacts:
  code:
    - path: 'src/*.rs'
      role: 'source'
`;
    const root = await project({
      ...SRC,
      '.notarai/given.spec.yaml': spec('given', 'something'),
      '.notarai/then.spec.yaml': spec('then', 'something'),
    });
    const linted = await lint(root);
    for (const rule of ['L002', 'L003'] as const) {
      const found = linted.filter((finding) => finding.rule === rule);
      expect(found, rule).toHaveLength(1);
      expect(found[0]?.severity, rule).toBe('warning');
    }
    // In check: behavior_incomplete, once per missing field.
    const incomplete = ofType((await checkJson(root)).json.findings, 'behavior_incomplete');
    expect(incomplete.map((finding) => finding.message).sort()).toEqual([
      "Behavior 'no_given' missing 'given' field (in .notarai/given.spec.yaml)",
      "Behavior 'no_then' missing 'then' field (in .notarai/then.spec.yaml)",
    ]);
  });

  it('lint_l004_ref_missing: a $ref to a missing spec is an error (exit 1)', async () => {
    const root = await project({
      ...SRC,
      '.notarai/app.spec.yaml': registered("subsystems:\n  - $ref: './nonexistent.spec.yaml'\n"),
    });
    const run = await checkJson(root);
    expect(ofType(run.json.findings, 'lint_l004')).toHaveLength(1);
    expect(run.code).toBe(1);
  });

  it('lint_l005_circular_ref: a cycle through subsystems and dependencies is one warning', async () => {
    const root = await project({
      ...SRC,
      '.notarai/a.spec.yaml': registered("subsystems:\n  - $ref: './b.spec.yaml'\n"),
      '.notarai/b.spec.yaml': registered("dependencies:\n  - $ref: './a.spec.yaml'\n"),
    });
    const l005 = (await lint(root)).filter((finding) => finding.rule === 'L005');
    expect(l005).toHaveLength(1);
    expect(l005[0]?.severity).toBe('warning');
    expect(ofType((await checkJson(root)).json.findings, 'circular_ref')).toHaveLength(1);
  });

  it('lint_l006_stale_decision: a decision of 2020 without rationale is one warning', async () => {
    const root = await project({
      ...SRC,
      '.notarai/app.spec.yaml': registered(
        "decisions:\n  - date: '2020-01-01'\n    choice: 'Old choice with no rationale'\n",
      ),
    });
    const l006 = ofType((await checkJson(root)).json.findings, 'lint_l006');
    expect(l006).toHaveLength(1);
    expect(l006[0]?.severity).toBe('warning');
  });

  it('lint_l007_open_questions: info in lint (exit 0), a warning in check', async () => {
    const root = await project({
      ...SRC,
      '.notarai/app.spec.yaml': registered("open_questions:\n  - 'Should we use X or Y?'\n"),
    });
    const l007 = (await lint(root)).filter((finding) => finding.rule === 'L007');
    expect(l007.map((finding) => finding.severity)).toEqual(['info']);
    const run = await checkJson(root);
    expect(ofType(run.json.findings, 'lint_l007').map((f) => f.severity)).toEqual(['warning']);
    expect(run.code).toBe(0);
  });

  it('lint_l008_broad_glob: `**/*` is one warning', async () => {
    const root = await project({
      '.notarai/app.spec.yaml': `schema_version: '0.8'
intent: 'Broad glob'
tier: registered
artifacts:
  code:
    - path: '**/*'
      role: 'everything'
`,
    });
    const l008 = ofType((await checkJson(root)).json.findings, 'lint_l008');
    expect(l008).toHaveLength(1);
    expect(l008[0]?.severity).toBe('warning');
  });

  it("lint_l009_schema_mismatch: schema_version '0.5' is an error (exit 1)", async () => {
    const root = await project({
      ...SRC,
      '.notarai/app.spec.yaml': registered('').replace("'0.8'", "'0.5'"),
    });
    const run = await checkJson(root);
    expect(ofType(run.json.findings, 'lint_l009')).toHaveLength(1);
    expect(run.code).toBe(1);
  });

  it('lint_l010_duplicate_behaviors: one warning naming the duplicate', async () => {
    const root = await project({
      ...SRC,
      '.notarai/app.spec.yaml': `schema_version: '0.8'
intent: 'Duplicate behaviors'
behaviors:
  - name: duplicated
    given: 'input A'
    then: 'output A'
  - name: duplicated
    given: 'input B'
    then: 'output B'
artifacts:
  code:
    - path: 'src/*.rs'
      role: 'source'
`,
    });
    const l010 = ofType((await checkJson(root)).json.findings, 'lint_l010');
    expect(l010).toHaveLength(1);
    expect(l010[0]?.severity).toBe('warning');
    expect(l010[0]?.message).toContain('duplicated');
  });

  it('lint_config_disables_rule: lint.yaml `L001: {enabled: false}` passes (exit 0)', async () => {
    const root = await project({
      ...SRC,
      '.notarai/app.spec.yaml': FULL_NO_BEHAVIORS,
      '.notarai/lint.yaml': 'rules:\n  L001:\n    enabled: false\n',
    });
    const run = await checkJson(root);
    expect(ofType(run.json.findings, 'lint_l001')).toEqual([]);
    expect(run.code).toBe(0);
  });

  it('lint_config_overrides_severity: `L001: {severity: info}` no longer fails (exit 0)', async () => {
    const root = await project({
      ...SRC,
      '.notarai/app.spec.yaml': FULL_NO_BEHAVIORS,
      '.notarai/lint.yaml': 'rules:\n  L001:\n    severity: info\n',
    });
    const l001 = (await lint(root)).filter((finding) => finding.rule === 'L001');
    expect(l001.map((finding) => finding.severity)).toEqual(['info']);
    const run = await checkJson(root);
    expect(ofType(run.json.findings, 'lint_l001').map((f) => f.severity)).toEqual(['warning']);
    expect(run.code).toBe(0);
  });

  it('lint_json_output_structure: findings with their keys, a summary of counts', async () => {
    const root = await project({ ...SRC, '.notarai/app.spec.yaml': FULL_NO_BEHAVIORS });
    const { json } = await checkJson(root);
    expect(json.summary).toEqual({ errors: expect.any(Number), warnings: expect.any(Number) });
    expect(json.findings.length).toBeGreaterThan(0);
    expect(Object.keys(json.findings[0] as object).sort()).toEqual([
      'file_path',
      'glob_pattern',
      'message',
      'severity',
      'spec_path',
      'tier',
      'type',
    ]);
  });
});

const COVERED = registered('').replace("'src/*.rs'", "'src/lib.rs'");

describe('score (NotarAI score_test.rs)', () => {
  it('score_exits_2_when_not_initialized', async () => {
    const run = await grove('score', await plainDir());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('.notarai/');
  });

  it('score_empty_project_no_specs: "No specs found", exit 0', async () => {
    const root = await project({ '.notarai/.keep': '' });
    const run = await grove('score', root);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('No specs found');
  });

  it('score_json_format: overall.score, overall.status and specs', async () => {
    const root = await project({
      'src/lib.rs': 'pub fn x() {}\n',
      '.notarai/app.spec.yaml': COVERED,
    });
    const run = await grove('score', '--format', 'json', root);
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout) as {
      overall: { score: number; status: string };
      specs: unknown[];
    };
    expect(json.overall).toEqual({ score: expect.any(Number), status: expect.any(String) });
    expect(json.specs).toHaveLength(1);
  });

  it('score_human_format_shows_status: a "Spec" table and "Overall:"', async () => {
    const root = await project({
      'src/lib.rs': 'pub fn x() {}\n',
      '.notarai/app.spec.yaml': COVERED,
    });
    const run = await grove('score', root);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Spec');
    expect(run.stdout).toContain('Overall:');
  });

  it('score_single_spec_filter: --spec scores that spec only', async () => {
    const root = await project({
      'src/lib.rs': 'pub fn x() {}\n',
      '.notarai/app.spec.yaml': COVERED,
      '.notarai/other.spec.yaml': COVERED.replace("'Spec'", "'Other'"),
    });
    const run = await grove('score', '--format', 'json', '--spec', '.notarai/app.spec.yaml', root);
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout) as { specs: { spec_path: string }[] };
    expect(json.specs.map((spec) => spec.spec_path)).toEqual(['.notarai/app.spec.yaml']);
  });
});

const MINIMAL_SPEC = `schema_version: '0.8'
intent: 'Test spec'
artifacts:
  code:
    - path: 'src/*.rs'
      role: 'source code'
`;

/** NotarAI's fixture: a spec and src/main.rs committed, then main.rs changed and committed. */
async function changedProject(): Promise<string> {
  const root = await project({ ...SRC, '.notarai/app.spec.yaml': MINIMAL_SPEC });
  await writeFiles(root, { 'src/main.rs': 'fn main() { println!("hi"); }' });
  await git(root, 'commit', '-q', '-am', 'update');
  return root;
}

describe('export-context (NotarAI export_context_test.rs)', () => {
  it('export_context_exits_2_when_not_initialized', async () => {
    const run = await grove('export-context', '--all', await plainDir());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('.notarai/');
  });

  it('export_context_requires_spec_or_all: neither, or both, exit 1', async () => {
    const root = await project({ '.notarai/.keep': '' });
    const neither = await grove('export-context', root);
    expect(neither.code).toBe(1);
    expect(neither.stderr).toMatch(/--spec|--all/);
    const both = await grove('export-context', '--spec', '.notarai/test.spec.yaml', '--all', root);
    expect(both.code).toBe(1);
  });

  it('export_context_markdown_single_spec: the reconciliation prompt names the changed file', async () => {
    const root = await changedProject();
    const run = await grove(
      'export-context',
      '--spec',
      '.notarai/app.spec.yaml',
      '--base-branch',
      'HEAD~1',
      '--format',
      'markdown',
      root,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Reconciliation');
    expect(run.stdout).toContain('src/main.rs');
  });

  it('export_context_json_single_spec / json_includes_base_branch: one object with its keys', async () => {
    const root = await changedProject();
    const run = await grove(
      'export-context',
      '--spec',
      '.notarai/app.spec.yaml',
      '--base-branch',
      'HEAD~1',
      '--format',
      'json',
      root,
    );
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(typeof json['spec_name']).toBe('string');
    expect(json['changed_files']).toEqual(['src/main.rs']);
    expect(json['diff']).toEqual(expect.stringContaining('println'));
    expect(json['base_branch']).toBe('HEAD~1');
    // git's output as it is, its final newline included (as NotarAI's `git diff` output).
    expect(json['diff']).toBe(await git(root, 'diff', 'HEAD~1', '--', 'src/main.rs'));
  });

  it('export_context_all_specs: --all succeeds', async () => {
    const root = await changedProject();
    const run = await grove(
      'export-context',
      '--all',
      '--base-branch',
      'HEAD~1',
      '--format',
      'json',
      root,
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ spec_path: '.notarai/app.spec.yaml' });
  });

  it('export_context_bootstrap_outputs_template: works without .notarai/ (Grove: its own prompt)', async () => {
    const run = await grove('export-context', '--bootstrap', await plainDir());
    expect(run.code).toBe(0);
    expect(run.stdout.length).toBeGreaterThan(100);
  });

  it('export_context_bootstrap_warns_if_specs_exist: a warning on stderr, still exit 0', async () => {
    const root = await project({ '.notarai/app.spec.yaml': MINIMAL_SPEC });
    const run = await grove('export-context', '--bootstrap', root);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('already contains spec files');
  });

  it('export_context_exits_1_outside_git_repo: "not a git repository"', async () => {
    const dir = await plainDir({ '.notarai/.keep': '' });
    const run = await grove('export-context', '--all', dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('not a git repository');
  });
});

const proposal = (spec: string, status: string, choice: string) => ({
  spec_path: spec,
  date: '2026-04-13',
  choice,
  rationale: 'R',
  origin: 'reconciliation',
  status,
  related_files: [],
});

describe('decisions (NotarAI decisions_test.rs): the decision log as score reads it', () => {
  /** The unresolved_decisions term of app.spec.yaml with this decision log. */
  async function unresolved(log: string | undefined): Promise<number> {
    const root = await project({
      'src/lib.rs': 'x',
      '.notarai/app.spec.yaml': COVERED,
      ...(log === undefined ? {} : { '.notarai/decision-log.json': log }),
    });
    const { scoreSpecs } = await import('../reconcile/notarai07/notarai-score.ts');
    const report = await scoreSpecs(root);
    expect(report.warnings).toEqual([]);
    return report.specs[0]?.terms?.unresolved_decisions ?? Number.NaN;
  }

  it('decisions_list_empty_log: no log, or no proposals, is no unresolved decision', async () => {
    expect(await unresolved(undefined)).toBe(0);
    expect(await unresolved('{"proposals":[]}')).toBe(0);
  });

  it('decisions_list_shows_proposals: a proposed entry for the spec counts (÷ 5)', async () => {
    const log = { proposals: [proposal('.notarai/app.spec.yaml', 'proposed', 'Update retry')] };
    expect(await unresolved(JSON.stringify(log))).toBeCloseTo(0.2);
  });

  it('decisions_list_filters_by_status: only proposed entries of this spec count', async () => {
    const log = {
      proposals: [
        proposal('.notarai/app.spec.yaml', 'proposed', 'Choice A'),
        proposal('.notarai/app.spec.yaml', 'rejected', 'Choice B'),
        proposal('.notarai/other.spec.yaml', 'proposed', 'Choice C'),
      ],
    };
    expect(await unresolved(JSON.stringify(log))).toBeCloseTo(0.2);
  });

  it('decisions_reject_marks_in_log: a rejected entry (with reject_reason) no longer counts', async () => {
    const log = {
      proposals: [
        {
          ...proposal('.notarai/app.spec.yaml', 'rejected', 'Remove'),
          reject_reason: 'Still needed',
        },
      ],
    };
    expect(await unresolved(JSON.stringify(log))).toBe(0);
  });
});
