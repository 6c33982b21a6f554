// NotarAI fidelity (issue 16): each place a NotarAI user would trip over, as a test on a fixture
// repository whose name states what NotarAI does (read from NotarAI's source: the file is named in
// each describe), and a larger fixture in the shapes NotarAI's own specs use, whose governed file
// set per spec is checked against NotarAI's rules. docs/notarai-compatibility.md lists where Grove
// still differs on purpose.
import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { git, makeTempDir, makeTempRepo, writeFiles } from '../../testing/temp-repo.ts';
import { GROVE_VERSION } from '../../platform/version.ts';
import { CACHE_DB, FILE_CACHE_DDL, NOTARAI_CREATE_TABLE, STATS_DB } from '../floor/hash-cache.ts';
import { compareUtf8, sortedUtf8 } from '../../platform/path-order.ts';
import { ReconcileEngine, STATE_FILE } from '../reconcile-engine.ts';
import { createReconcileTools } from '../../tools/reconcile-tools.ts';
import { parseSpecText } from '../specs/spec-validate.ts';
import type { ValidSpec } from '../specs/spec-loader.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function repoWith(
  files: Record<string, string | Buffer>,
  branch = 'feature',
): Promise<{ root: string; engine: ReconcileEngine }> {
  const repo = await makeTempRepo(files);
  cleanups.push(() => repo.cleanup());
  await git(repo.root, 'checkout', '-q', '-b', branch);
  const engine = new ReconcileEngine({ root: repo.root });
  cleanups.push(() => engine.close());
  return { root: repo.root, engine };
}

const behaviors = [{ name: 'b', given: 'g', then: 't' }];
const spec = (body: Record<string, unknown>): string =>
  stringify({ schema_version: '0.7', intent: 'x', behaviors, ...body });

// ---- 1. exclude ---------------------------------------------------------------------------------

describe('1. exclude (NotarAI src/core/check.rs, spec_loader.rs: coverage only)', () => {
  it("NotarAI never removes a file listed under artifacts because it matches the spec's exclude: every tool governs it", async () => {
    const { root, engine } = await repoWith({
      '.notarai/system.spec.yaml': spec({
        exclude: ['.claude/**', 'img/**'],
        artifacts: {
          configs: [{ path: '.claude/rules/*.md' }, { path: 'CLAUDE.md' }],
          assets: [{ path: 'img/logo.txt' }],
        },
      }),
      '.claude/rules/style.md': 'style\n',
      '.claude/settings.json': '{}\n',
      'CLAUDE.md': 'claude\n',
      'img/logo.txt': 'logo\n',
      'img/other.txt': 'other\n',
    });
    const SYSTEM = '.notarai/system.spec.yaml';
    await writeFiles(root, {
      '.claude/rules/style.md': 'style, edited\n',
      'img/logo.txt': 'new\n',
    });
    const governed = ['.claude/rules/style.md', 'CLAUDE.md', 'img/logo.txt'];

    const affected = await engine.listAffectedSpecs('main');
    expect(affected.affected_specs.map((entry) => entry.spec_path)).toEqual([SYSTEM]);
    const diff = await engine.getSpecDiff({ spec_path: SYSTEM, base_branch: 'main' });
    expect(diff.files).toEqual(governed);
    expect(diff.diff).toContain('+style, edited');
    expect(diff.file_categories).toEqual({
      '.claude/rules/style.md': 'configs',
      'CLAUDE.md': 'configs',
      'img/logo.txt': 'assets',
    });
    const artifacts = await engine.getChangedArtifacts({ spec_path: SYSTEM });
    expect(artifacts.changed_artifacts).toEqual(governed);
    const configs = await engine.getChangedArtifacts({
      spec_path: SYSTEM,
      artifact_type: 'configs',
    });
    expect(configs.changed_artifacts).toEqual(['.claude/rules/style.md', 'CLAUDE.md']);
    const state = await engine.computeState('main');
    expect(state.specs[0]).toMatchObject({ governedFiles: 3, affectedFiles: 2 });
  });
});

// ---- 2. top-level keys of every schema version --------------------------------------------------

/** A valid value for each top-level key of NotarAI's schemas. */
const VALUES: Record<string, unknown> = {
  intent: 'x',
  artifacts: { code: [{ path: 'src/**', role: 'r', source: 's' }] },
  behaviors,
  constraints: ['c'],
  invariants: ['i'],
  decisions: [{ date: '2026-03-05', choice: 'c', rationale: 'r' }],
  open_questions: ['q'],
  subsystems: [{ $ref: './a.spec.yaml' }],
  applies: [{ $ref: './b.spec.yaml' }],
  dependencies: [{ $ref: './c.spec.yaml', relationship: 'reads' }],
  exclude: ['img/**'],
  coverage: { policy: 'warn', message: 'm' },
  notes: 'n',
  domain: 'software',
  tier: 'full',
  sync_policy: { on_code_change: 'notify_only', on_doc_change: 'notify_only' },
  output: { type: 'app', format: 'html', runtime: 'browser', entry_point: 'src/index.ts' },
  content: { structure: 'ordered', sections: [{ id: 'intro', intent: 'hook' }] },
  states: { initial: 'a', definitions: [{ id: 'a', transitions: [{ to: 'b', on: 'go' }] }] },
  design: { theme: { palette: ['#fff'] }, layout: { type: 'grid', dimensions: '16:9' } },
  audience: { role: 'developers', accessibility: ['WCAG AA'] },
  variants: [{ id: 'v', overrides: { 'audience.role': 'investors' } }],
  pipeline: { steps: [{ name: 'build', tool: 'make' }] },
  feedback: { metrics: [{ name: 'm' }], reconciliation_trigger: 'weekly' },
  compliance: { frameworks: [{ name: 'SOC2', controls: [{ id: 'CC6.1' }] }] },
  variants_resolved: true,
};

/** The top-level keys of each schema NotarAI shipped (schemas/0.5, 0.6, notarai.spec.json...). */
const KEYS_04 = [
  'schema_version',
  'intent',
  'artifacts',
  'behaviors',
  'constraints',
  'invariants',
  'decisions',
  'open_questions',
  'subsystems',
  'applies',
  'dependencies',
  'exclude',
  'coverage',
  'notes',
  'domain',
  'tier',
  'sync_policy',
];
const KEYS_05 = KEYS_04.filter((key) => key !== 'sync_policy');
const KEYS_06 = [
  ...KEYS_05,
  'output',
  'content',
  'states',
  'design',
  'audience',
  'variants',
  'pipeline',
  'feedback',
];
const KEYS_07 = [...KEYS_06, 'compliance', 'variants_resolved'];
const KEYS: Record<string, string[]> = {
  '0.4': KEYS_04,
  '0.5': KEYS_05,
  '0.6': KEYS_06,
  '0.7': KEYS_07,
  '0.8': KEYS_07,
};

function specWith(version: string, keys: readonly string[]): string {
  const body: Record<string, unknown> = { schema_version: version };
  for (const key of keys) if (key !== 'schema_version') body[key] = VALUES[key];
  return stringify(body);
}

function errorsOf(text: string): string[] {
  const loaded = parseSpecText('.notarai/x.spec.yaml', text);
  return loaded.ok ? [] : loaded.errors.map((error) => error.message);
}

describe('2. top-level keys (NotarAI schemas/0.5, schemas/0.6, notarai.spec.json 0.7 and 0.8)', () => {
  it('NotarAI accepts every top-level key of every schema version it shipped, variants_resolved included', () => {
    for (const [version, keys] of Object.entries(KEYS)) {
      expect(errorsOf(specWith(version, keys)), version).toEqual([]);
    }
    const loaded = parseSpecText('.notarai/x.spec.yaml', specWith('0.7', KEYS_07));
    expect(loaded.ok && loaded.spec).toMatchObject({ variants_resolved: true });
  });

  it("NotarAI checks a '0.5' to '0.8' spec against its one bundled 0.8 schema, so a '0.5' spec may use 0.7's keys and 0.8's tested_by", () => {
    expect(errorsOf(specWith('0.5', KEYS_07))).toEqual([]);
    const tested = stringify({
      schema_version: '0.6',
      intent: 'x',
      artifacts: {},
      behaviors: [
        { name: 'b', given: 'g', then: 't', tested_by: [{ path: 'tests/a.rs', assertion: 'a' }] },
      ],
      decisions: [{ date: '2026-04-14', choice: 'c', status: 'accepted', related_files: ['a'] }],
    });
    expect(errorsOf(tested)).toEqual([]);
  });

  it('NotarAI closes every block its schema closes and checks dates (format: date)', () => {
    expect(errorsOf(`${specWith('0.8', KEYS_07)}owner: me\n`)).toEqual([
      "unknown top-level key 'owner' (not part of the NotarAI spec format)",
    ]);
    const nested = stringify({
      ...VALUES,
      schema_version: '0.8',
      sync_policy: undefined,
      audience: { role: 'r', mood: 'happy' },
      dependencies: [{ $ref: './c.spec.yaml' }],
      decisions: [{ date: 'March 2026', choice: 'c' }],
    });
    expect(errorsOf(nested)).toEqual([
      `decisions[0].date: must be a date written YYYY-MM-DD (format 'date'), got "March 2026"`,
      "missing required key 'relationship' in dependencies[0]",
      "unknown key 'mood' in audience",
    ]);
  });
});

// ---- 3. schema versions -------------------------------------------------------------------------

describe('3. schema versions (NotarAI src/core/validator.rs, schema_bump.rs; tags v0.1.0 to v0.5.0)', () => {
  const OLD = `schema_version: '0.4'
intent: An old spec.
sync_policy:
  on_code_change: propose_spec_update
artifacts:
  code:
    - path: src/**
behaviors:
  - name: b
    given: g
    then: t
`;

  it("NotarAI's MCP tools read a '0.4' spec (its CLI rejects it since v0.2.0): Grove accepts it against the 0.4 schema and warns that it is deprecated", async () => {
    const { root, engine } = await repoWith({ '.notarai/old.spec.yaml': OLD, 'src/a.ts': 'a\n' });
    await writeFiles(root, { 'src/a.ts': 'b\n' });
    const affected = await engine.listAffectedSpecs('main');
    expect(affected.affected_specs.map((entry) => entry.spec_path)).toEqual([
      '.notarai/old.spec.yaml',
    ]);
    expect(affected.spec_errors).toEqual([]);
    const warning = expect.stringMatching(
      /^\.notarai\/old\.spec\.yaml:1: schema_version '0\.4' is deprecated: NotarAI's CLI validates only '0\.5', '0\.6', '0\.7', '0\.8'/,
    );
    expect(affected.warnings).toEqual([warning]);
    const diff = await engine.getSpecDiff({
      spec_path: '.notarai/old.spec.yaml',
      base_branch: 'main',
    });
    expect(diff.files).toEqual(['src/a.ts']);
    expect(diff.warnings).toEqual([warning]);
    const state = await engine.computeState('main');
    expect(state.totals.invalidSpecs).toBe(0);
    expect(state.warnings).toEqual([warning]);
  });

  it("each deprecated version is checked against its own schema: '0.4' knows neither 0.6's blocks nor tier 'derived', and needs behaviors for every tier", () => {
    expect(errorsOf(specWith('0.4', [...KEYS_04, 'compliance']))).toEqual([
      "top-level key 'compliance' needs schema_version '0.7' or later (this spec says '0.4')",
    ]);
    expect(errorsOf(specWith('0.4', [...KEYS_04, 'output']))).toEqual([
      "top-level key 'output' needs schema_version '0.6' or later (this spec says '0.4')",
    ]);
    const registered = "schema_version: '0.4'\nintent: x\ntier: registered\nartifacts: {}\n";
    expect(errorsOf(registered)).toEqual([
      "missing required key 'behaviors' (the 0.4 schema requires it for every tier)",
    ]);
    expect(errorsOf(registered.replace("'0.4'", "'0.5'"))).toEqual([]);
    expect(errorsOf(specWith('0.5', KEYS_04))).toEqual([
      "top-level key 'sync_policy' exists only in schema 0.4 and was removed after it (this spec says '0.5')",
    ]);
  });

  it("NotarAI's bundled schema lists the versions it reads: anything else is an error naming all of them", () => {
    for (const version of ['0.3', '0.9', '1.0']) {
      expect(errorsOf(specWith(version, KEYS_05))).toEqual([
        "schema_version must be one of '0.4', '0.5', '0.6', '0.7', '0.8'",
      ]);
    }
  });
});

// ---- 4. get_changed_artifacts with an undeclared category ---------------------------------------

describe('4. artifact_type (NotarAI src/core/spec_loader.rs expand_artifact_type_globs)', () => {
  it('NotarAI returns an empty list for an artifact_type the spec does not declare (Grove adds a warning naming the categories)', async () => {
    const { engine } = await repoWith({
      '.notarai/app.spec.yaml': spec({ artifacts: { code: [{ path: 'src/**' }] } }),
      'src/a.ts': 'a\n',
    });
    const result = await engine.getChangedArtifacts({
      spec_path: '.notarai/app.spec.yaml',
      artifact_type: 'tests',
    });
    expect(result.changed_artifacts).toEqual([]);
    expect(result.spec_invalidated).toEqual([]);
    expect(result.warnings).toEqual([
      'spec .notarai/app.spec.yaml has no artifact category "tests", so nothing is listed; its categories: code',
    ]);
  });
});

// ---- 5. detached HEAD ---------------------------------------------------------------------------

describe('5. the state file (NotarAI src/core/state.rs: git_hash and branch are Option<String>)', () => {
  it('NotarAI writes "branch": null when HEAD is detached', async () => {
    const { root, engine } = await repoWith({ 'src/a.ts': 'a\n' });
    await git(root, 'checkout', '-q', '--detach');
    const head = (await git(root, 'rev-parse', 'HEAD')).trim();
    const result = await engine.snapshotState();
    expect(result.git_hash).toBe(head);
    const state = JSON.parse(await readFile(path.join(root, STATE_FILE), 'utf8')) as {
      last_reconciliation: Record<string, unknown>;
    };
    expect(state.last_reconciliation).toEqual({
      timestamp: expect.stringMatching(/^\d+Z$/),
      git_hash: head,
      branch: null,
    });
  });

  it('NotarAI writes "git_hash": null on an unborn branch (and answers git_hash "")', async () => {
    const root = await makeTempDir();
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await git(root, 'init', '-q', '-b', 'trunk');
    const engine = new ReconcileEngine({ root });
    cleanups.push(() => engine.close());
    const result = await engine.snapshotState();
    expect(result).toMatchObject({ git_hash: '', files: 0, specs: 0 });
    const text = await readFile(path.join(root, STATE_FILE), 'utf8');
    expect(JSON.parse(text)).toMatchObject({
      last_reconciliation: { git_hash: null, branch: 'trunk' },
    });
    // serde_json's pretty printer: two spaces, `{}` for an empty map, a final newline.
    expect(text).toContain('\n  "file_fingerprints": {},\n  "spec_fingerprints": {}\n}\n');
  });
});

// ---- 6. order -----------------------------------------------------------------------------------

describe('6. order (NotarAI: BTreeMap and serde_json maps, git output: UTF-8 byte order)', () => {
  // U+FF01 (full-width "!", UTF-8 EF BC 81) sorts before U+1F600 (F0 9F 98 80) by bytes, after it
  // by UTF-16 code units (0xFF01 > 0xD83D).
  const WIDE = 'src/\uff01.ts';
  const EMOJI = 'src/\u{1f600}.ts';
  const PLAIN = 'src/z.ts';

  it('compareUtf8 is code point order (= UTF-8 bytes), unlike the default sort', () => {
    expect([EMOJI, WIDE, PLAIN].sort()).toEqual([PLAIN, EMOJI, WIDE]);
    expect(sortedUtf8([EMOJI, WIDE, PLAIN])).toEqual([PLAIN, WIDE, EMOJI]);
    const bytes = (text: string) => Buffer.from(text, 'utf8');
    const samples = ['a', 'é', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{1f600}', 'ab', ''];
    const byBytes = [...samples].sort((a, b) => Buffer.compare(bytes(a), bytes(b)));
    expect(sortedUtf8(samples)).toEqual(byBytes);
    expect(compareUtf8('a', 'a')).toBe(0);
  });

  it('NotarAI lists paths, categories and state fingerprints in UTF-8 byte order', async () => {
    const { root, engine } = await repoWith({
      '.notarai/app.spec.yaml': spec({
        artifacts: {
          // Both categories govern every file: NotarAI names the first in its BTreeMap, by bytes.
          '\u{1f600}code': [{ path: 'src/*' }],
          '\uff01code': [{ path: 'src/*' }],
        },
      }),
      [PLAIN]: 'z\n',
    });
    await writeFiles(root, { [WIDE]: 'wide\n', [EMOJI]: 'emoji\n', [PLAIN]: 'z2\n' });
    const affected = await engine.listAffectedSpecs('main');
    expect(affected.changed_files).toEqual([PLAIN, WIDE, EMOJI]);
    const diff = await engine.getSpecDiff({
      spec_path: '.notarai/app.spec.yaml',
      base_branch: 'main',
    });
    expect(diff.files).toEqual([PLAIN, WIDE, EMOJI]);
    expect(Object.values(diff.file_categories)).toEqual(['\uff01code', '\uff01code', '\uff01code']);
    expect(diff.diff.indexOf(WIDE)).toBeLessThan(diff.diff.indexOf(EMOJI));
    await engine.markReconciled([EMOJI, WIDE, PLAIN]);
    await engine.snapshotState();
    const state = JSON.parse(await readFile(path.join(root, STATE_FILE), 'utf8')) as {
      file_fingerprints: Record<string, unknown>;
    };
    expect(Object.keys(state.file_fingerprints)).toEqual([PLAIN, WIDE, EMOJI]);
  });
});

// ---- 7. diff text -------------------------------------------------------------------------------

describe('7. diff text (NotarAI src/core/mcp_tools.rs: diff.lines() joined with "\\n")', () => {
  it("NotarAI's diff is git diff's text without its final newline", async () => {
    const { root, engine } = await repoWith({
      '.notarai/app.spec.yaml': spec({ artifacts: { code: [{ path: 'src/**' }] } }),
      'src/a.ts': 'one\ntwo\n',
    });
    await writeFiles(root, { 'src/a.ts': 'one\nthree\n' });
    const gitDiff = await git(root, 'diff', 'main', '--', 'src/a.ts');
    expect(gitDiff.endsWith('\n')).toBe(true);
    const result = await engine.getSpecDiff({
      spec_path: '.notarai/app.spec.yaml',
      base_branch: 'main',
    });
    expect(result.diff).toBe(gitDiff.slice(0, -1));
  });
});

// ---- 8. the cache -------------------------------------------------------------------------------

describe('8. the cache (NotarAI src/core/cache.rs open_cache_db, and each tool that calls it)', () => {
  const APP = '.notarai/app.spec.yaml';
  const NOTHING = '.notarai/nothing.spec.yaml';

  async function fixture() {
    return repoWith({
      [APP]: spec({ artifacts: { code: [{ path: 'src/**' }] } }),
      [NOTHING]: spec({ artifacts: { data: [{ path: 'data/**' }] } }),
      'src/a.ts': 'a\n',
    });
  }

  it('NotarAI creates notarai.db in get_spec_diff (not with bypass_cache, not for a spec that governs nothing), get_changed_artifacts, mark_reconciled and snapshot_state only', async () => {
    const { root, engine } = await fixture();
    const created = async (call: () => Promise<unknown>): Promise<boolean> => {
      await engine.clearCache();
      await call();
      return engine.cache.exists();
    };
    expect(await created(() => engine.listAffectedSpecs('main'))).toBe(false);
    expect(
      await created(() =>
        engine.getSpecDiff({ spec_path: APP, base_branch: 'main', bypass_cache: true }),
      ),
    ).toBe(false);
    expect(
      await created(() => engine.getSpecDiff({ spec_path: NOTHING, base_branch: 'main' })),
    ).toBe(false);
    expect(await created(() => engine.computeState('main'))).toBe(false);
    expect(await created(() => engine.clearCache())).toBe(false);
    expect(await created(() => engine.getSpecDiff({ spec_path: APP, base_branch: 'main' }))).toBe(
      true,
    );
    expect(await created(() => engine.getChangedArtifacts({ spec_path: NOTHING }))).toBe(true);
    expect(await created(() => engine.markReconciled([]))).toBe(true);
    expect(await created(() => engine.snapshotState())).toBe(true);
    expect(await readFile(path.join(root, '.notarai/.cache/.gitignore'), 'utf8')).toContain('*');
  });

  it("NotarAI's notarai.db holds its one table, created by its own statement: Grove's reads and writes add nothing to it", async () => {
    const { root, engine } = await fixture();
    await engine.markReconciled(['src/a.ts', APP]);
    await writeFiles(root, { 'src/a.ts': 'changed\n' });
    // Every read-only call records stat rows (Grove's fast path): none of them lands in notarai.db.
    await engine.getSpecDiff({ spec_path: APP, base_branch: 'main' });
    await engine.getChangedArtifacts({ spec_path: APP });
    await engine.computeState('main');
    engine.close();
    const db = new Database(path.join(root, CACHE_DB), { readonly: true });
    cleanups.push(() => {
      db.close();
    });
    expect(db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all()).toEqual([
      { type: 'table', name: 'file_cache', sql: FILE_CACHE_DDL },
      { type: 'index', name: 'sqlite_autoindex_file_cache_1', sql: null },
    ]);
    // The schema NotarAI's own CLI leaves in a database it creates.
    const notarai = new Database(':memory:');
    notarai.exec(NOTARAI_CREATE_TABLE);
    expect(
      notarai.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all(),
    ).toEqual(db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all());
    notarai.close();
    const stats = new Database(path.join(root, STATS_DB), { readonly: true });
    cleanups.push(() => {
      stats.close();
    });
    expect(
      stats.prepare('SELECT path FROM grove_stat_cache ORDER BY path').pluck().all(),
    ).toContain('src/a.ts');
  });
});

// ---- 9. cli_version -----------------------------------------------------------------------------

describe('9. cli_version (NotarAI src/core/state.rs: Option<String>, written, never compared)', () => {
  it("snapshot_state writes package.json's version as cli_version, from the one source Grove's version comes from", async () => {
    const packageJson = JSON.parse(
      readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(GROVE_VERSION).toBe(packageJson.version);
    const { root, engine } = await repoWith({});
    await engine.snapshotState();
    const state = JSON.parse(await readFile(path.join(root, STATE_FILE), 'utf8')) as {
      cli_version: string;
    };
    expect(state.cli_version).toBe(packageJson.version);
  });
});

// ---- 10. keys NotarAI does not have -------------------------------------------------------------

describe('10. Grove additions (NotarAI get_spec_diff: `git diff <base> -- <files>`)', () => {
  it("NotarAI's files are the governed files present on disk that differ from the cache; Grove adds deleted_files, and hunks for untracked and deleted files that NotarAI's git diff cannot show", async () => {
    const { root, engine } = await repoWith({
      '.notarai/app.spec.yaml': spec({ artifacts: { code: [{ path: 'src/**' }] } }),
      'src/kept.ts': 'kept\n',
      'src/gone.ts': 'gone\n',
    });
    await rm(path.join(root, 'src/gone.ts'));
    await writeFiles(root, { 'src/new.ts': 'untracked\n' });
    const result = await engine.getSpecDiff({
      spec_path: '.notarai/app.spec.yaml',
      base_branch: 'main',
    });
    expect(result.files).toEqual(['src/kept.ts', 'src/new.ts']);
    expect(result.deleted_files).toEqual(['src/gone.ts']);
    expect(result.diff).toContain('diff --git a/src/gone.ts b/src/gone.ts\ndeleted file mode');
    expect(result.diff).toContain('diff --git a/src/new.ts b/src/new.ts\nnew file mode');
    expect(result.diff).not.toContain('src/kept.ts');
  });

  it('the tool reference names each key NotarAI does not have a Grove addition', () => {
    const tools = createReconcileTools(() => Promise.reject(new Error('not needed')));
    const described = (name: string, key: string): string => {
      const tool = tools.find((entry) => entry.name === name);
      const shape = (tool?.outputSchema as { shape?: Record<string, { description?: string }> })
        ?.shape;
      return shape?.[key]?.description ?? '';
    };
    expect(described('get_spec_diff', 'deleted_files')).toMatch(/^Grove addition/);
    expect(described('get_spec_diff', 'diff')).toMatch(/Grove addition/);
    expect(described('list_affected_specs', 'spec_errors')).toMatch(/^Grove addition/);
    expect(described('mark_reconciled', 'rejected')).toMatch(/^Grove addition/);
    for (const name of ['list_affected_specs', 'get_spec_diff', 'get_changed_artifacts']) {
      expect(described(name, 'warnings')).toMatch(/^Grove addition/);
    }
  });
});

// ---- 11. exclude_patterns -----------------------------------------------------------------------

describe('11. exclude_patterns (NotarAI: git `:(exclude)` pathspecs; Grove: its one glob matcher)', () => {
  it('a pattern without "/" excludes a file name at any depth, as NotarAI\'s "*.lock" pathspec does; one with "/" is anchored at the root', async () => {
    const files = {
      '.notarai/app.spec.yaml': spec({ artifacts: { code: [{ path: '**' }] } }),
      'yarn.lock': '1\n',
      'web/yarn.lock': '1\n',
      'Cargo.lock': '1\n',
      'crates/x/Cargo.lock': '1\n',
      'docs/a.md': '1\n',
      'docs/api/b.md': '1\n',
      'vendor/lib.js': '1\n',
      'src/keep.ts': '1\n',
    };
    const { root, engine } = await repoWith(files);
    const edited: Record<string, string> = {};
    for (const file of Object.keys(files)) if (!file.startsWith('.notarai')) edited[file] = '2\n';
    await writeFiles(root, edited);
    const diffed = async (patterns: string[]): Promise<string[]> => {
      const result = await engine.getSpecDiff({
        spec_path: '.notarai/app.spec.yaml',
        base_branch: 'main',
        exclude_patterns: patterns,
      });
      expect(result.excluded).toEqual(patterns);
      // Excluded files stay in `files` (README.md, from the fixture, did not change).
      expect(result.files).toEqual(sortedUtf8(['README.md', ...Object.keys(edited)]));
      return [...result.diff.matchAll(/^diff --git a\/(\S+) /gm)].map((match) => match[1] ?? '');
    };
    const all = sortedUtf8(Object.keys(edited));
    const without = (...gone: string[]) => all.filter((file) => !gone.includes(file));
    expect(await diffed(['*.lock'])).toEqual(
      without('yarn.lock', 'web/yarn.lock', 'Cargo.lock', 'crates/x/Cargo.lock'),
    );
    expect(await diffed(['Cargo.lock'])).toEqual(without('Cargo.lock', 'crates/x/Cargo.lock'));
    expect(await diffed(['./Cargo.lock'])).toEqual(without('Cargo.lock'));
    expect(await diffed(['docs/*.md'])).toEqual(without('docs/a.md'));
    expect(await diffed(['docs/**'])).toEqual(without('docs/a.md', 'docs/api/b.md'));
    expect(await diffed(['vendor'])).toEqual(all);
    expect(await diffed(['vendor/**'])).toEqual(without('vendor/lib.js'));
  });
});

// ---- the shapes of NotarAI's own specs ----------------------------------------------------------

/**
 * A repository laid out like NotarAI's own (its .notarai/ at v0.5.0): a system spec with
 * subsystems (one of them with a subsystem of its own in a sub-directory), an `applies` style
 * spec, `exclude` beside explicit artifacts, many categories (standard and custom), dotfile paths.
 */
const NOTARAI_LIKE: Record<string, string> = {
  '.notarai/system.spec.yaml': spec({
    subsystems: [
      { $ref: './cli.spec.yaml' },
      { $ref: './docs.spec.yaml' },
      { $ref: './ci.spec.yaml' },
    ],
    applies: [{ $ref: './style.spec.yaml' }],
    exclude: [
      'img/**',
      '.claude/**',
      'docs/book/**',
      '.notarai/.cache/**',
      '.notarai/reconciliation_state.json',
    ],
    artifacts: {
      docs: [
        { path: 'README.md' },
        { path: 'CONTRIBUTING.md' },
        { path: 'docs/src/background/*.md' },
      ],
      configs: [
        { path: 'Cargo.toml' },
        { path: 'scripts/install.sh' },
        { path: 'CLAUDE.md' },
        { path: '.claude/rules/*.md' },
        { path: '.pre-commit-config.yaml' },
      ],
      assets: [{ path: 'img/NotarAI.png' }],
      specs: [{ path: '.notarai/*.spec.yaml' }],
    },
  }),
  '.notarai/cli.spec.yaml': spec({
    subsystems: [{ $ref: './cli/mcp.spec.yaml' }],
    artifacts: {
      code: [{ path: 'src/main.rs' }, { path: 'src/commands/*.rs' }, { path: 'src/core/*.rs' }],
      configs: [
        { path: 'Cargo.toml' },
        { path: 'notarai.spec.json' },
        { path: 'schemas/*/spec.schema.json' },
        { path: '.claude/rules/rust.md' },
      ],
      tests: [{ path: 'tests/**/*.rs' }],
      schemas: [{ path: 'schemas/**/*.json' }],
    },
  }),
  '.notarai/cli/mcp.spec.yaml': stringify({
    schema_version: '0.8',
    intent: 'The MCP server.',
    tier: 'registered',
    artifacts: {
      code: [{ path: 'src/commands/mcp.rs' }, { path: 'src/core/mcp_tools.rs' }],
      tests: [{ path: 'tests/mcp_test.rs', tier: 1 }],
    },
  }),
  '.notarai/docs.spec.yaml': spec({
    dependencies: [{ $ref: './cli.spec.yaml', relationship: 'documents' }],
    artifacts: {
      configs: [{ path: 'docs/book.toml' }],
      docs: [{ path: 'docs/src/SUMMARY.md' }, { path: 'docs/src/guides/*.md' }],
      notebooks: [{ path: 'docs/notebooks/*.ipynb' }],
      data: [{ path: 'docs/data/**/*.csv', source: 'hf://datasets/example' }],
    },
  }),
  '.notarai/ci.spec.yaml': spec({
    artifacts: {
      configs: [{ path: '.github/workflows/*.yml' }, { path: '.github/dependabot.yml' }],
    },
  }),
  '.notarai/style.spec.yaml': stringify({
    schema_version: '0.6',
    intent: 'Style.',
    tier: 'derived',
    artifacts: {
      code: [{ path: 'src/**/*.rs' }],
      docs: [{ path: 'docs/src/**/*.md' }, { path: 'templates/*.md' }],
      configs: [{ path: '.claude/rules/style.md' }],
    },
  }),
  'README.md': '# NotarAI-like\n',
  'CONTRIBUTING.md': 'c\n',
  'CLAUDE.md': 'c\n',
  'Cargo.toml': '[package]\n',
  'notarai.spec.json': '{}\n',
  '.pre-commit-config.yaml': 'repos: []\n',
  '.gitignore': 'src/generated/\n',
  '.claude/settings.json': '{}\n',
  '.claude/rules/rust.md': 'r\n',
  '.claude/rules/style.md': 's\n',
  '.claude/rules/testing.md': 't\n',
  '.github/workflows/ci.yml': 'ci\n',
  '.github/workflows/release.yml': 'release\n',
  '.github/dependabot.yml': 'd\n',
  'img/NotarAI.png': 'png\n',
  'img/other.png': 'png\n',
  'scripts/install.sh': 'sh\n',
  'scripts/install.ps1': 'ps1\n',
  'schemas/0.5/spec.schema.json': '{}\n',
  'schemas/0.6/spec.schema.json': '{}\n',
  'src/main.rs': 'fn main() {}\n',
  'src/commands/mcp.rs': 'm\n',
  'src/commands/init.rs': 'i\n',
  'src/core/mcp_tools.rs': 't\n',
  'src/core/cache.rs': 'c\n',
  'src/core/nested/deep.rs': 'd\n',
  'tests/mcp_test.rs': 't\n',
  'tests/common/mod.rs': 'm\n',
  'templates/notarai-readme.md': 't\n',
  'docs/book.toml': 'b\n',
  'docs/src/SUMMARY.md': 's\n',
  'docs/src/index.md': 'i\n',
  'docs/src/guides/spec-format.md': 'g\n',
  'docs/src/background/motivation.md': 'm\n',
  'docs/notebooks/explore.ipynb': '{}\n',
  'docs/data/2026/q1.csv': 'a,b\n',
  'docs/book/index.html': 'built\n',
};

/**
 * Each spec's governed files by NotarAI's rules (src/core/spec_loader.rs expand_artifact_globs:
 * the union of each artifact glob's expansion by the `glob` crate, where `*` stays within a path
 * component and `**` spans directories; `exclude` takes nothing away), worked out by hand.
 */
const NOTARAI_GOVERNED: Record<string, string[]> = {
  '.notarai/system.spec.yaml': [
    '.claude/rules/rust.md',
    '.claude/rules/style.md',
    '.claude/rules/testing.md',
    '.notarai/ci.spec.yaml',
    '.notarai/cli.spec.yaml',
    '.notarai/docs.spec.yaml',
    '.notarai/style.spec.yaml',
    '.notarai/system.spec.yaml',
    '.pre-commit-config.yaml',
    'CLAUDE.md',
    'CONTRIBUTING.md',
    'Cargo.toml',
    'README.md',
    'docs/src/background/motivation.md',
    'img/NotarAI.png',
    'scripts/install.sh',
  ],
  '.notarai/cli.spec.yaml': [
    '.claude/rules/rust.md',
    'Cargo.toml',
    'notarai.spec.json',
    'schemas/0.5/spec.schema.json',
    'schemas/0.6/spec.schema.json',
    'src/commands/init.rs',
    'src/commands/mcp.rs',
    'src/core/cache.rs',
    'src/core/mcp_tools.rs',
    'src/main.rs',
    'tests/common/mod.rs',
    'tests/mcp_test.rs',
  ],
  '.notarai/cli/mcp.spec.yaml': [
    'src/commands/mcp.rs',
    'src/core/mcp_tools.rs',
    'tests/mcp_test.rs',
  ],
  '.notarai/docs.spec.yaml': [
    'docs/book.toml',
    'docs/data/2026/q1.csv',
    'docs/notebooks/explore.ipynb',
    'docs/src/SUMMARY.md',
    'docs/src/guides/spec-format.md',
  ],
  '.notarai/ci.spec.yaml': [
    '.github/dependabot.yml',
    '.github/workflows/ci.yml',
    '.github/workflows/release.yml',
  ],
  '.notarai/style.spec.yaml': [
    '.claude/rules/style.md',
    'docs/src/SUMMARY.md',
    'docs/src/background/motivation.md',
    'docs/src/guides/spec-format.md',
    'docs/src/index.md',
    'src/commands/init.rs',
    'src/commands/mcp.rs',
    'src/core/cache.rs',
    'src/core/mcp_tools.rs',
    'src/core/nested/deep.rs',
    'src/generated/out.rs',
    'src/main.rs',
    'templates/notarai-readme.md',
  ],
};

/** NotarAI's glob expands over the disk; Grove governs only files git shows (the table says why). */
const IGNORED_BY_GIT = new Set(['src/generated/out.rs']);

describe("the shapes of NotarAI's own specs", () => {
  it("governs, per spec, exactly the files NotarAI's rules give (system spec with nested subsystems, exclude beside explicit artifacts, many categories, dotfiles)", async () => {
    const { root, engine } = await repoWith(NOTARAI_LIKE);
    // A build output git ignores, under a governed glob: NotarAI's glob finds it on disk.
    await writeFiles(root, { 'src/generated/out.rs': 'built\n' });

    const state = await engine.computeState('main');
    expect(state.specErrors).toEqual([]);
    expect(state.systemSpec).toBe('.notarai/system.spec.yaml');
    expect(state.specs.find((entry) => entry.isSystemSpec)?.subsystems).toEqual([
      '.notarai/cli.spec.yaml',
      '.notarai/docs.spec.yaml',
      '.notarai/ci.spec.yaml',
    ]);
    expect(
      state.specs.find((entry) => entry.path === '.notarai/cli.spec.yaml')?.subsystems,
    ).toEqual(['.notarai/cli/mcp.spec.yaml']);
    for (const [specPath, byNotarai] of Object.entries(NOTARAI_GOVERNED)) {
      const expected = byNotarai.filter((file) => !IGNORED_BY_GIT.has(file));
      // A cold cache lists every governed file: spec files in spec_changes, the rest in files.
      const result = await engine.getSpecDiff({
        spec_path: specPath,
        base_branch: 'main',
        bypass_cache: true,
      });
      const governed = sortedUtf8([
        ...result.files,
        ...result.spec_changes.map((change) => change.path),
      ]);
      expect(governed, specPath).toEqual(sortedUtf8(expected));
      const counted = state.specs.find((entry) => entry.path === specPath)?.governedFiles;
      expect(counted, specPath).toBe(expected.length);
    }
    // First category in byte order, as NotarAI's BTreeMap iterates them: `schemas` governs the
    // schema files too, but `configs` comes first.
    const cli = await engine.getSpecDiff({
      spec_path: '.notarai/cli.spec.yaml',
      base_branch: 'main',
      bypass_cache: true,
    });
    expect(cli.file_categories).toMatchObject({
      'schemas/0.5/spec.schema.json': 'configs',
      'src/main.rs': 'code',
      'tests/common/mod.rs': 'tests',
    });
    expect(cli.binary_changes).toEqual([]);
    const system = await engine.getSpecDiff({
      spec_path: '.notarai/system.spec.yaml',
      base_branch: 'main',
      bypass_cache: true,
    });
    // A binary extension is listed whether or not the file differs from the base, as in NotarAI.
    expect(system.binary_changes).toEqual(['img/NotarAI.png']);
    expect(system.file_categories['.claude/rules/testing.md']).toBe('configs');
    const parsed = parseSpecText(
      '.notarai/system.spec.yaml',
      NOTARAI_LIKE['.notarai/system.spec.yaml'] ?? '',
    ) as ValidSpec;
    expect([...parsed.categories.keys()]).toEqual(['assets', 'configs', 'docs', 'specs']);
  });
});
