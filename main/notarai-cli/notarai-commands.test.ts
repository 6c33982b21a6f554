// `grove check|score|export-context` as a CI job and NotarAI's skills meet them: the real `grove`
// command run as a process in a real git repository (exit codes, output), and SARIF validated
// against the SARIF 2.1.0 JSON schema (the OASIS schema as SchemaStore publishes it) with Ajv.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { git, makeTempRepo, writeFiles, type TempRepo } from '../testing/temp-repo.ts';
import { runNotaraiCommand, type CommandOutput } from './notarai-commands.ts';

const GROVE = fileURLToPath(new URL('../../bin/grove.js', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `grove` command in `cwd` (the test's Node: the pinned one). */
function grove(cwd: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [GROVE, ...args],
      { cwd, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

/** Runs a command in this process, capturing what it prints. */
async function inProcess(
  command: 'check' | 'score' | 'export-context',
  ...args: string[]
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const out: CommandOutput = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    colours: false,
  };
  const code = await runNotaraiCommand(command, args, out);
  return { code, stdout, stderr };
}

const SPEC_HEADER = "schema_version: '0.8'\nintent: Auth\n";

/** A clean project: one spec governs every file and tests its one behavior. */
const CLEAN: Record<string, string> = {
  '.notarai/auth.spec.yaml':
    SPEC_HEADER +
    'behaviors:\n  - name: login\n    given: a user\n    then: a session\n' +
    '    tested_by:\n      - tests/auth.test.ts\n' +
    'artifacts:\n  code:\n    - path: src/**\n    - path: tests/**\n    - path: README.md\n',
  'src/auth.ts': 'export const auth = 1;\n',
  'tests/auth.test.ts': 'test\n',
};

const repos: TempRepo[] = [];
async function project(files: Record<string, string>): Promise<string> {
  const repo = await makeTempRepo(files);
  repos.push(repo);
  return repo.root;
}
afterAll(async () => {
  await Promise.all(repos.map((repo) => repo.cleanup()));
});

describe('grove check (NotarAI check: flags, output, exit codes)', () => {
  it('exits 0 and prints "All checks passed." on a clean project', async () => {
    const run = await grove(await project(CLEAN), 'check');
    expect(run).toMatchObject({ code: 0, stdout: 'All checks passed.\n' });
  });

  it('exits 1 on an error finding (an orphaned glob), naming it and its spec line', async () => {
    const root = await project({
      ...CLEAN,
      '.notarai/auth.spec.yaml': `${CLEAN['.notarai/auth.spec.yaml']}    - path: lib/gone/**\n`,
    });
    const run = await grove(root, 'check');
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Orphaned Globs (1 findings)');
    expect(run.stdout).toContain('lib/gone/**');
    expect(run.stdout).toContain('in .notarai/auth.spec.yaml:14');
    expect(run.stdout).toMatch(/1 issue found \(1 error, 0 warnings\)\.\n$/);
  });

  it('writes all of a long report to a pipe before it exits (grove check --format json | jq)', async () => {
    // 1,000 ungoverned files: ~350 KB of findings, past any pipe's buffer (64 KB on Linux).
    const files: Record<string, string> = { ...CLEAN };
    for (let index = 0; index < 1000; index++) {
      files[`docs/ungoverned/a-long-name-for-a-file-no-spec-covers-${index}.md`] = `${index}\n`;
    }
    const run = await grove(await project(files), 'check', '--format', 'json');
    expect(run.stdout.length).toBeGreaterThan(256 * 1024);
    const report = JSON.parse(run.stdout) as { findings: { type: string }[] };
    expect(report.findings.filter((finding) => finding.type === 'coverage_gap')).toHaveLength(1000);
    expect(run.code).toBe(0);
  });

  it("exits 2 without .notarai/, with NotarAI's message", async () => {
    const run = await grove(await project({ 'README.md': 'hi\n' }), 'check');
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('Error: .notarai/ directory not found. Run `notarai init` first.\n');
  });

  it('--strict turns a warning (a coverage gap) into a failure', async () => {
    const root = await project({ ...CLEAN, 'docs/notes.md': 'notes\n' });
    expect((await inProcess('check', root)).code).toBe(0);
    const strict = await inProcess('check', '--strict', '--format', 'json', root);
    expect(strict.code).toBe(1);
    const json = JSON.parse(strict.stdout) as { findings: object[]; summary: object };
    expect(json.summary).toEqual({ errors: 1, warnings: 0 });
    expect(json.findings).toEqual([
      {
        file_path: 'docs/notes.md',
        glob_pattern: null,
        message: 'File not governed by any spec: docs/notes.md',
        severity: 'error',
        spec_path: null,
        tier: 'housekeeping',
        type: 'coverage_gap',
      },
    ]);
  });

  it("--format json prints NotarAI's keys only, alphabetically, pretty-printed", async () => {
    const root = await project({ ...CLEAN, 'docs/notes.md': 'notes\n' });
    const run = await inProcess('check', '--format', 'json', root);
    expect(run.stdout.split('\n').slice(0, 4)).toEqual([
      '{',
      '  "findings": [',
      '    {',
      '      "file_path": "docs/notes.md",',
    ]);
    expect(run.stdout).not.toContain('"line"');
  });

  it('fail_on in check.yaml decides the exit: housekeeping fails on a coverage gap', async () => {
    const root = await project({
      ...CLEAN,
      'docs/notes.md': 'notes\n',
      '.notarai/check.yaml': 'fail_on: housekeeping\n',
    });
    expect((await inProcess('check', root)).code).toBe(1);
  });

  it('says on stderr when it found the hash cache corrupt and recreated it, the JSON unchanged', async () => {
    const root = await project({ ...CLEAN, '.notarai/.cache/notarai.db': 'not a database\n' });
    const run = await grove(root, 'check', '--format', 'json');
    expect(run.stderr).toMatch(
      /warning: the hash cache \.notarai\/\.cache\/notarai\.db was unreadable/,
    );
    expect(run.stderr).toContain('recreated empty');
    expect(Object.keys(JSON.parse(run.stdout) as object)).toEqual(['findings', 'summary']);
    const score = await grove(root, 'score', '--format', 'json');
    expect(score.stderr).toBe(''); // recreated by check: nothing to say again
  });

  it('a bad flag is a usage error (exit 2) naming it', async () => {
    const run = await inProcess('check', '--format', 'xml', await project(CLEAN));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--format must be one of human, json, sarif, got xml');
  });
});

describe('grove check --format sarif', () => {
  it('is a valid SARIF 2.1.0 log: one result per finding, located in the file or the spec line', async () => {
    const root = await project({
      ...CLEAN,
      '.notarai/auth.spec.yaml': `${CLEAN['.notarai/auth.spec.yaml']}    - path: lib/gone/**\n`,
      'docs/my notes.md': 'notes\n',
    });
    const json = await inProcess('check', '--format', 'json', root);
    const sarifRun = await inProcess('check', '--format', 'sarif', root);
    expect(sarifRun.code).toBe(json.code);
    const sarif = JSON.parse(sarifRun.stdout) as {
      version: string;
      runs: {
        tool: { driver: { name: string; rules: { id: string }[] } };
        results: {
          ruleId: string;
          level: string;
          locations: {
            physicalLocation: { artifactLocation: { uri: string }; region?: { startLine: number } };
          }[];
        }[];
      }[];
    };

    const require = createRequire(import.meta.url);
    const schemaPath = require.resolve('schemastore/schemas/json/sarif-2.1.0.json');
    const schema = JSON.parse(await readFile(schemaPath, 'utf8')) as object;
    // unicodeRegExp off: the published schema's `language` pattern has a stray `]`, an error
    // only under the `u` flag (JSON Schema's patterns are ECMA-262 without it).
    const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    expect(validate(sarif), JSON.stringify(validate.errors, null, 2)).toBe(true);

    const findings = (JSON.parse(json.stdout) as { findings: object[] }).findings;
    const [run] = sarif.runs;
    expect(run!.results).toHaveLength(findings.length);
    expect(run!.tool.driver.name).toBe('Grove');
    const byRule = Object.fromEntries(run!.results.map((result) => [result.ruleId, result]));
    expect(byRule['orphaned_glob']).toMatchObject({
      level: 'error',
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: '.notarai/auth.spec.yaml' },
            region: { startLine: 14 },
          },
        },
      ],
    });
    expect(byRule['coverage_gap']).toMatchObject({
      level: 'warning',
      locations: [{ physicalLocation: { artifactLocation: { uri: 'docs/my%20notes.md' } } }],
    });
    for (const result of run!.results) {
      expect(run!.tool.driver.rules.map((rule) => rule.id)).toContain(result.ruleId);
    }
  });

  it('names a lint finding by its rule (L009: an old schema_version)', async () => {
    const root = await project({
      ...CLEAN,
      '.notarai/auth.spec.yaml': CLEAN['.notarai/auth.spec.yaml']!.replace("'0.8'", "'0.5'"),
    });
    const sarif = JSON.parse((await inProcess('check', '--format', 'sarif', root)).stdout) as {
      runs: { results: { ruleId: string }[] }[];
    };
    expect(sarif.runs[0]!.results.map((result) => result.ruleId)).toContain('L009');
  });
});

describe('grove score', () => {
  it("prints NotarAI's JSON: scores as floats with 2 decimals, keys sorted; exit 0", async () => {
    const root = await project(CLEAN);
    const run = await grove(root, 'score', '--format', 'json');
    expect(run.code).toBe(0);
    const parsed = JSON.parse(run.stdout) as {
      overall: { score: number; status: string };
      specs: { spec_path: string; score: number; status: string }[];
    };
    expect(Object.keys(parsed)).toEqual(['overall', 'specs']);
    expect(parsed.specs.map((spec) => spec.spec_path)).toEqual(['.notarai/auth.spec.yaml']);
    // No cache database: every governed file counts as changed (0.30) and 30 days (0.20 * 30/90).
    expect(parsed.specs[0]!.score).toBe(0.37);
    expect(run.stdout).toMatch(/"score": \d+\.\d+/);
  });

  it('prints the human table and the overall status', async () => {
    const run = await inProcess('score', await project(CLEAN));
    expect(run.stdout).toMatch(/^Spec {41} Score {3}Status\n-{65}\n/);
    expect(run.stdout).toMatch(
      /\.notarai\/auth\.spec\.yaml +0\.37 +review\n\nOverall: 0\.37 \(review\)\n$/,
    );
  });
});

describe('grove score and export-context: specs that cannot be read', () => {
  // Broken YAML: an unclosed flow sequence on line 2.
  const BROKEN = { '.notarai/broken.spec.yaml': "schema_version: '0.8'\nintent: [unclosed\n" };
  const BROKEN_WARNING =
    /^warning: \.notarai\/broken\.spec\.yaml:\d+: spec does not parse, left out: .+\n$/;

  it('score: a worktree whose every spec fails exits 1, says so, naming each (not "No specs found.")', async () => {
    const root = await project({ ...BROKEN, 'src/auth.ts': 'x\n' });
    const human = await inProcess('score', root);
    expect(human).toMatchObject({
      code: 1,
      stdout: 'No specs could be scored: 1 spec could not be read.\n',
    });
    expect(human.stderr).toMatch(BROKEN_WARNING);
    // A CI job on the real command fails; the JSON keeps NotarAI's keys and claims no status
    // (NotarAI prints none: it stops at the spec); the warning goes to stderr all the same.
    const json = await grove(root, 'score', '--format', 'json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ overall: { score: null, status: null }, specs: [] });
    expect(json.stderr).toMatch(BROKEN_WARNING);
  });

  it('score: with some specs read, the table and a line on the others; exit 1 all the same', async () => {
    const root = await project({ ...CLEAN, ...BROKEN });
    const run = await inProcess('score', root);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /auth\.spec\.yaml +0\.37 +review\n\nOverall: 0\.37 \(review\)\nNot scored: 1 spec could not be read\.\n$/,
    );
    expect(run.stderr).toMatch(BROKEN_WARNING);
    // The JSON is NotarAI's for the specs scored; the exit code and stderr say the rest.
    const json = await inProcess('score', '--format', 'json', root);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      overall: { score: 0.37, status: 'review' },
      specs: [{ spec_path: '.notarai/auth.spec.yaml' }],
    });
    // check fails on the same spec (spec_invalid, critical): the two agree.
    expect(await inProcess('check', root)).toMatchObject({ code: 1 });
    // --spec reads that spec only, as NotarAI: the broken one does not matter.
    expect(await inProcess('score', '--spec', '.notarai/auth.spec.yaml', root)).toMatchObject({
      code: 0,
      stderr: '',
    });
    const broken = await inProcess('score', '--spec', '.notarai/broken.spec.yaml', root);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^Error: .*broken\.spec\.yaml/);
  });

  it('score: a worktree with no spec at all keeps NotarAI\'s "No specs found."', async () => {
    const run = await inProcess(
      'score',
      await project({ '.notarai/notes.md': 'no spec yet\n', 'src/a.ts': 'x\n' }),
    );
    expect(run).toMatchObject({ code: 0, stdout: 'No specs found.\n', stderr: '' });
  });

  it('export-context --all: a spec that cannot be read is named on stderr, not skipped silently', async () => {
    const root = await project({ ...BROKEN, 'src/auth.ts': 'x\n' });
    await git(root, 'checkout', '-q', '-b', 'feature');
    await writeFiles(root, { 'src/auth.ts': 'y\n' });
    const json = await inProcess('export-context', '--all', '--format', 'json', root);
    expect(json).toMatchObject({ code: 0, stdout: '[]\n' });
    expect(json.stderr).toMatch(BROKEN_WARNING);
    const markdown = await inProcess('export-context', '--all', root);
    expect(markdown).toMatchObject({ code: 0, stdout: '' });
    expect(markdown.stderr).toMatch(BROKEN_WARNING);
  });
});

describe('grove export-context', () => {
  async function branchWithChange(): Promise<string> {
    const root = await project(CLEAN);
    await git(root, 'checkout', '-q', '-b', 'feature');
    await writeFiles(root, { 'src/auth.ts': 'export const auth = 2;\n' });
    return root;
  }

  it('--all --format json: one object for one context, with the diff of its changed files', async () => {
    const root = await branchWithChange();
    const base = 'main';
    const run = await grove(
      root,
      'export-context',
      '--all',
      '--base-branch',
      base,
      '--format',
      'json',
    );
    expect(run.code).toBe(0);
    const context = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(context)).toEqual([
      'base_branch',
      'binary_changes',
      'changed_files',
      'diff',
      'file_categories',
      'spec_content',
      'spec_name',
      'spec_path',
    ]);
    expect(context).toMatchObject({
      spec_path: '.notarai/auth.spec.yaml',
      spec_name: 'auth.spec',
      changed_files: ['src/auth.ts'],
      base_branch: base,
    });
    expect(context['diff']).toContain('+export const auth = 2;');
  });

  it("markdown is the reconcile prompt NotarAI's skill parses", async () => {
    const root = await branchWithChange();
    const base = 'main';
    const run = await inProcess('export-context', '--all', '--base-branch', base, root);
    expect(run.stdout).toMatch(/^# Reconciliation: auth\.spec\n\n## Spec Content\n\n```yaml\n/);
    expect(run.stdout).toContain('## Changed Files');
    expect(run.stdout).toContain('- `src/auth.ts`');
  });

  it("needs exactly one of --spec, --all or --bootstrap (exit 1, NotarAI's message)", async () => {
    const run = await inProcess('export-context', await project(CLEAN));
    expect(run).toMatchObject({
      code: 1,
      stderr: 'Error: specify exactly one of --spec <path>, --all, or --bootstrap.\n',
    });
  });

  it('no affected spec: an empty JSON list', async () => {
    const root = await project(CLEAN);
    const base = 'main';
    const run = await inProcess(
      'export-context',
      '--all',
      '--base-branch',
      base,
      '--format',
      'json',
      root,
    );
    expect(run).toMatchObject({ code: 0, stdout: '[]\n' });
  });
});

describe('the worktree path argument', () => {
  it('checks the worktree given instead of the current directory', async () => {
    const root = await project(CLEAN);
    const run = await grove(path.dirname(root), 'check', root);
    expect(run).toMatchObject({ code: 0, stdout: 'All checks passed.\n' });
  });
});

describe('grove check and score: text from the worktree on a terminal', () => {
  it('writes control characters of committed names and spec text as \\u escapes, never raw', async () => {
    const ESC = '\u001b';
    const root = await project({
      '.notarai/a.spec.yaml':
        SPEC_HEADER +
        'behaviors:\n' +
        `  - name: "evil\\u001b]52;c;cm0gLXJmIH4=\\u0007\\rAll checks passed."\n` +
        '    given: a\n    then: b\n' +
        `  - name: two\n    given: a\n    then: b\n    tested_by:\n      - path: "t\\u001b[2J"\n` +
        `"\\u001b]0;title\\u0007": 1\n` +
        'artifacts:\n  code:\n    - path: src/**\n',
      'src/a.ts': 'x\n',
      [`o${ESC}[32mgreen.ts`]: 'x\n',
    });
    const check = await grove(root, 'check');
    const score = await grove(root, 'score');
    // The findings are there, each hostile character shown as text.
    expect(check.stdout).toContain('o\\u001b[32mgreen.ts');
    expect(check.stdout).toContain('t\\u001b[2J');
    expect(check.stdout).toContain(
      "evil\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u000dAll checks passed.'",
    );
    expect(check.stderr).toContain('\\u001b]0;title\\u0007');
    for (const text of [check.stdout, check.stderr, score.stdout, score.stderr]) {
      // eslint-disable-next-line no-control-regex
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    }
    // --format json keeps the text as it is (JSON escapes it).
    const json = await grove(root, 'check', '--format', 'json');
    const paths = (
      JSON.parse(json.stdout) as { findings: { file_path: string | null }[] }
    ).findings.map((finding) => finding.file_path);
    expect(paths).toContain(`o${ESC}[32mgreen.ts`);
  });

  it('writes bidi, isolate, zero-width characters and U+2028/2029 of names as \\u escapes', async () => {
    // A file named `a<RLO>gnp.exe` shows as `aexe.png`; a zero-width space or a BOM makes two
    // names look the same; U+2028 ends a line in some terminals and viewers.
    const hidden = [
      '\u202a',
      '\u202e',
      '\u2066',
      '\u2069',
      '\u200b',
      '\u200f',
      '\ufeff',
      '\u2060',
      '\u2028',
    ];
    const escaped = (text: string) =>
      text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const specPath = `.notarai/sp\u2069ec\u2029.spec.yaml`;
    const root = await project({
      [specPath]:
        SPEC_HEADER +
        `behaviors:\n  - name: "b\\u202e\\u200d"\n    given: a\n    then: b\n` +
        'artifacts:\n  code:\n    - path: src/**\n',
      'src/a.ts': 'x\n',
      ...Object.fromEntries(hidden.map((c, i) => [`o${i}${c}gnp.exe`, 'x\n'])),
    });
    await git(root, 'checkout', '-q', '-b', 'feature');
    await writeFiles(root, { 'src/a.ts': 'y\n' });
    const check = await grove(root, 'check');
    const score = await grove(root, 'score');
    const exported = await grove(root, 'export-context', '--all', '--base-branch', 'main');
    for (const [i, c] of hidden.entries())
      expect(check.stdout).toContain(escaped(`o${i}${c}gnp.exe`));
    expect(check.stdout).toContain(escaped(specPath));
    expect(check.stdout).toContain('b\\u202e\\u200d');
    expect(score.stdout).toContain(escaped(specPath));
    // export-context: the spec's name is quoted in its heading, as git quotes paths.
    expect(exported.stdout).toContain(
      '# Reconciliation: `"sp\\342\\201\\251ec\\342\\200\\251.spec"`\n',
    );
    const all = [check, score, exported].flatMap((run) => [run.stdout, run.stderr]).join('');
    expect(all).not.toMatch(new RegExp(`[${hidden.join('')}\u2029\u200d]`));
  });
});
