// The reconciliation engine against real git repositories: every tool's normal path, its
// documented edges and its errors (issue 3's list), and NotarAI cache compatibility.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { blake3 } from '@napi-rs/blake-hash';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { git, makeTempRepo, writeFiles } from '../testing/temp-repo.ts';
import type { TempRepo } from '../testing/temp-repo.ts';
import { CACHE_DB, FILE_CACHE_DDL } from './floor/hash-cache.ts';
import { ReconcileEngine, STATE_FILE } from './reconcile-engine.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SYSTEM = `schema_version: '0.7'
intent: |
  The product.
  Second line.
artifacts:
  specs:
    - path: .notarai/*.spec.yaml
subsystems:
  - $ref: ./app.spec.yaml
behaviors:
  - name: whole
    given: anything
    then: works
`;

const APP = `schema_version: '0.7'
intent: The app.
artifacts:
  code:
    - path: src/**
  docs:
    - path: docs/*.md
  assets:
    - path: assets/**
constraints:
  - small
behaviors:
  - name: runs
    given: input
    then: output
`;

const DOCS_ONLY = `schema_version: '0.6'
intent: Nothing governed.
tier: registered
artifacts:
  data:
    - path: data/**
`;

/** A repo on branch `feature` (base `main`) with specs, and an engine for it. */
async function setup(
  extra: Record<string, string | Buffer> = {},
): Promise<{ repo: TempRepo; engine: ReconcileEngine; root: string }> {
  const repo = await makeTempRepo({
    '.notarai/system.spec.yaml': SYSTEM,
    '.notarai/app.spec.yaml': APP,
    '.notarai/nothing.spec.yaml': DOCS_ONLY,
    'src/a.ts': 'export const a = 1;\n',
    'src/b.ts': 'export const b = 2;\n',
    'src/lib/c.ts': 'export const c = 3;\n',
    'docs/guide.md': '# Guide\n',
    'other/x.txt': 'not governed\n',
    ...extra,
  });
  cleanups.push(() => repo.cleanup());
  await git(repo.root, 'checkout', '-q', '-b', 'feature');
  const engine = new ReconcileEngine({ root: repo.root });
  cleanups.push(() => engine.close());
  return { repo, engine, root: repo.root };
}

const APP_SPEC = '.notarai/app.spec.yaml';

function b3sumOrKnownGood(file: string): string {
  if (existsSync('/usr/bin/b3sum')) {
    return execFileSync('b3sum', ['--no-names', file], { encoding: 'utf8' }).trim();
  }
  return blake3(readFileSync(file)).toString('hex');
}

describe('list_affected_specs', () => {
  it('lists every kind of change (both sides of renames, untracked, deleted, non-ASCII) and the specs they touch', async () => {
    const { engine, root } = await setup({ 'src/old-name.ts': 'moved\n', 'docs/été.md': 'a\n' });
    await writeFiles(root, { 'src/a.ts': 'export const a = 10;\n' });
    await git(root, 'commit', '-q', '-am', 'committed change');
    await writeFiles(root, { 'src/b.ts': 'staged\n' });
    await git(root, 'add', 'src/b.ts');
    await writeFiles(root, { 'src/lib/c.ts': 'unstaged\n', 'src/new.ts': 'untracked\n' });
    await writeFiles(root, { 'docs/été.md': 'b\n' });
    await git(root, 'mv', 'src/old-name.ts', 'src/new-name.ts');
    await rm(path.join(root, 'docs/guide.md'));
    await writeFiles(root, { 'ignored.log': 'x\n', '.gitignore': '*.log\n' });

    const result = await engine.listAffectedSpecs('main');
    expect(result.changed_files).toEqual([
      '.gitignore',
      'docs/guide.md',
      'docs/été.md',
      'src/a.ts',
      'src/b.ts',
      'src/lib/c.ts',
      'src/new-name.ts',
      'src/new.ts',
      'src/old-name.ts',
    ]);
    expect(result.affected_specs).toEqual([
      {
        spec_path: APP_SPEC,
        behaviors: [{ name: 'runs', given: 'input', then: 'output' }],
        constraints: ['small'],
        invariants: null,
      },
    ]);
    expect(result.spec_errors).toEqual([]);
  });

  it('reports a broken spec and carries on with the others', async () => {
    const { engine, root } = await setup({ '.notarai/broken.spec.yaml': 'intent: [\n' });
    await writeFiles(root, { 'src/a.ts': 'changed\n' });
    const result = await engine.listAffectedSpecs('main');
    expect(result.affected_specs.map((spec) => spec.spec_path)).toEqual([APP_SPEC]);
    expect(result.spec_errors).toEqual([
      expect.objectContaining({ file: '.notarai/broken.spec.yaml', line: expect.any(Number) }),
    ]);
  });

  it('refuses a base that does not resolve or starts with "-"', async () => {
    const { engine } = await setup();
    await expect(engine.listAffectedSpecs('no-such-branch')).rejects.toThrow(
      'base_branch does not resolve to a commit in this repository: "no-such-branch"',
    );
    await expect(engine.listAffectedSpecs('--output=/tmp/x')).rejects.toThrow(
      'base_branch must not start with "-"',
    );
    await expect(engine.listAffectedSpecs('')).rejects.toThrow('base_branch is empty');
    expect((await engine.listAffectedSpecs('HEAD~0')).changed_files).toEqual([]);
  });
});

describe('get_spec_diff', () => {
  it('cold cache: lists every governed file, diffs only what differs from the base', async () => {
    const { engine, root } = await setup();
    await writeFiles(root, { 'src/a.ts': 'export const a = 100;\n', 'src/new.ts': 'new\n' });
    const result = await engine.getSpecDiff({ spec_path: APP_SPEC, base_branch: 'main' });
    expect(result.files).toEqual([
      'docs/guide.md',
      'src/a.ts',
      'src/b.ts',
      'src/lib/c.ts',
      'src/new.ts',
    ]);
    expect(result.skipped).toEqual([]);
    expect(result.file_categories).toEqual({
      'docs/guide.md': 'docs',
      'src/a.ts': 'code',
      'src/b.ts': 'code',
      'src/lib/c.ts': 'code',
      'src/new.ts': 'code',
    });
    expect(result.diff).toContain('diff --git a/src/a.ts b/src/a.ts');
    expect(result.diff).toContain('+export const a = 100;');
    expect(result.diff).toContain('diff --git a/src/new.ts b/src/new.ts\nnew file mode 100644');
    expect(result.diff).not.toContain('src/b.ts');
    expect(result).toMatchObject({
      excluded: [],
      spec_changes: [],
      system_spec: null,
      binary_changes: [],
      spec_invalidated: [],
      deleted_files: [],
    });
    expect(result.warnings).toBeUndefined();
    expect(await engine.cache.exists()).toBe(true); // created, as NotarAI's get_spec_diff does
  });

  it('warm cache: skips what was reconciled until it changes; bypass_cache ignores the cache without deleting it', async () => {
    const { engine, root } = await setup();
    await writeFiles(root, { 'src/a.ts': 'export const a = 100;\n' });
    const all = ['docs/guide.md', 'src/a.ts', 'src/b.ts', 'src/lib/c.ts', APP_SPEC];
    expect((await engine.markReconciled(all)).updated).toBe(5);

    const warm = await engine.getSpecDiff({ spec_path: APP_SPEC, base_branch: 'main' });
    expect(warm.files).toEqual([]);
    expect(warm.skipped).toEqual(['docs/guide.md', 'src/a.ts', 'src/b.ts', 'src/lib/c.ts']);
    expect(warm.diff).toBe('');

    await writeFiles(root, {
      'src/a.ts': 'export const a = 200;\n',
      'src/b.ts': 'export const b = 2;\n',
    });
    const edited = await engine.getSpecDiff({ spec_path: APP_SPEC, base_branch: 'main' });
    expect(edited.files).toEqual(['src/a.ts']); // b.ts was rewritten with the same bytes
    expect(edited.diff).toContain('+export const a = 200;');

    const bypass = await engine.getSpecDiff({
      spec_path: APP_SPEC,
      base_branch: 'main',
      bypass_cache: true,
    });
    expect(bypass.files).toHaveLength(4);
    expect(bypass.skipped).toEqual([]);
    expect(bypass.spec_invalidated).toEqual([]);
    expect(await engine.cache.exists()).toBe(true);
    expect((await engine.cache.readReconciled()).size).toBe(5);
  });

  it('exclude_patterns take files out of the diff text only', async () => {
    const { engine, root } = await setup();
    await writeFiles(root, { 'src/a.ts': 'changed a\n', 'src/lib/c.ts': 'changed c\n' });
    const result = await engine.getSpecDiff({
      spec_path: APP_SPEC,
      base_branch: 'main',
      exclude_patterns: ['src/lib/**'],
    });
    expect(result.files).toContain('src/lib/c.ts');
    expect(result.excluded).toEqual(['src/lib/**']);
    expect(result.diff).toContain('src/a.ts');
    expect(result.diff).not.toContain('src/lib/c.ts');
  });

  it('spec changes come whole, with the system spec as content or as a bare reference', async () => {
    const { engine, root } = await setup();
    // The system spec governs every top-level spec: app.spec.yaml changed since the (cold) cache.
    const result = await engine.getSpecDiff({
      spec_path: '.notarai/system.spec.yaml',
      base_branch: 'main',
    });
    expect(result.spec_changes.map((change) => change.path)).toEqual([
      APP_SPEC,
      '.notarai/nothing.spec.yaml',
      '.notarai/system.spec.yaml',
    ]);
    expect(result.spec_changes[0]?.content).toBe(APP);
    // The system spec is itself in spec_changes: only its path.
    expect(result.system_spec).toEqual({ path: '.notarai/system.spec.yaml' });
    expect(result.files).toEqual([]);

    await engine.markReconciled(['.notarai/system.spec.yaml', '.notarai/nothing.spec.yaml']);
    const onlyApp = await engine.getSpecDiff({
      spec_path: '.notarai/system.spec.yaml',
      base_branch: 'main',
    });
    expect(onlyApp.spec_changes.map((change) => change.path)).toEqual([APP_SPEC]);
    expect(onlyApp.system_spec).toEqual({ path: '.notarai/system.spec.yaml', content: SYSTEM });
    await writeFiles(root, { 'src/a.ts': 'x\n' });
  });

  it('binary files by extension and by content go to binary_changes, not the diff', async () => {
    const { engine, root } = await setup({ 'assets/logo.png': 'not really a png\n' });
    await writeFiles(root, {
      'assets/logo.png': 'still text, but the extension says binary\n',
      'assets/blob.dat': Buffer.from([0x41, 0x00, 0x42, 0x0a]),
      'src/a.ts': 'text change\n',
    });
    const result = await engine.getSpecDiff({ spec_path: APP_SPEC, base_branch: 'main' });
    expect(result.binary_changes).toEqual(['assets/blob.dat', 'assets/logo.png']);
    expect(result.diff).toContain('src/a.ts');
    expect(result.diff).not.toContain('assets/');
    expect(result.file_categories['assets/blob.dat']).toBe('assets');
  });

  it('deleted and renamed governed files show in the diff', async () => {
    const { engine, root } = await setup({ 'src/old.ts': 'line one\nline two\nline three\n' });
    await rm(path.join(root, 'src/b.ts'));
    await git(root, 'mv', 'src/old.ts', 'src/renamed.ts');
    const result = await engine.getSpecDiff({ spec_path: APP_SPEC, base_branch: 'main' });
    expect(result.deleted_files).toEqual(['src/b.ts', 'src/old.ts']);
    expect(result.files).toContain('src/renamed.ts');
    expect(result.files).not.toContain('src/b.ts');
    expect(result.diff).toContain('diff --git a/src/b.ts b/src/b.ts\ndeleted file mode 100644');
    expect(result.diff).toContain('rename from src/old.ts\nrename to src/renamed.ts');
  });

  it('handles untracked and non-ASCII paths without quoting', async () => {
    const { engine, root } = await setup({ 'docs/naïve café.md': 'old\n' });
    await writeFiles(root, { 'docs/naïve café.md': 'new\n', 'src/日本.ts': 'untracked\n' });
    const result = await engine.getSpecDiff({ spec_path: APP_SPEC, base_branch: 'main' });
    expect(result.files).toContain('docs/naïve café.md');
    expect(result.files).toContain('src/日本.ts');
    expect(result.diff).toContain('+++ b/docs/naïve café.md');
    expect(result.diff).toContain('+++ b/src/日本.ts');
    expect(result.diff).not.toContain('\\3');
  });

  it('a spec that governs nothing answers with empty lists', async () => {
    const { engine } = await setup();
    const result = await engine.getSpecDiff({
      spec_path: '.notarai/nothing.spec.yaml',
      base_branch: 'main',
    });
    expect(result).toEqual({
      diff: '',
      files: [],
      skipped: [],
      excluded: [],
      spec_changes: [],
      system_spec: null,
      binary_changes: [],
      file_categories: {},
      spec_invalidated: [],
      deleted_files: [],
    });
  });

  it('spec_invalidated: after the spec is edited, reconciled files need review again', async () => {
    const { engine, root } = await setup();
    await engine.markReconciled([
      'docs/guide.md',
      'src/a.ts',
      'src/b.ts',
      'src/lib/c.ts',
      APP_SPEC,
    ]);
    await writeFiles(root, { [APP_SPEC]: APP.replace('  - small', '  - smaller') });
    const result = await engine.getSpecDiff({ spec_path: APP_SPEC, base_branch: 'main' });
    expect(result.skipped).toEqual([]);
    expect(result.spec_invalidated).toEqual([
      'docs/guide.md',
      'src/a.ts',
      'src/b.ts',
      'src/lib/c.ts',
    ]);
    const artifacts = await engine.getChangedArtifacts({ spec_path: APP_SPEC });
    expect(artifacts).toEqual({
      changed_artifacts: [],
      spec_invalidated: ['docs/guide.md', 'src/a.ts', 'src/b.ts', 'src/lib/c.ts'],
    });
  });

  it('refuses bad spec paths, bad bases and broken specs with clear errors', async () => {
    const { engine, root } = await setup({
      'docs/outside.spec.yaml': APP,
      '.notarai/bad-yaml.spec.yaml': 'intent: [\n',
      '.notarai/invalid.spec.yaml': "schema_version: '0.7'\nintent: x\nartifacts: {}\nextra: 1\n",
    });
    const call = (spec_path: string, base_branch = 'main') =>
      engine.getSpecDiff({ spec_path, base_branch });
    await expect(call('.notarai/missing.spec.yaml')).rejects.toThrow(
      'spec not found: ".notarai/missing.spec.yaml"',
    );
    await expect(call('docs/outside.spec.yaml')).rejects.toThrow(
      'spec_path must name a *.spec.yaml file under .notarai/',
    );
    await expect(call('.notarai/../../etc/passwd')).rejects.toThrow('escapes the worktree root');
    await expect(call(path.join(path.dirname(root), 'elsewhere.spec.yaml'))).rejects.toThrow(
      'outside the worktree root',
    );
    await expect(call(APP_SPEC, 'nope')).rejects.toThrow(
      'base_branch does not resolve to a commit',
    );
    await expect(call(APP_SPEC, '-p')).rejects.toThrow('must not start with "-"');
    await expect(call('.notarai/bad-yaml.spec.yaml')).rejects.toThrow(
      /spec \.notarai\/bad-yaml\.spec\.yaml is invalid:\n {2}\.notarai\/bad-yaml\.spec\.yaml:\d+: invalid YAML/,
    );
    await expect(call('.notarai/invalid.spec.yaml')).rejects.toThrow(
      ".notarai/invalid.spec.yaml:4: unknown top-level key 'extra'",
    );
  });
});

describe('get_changed_artifacts', () => {
  it('compares with the cache only, optionally for one category', async () => {
    const { engine, root } = await setup();
    expect(await engine.getChangedArtifacts({ spec_path: APP_SPEC })).toEqual({
      changed_artifacts: ['docs/guide.md', 'src/a.ts', 'src/b.ts', 'src/lib/c.ts'],
      spec_invalidated: [],
    });
    await engine.markReconciled([
      'docs/guide.md',
      'src/a.ts',
      'src/b.ts',
      'src/lib/c.ts',
      APP_SPEC,
    ]);
    await writeFiles(root, { 'src/b.ts': 'edited\n', 'docs/guide.md': 'edited\n' });
    expect(await engine.getChangedArtifacts({ spec_path: APP_SPEC })).toEqual({
      changed_artifacts: ['docs/guide.md', 'src/b.ts'],
      spec_invalidated: [],
    });
    expect(
      await engine.getChangedArtifacts({ spec_path: APP_SPEC, artifact_type: 'docs' }),
    ).toEqual({
      changed_artifacts: ['docs/guide.md'],
      spec_invalidated: [],
    });
    expect(
      await engine.getChangedArtifacts({ spec_path: APP_SPEC, artifact_type: 'nope' }),
    ).toEqual({
      changed_artifacts: [],
      spec_invalidated: [],
      warnings: [
        'spec .notarai/app.spec.yaml has no artifact category "nope", so nothing is listed; ' +
          'its categories: assets, code, docs',
      ],
    });
  });
});

describe('mark_reconciled', () => {
  it("writes b3sum's hash into NotarAI's table, normalizing paths and refusing escapes", async () => {
    const { engine, root, repo } = await setup();
    await writeFile(path.join(repo.dir, 'secret.txt'), 'outside\n');
    await symlink(path.join(repo.dir, 'secret.txt'), path.join(root, 'src/link-out.ts'));
    await symlink(repo.dir, path.join(root, 'outside-dir'));
    const result = await engine.markReconciled([
      './src/a.ts',
      'src//a.ts',
      'src/b.ts',
      'src/./b.ts',
      path.join(root, 'docs/guide.md'),
      'src/missing.ts',
      '../secret.txt',
      path.join(repo.dir, 'secret.txt'),
      'src/link-out.ts',
      'outside-dir/secret.txt',
      'src',
      '.git/config',
    ]);
    expect(result.updated).toBe(3);
    expect(result.rejected.map((entry) => entry.path)).toEqual([
      '../secret.txt',
      path.join(repo.dir, 'secret.txt'),
      'src/link-out.ts',
      'outside-dir/secret.txt',
      'src',
      '.git/config',
    ]);
    expect(result.rejected[3]?.reason).toContain('outside the worktree');
    expect(result.rejected[4]?.reason).toContain('is a directory');

    const db = new Database(path.join(root, CACHE_DB), { readonly: true });
    cleanups.push(() => {
      db.close();
    });
    expect(
      db.prepare("SELECT sql FROM sqlite_master WHERE name = 'file_cache'").pluck().get(),
    ).toBe(FILE_CACHE_DDL);
    const rows = db
      .prepare('SELECT path, blake3_hash, updated_at FROM file_cache ORDER BY path')
      .all() as {
      path: string;
      blake3_hash: string;
      updated_at: number;
    }[];
    expect(rows.map((row) => row.path)).toEqual(['docs/guide.md', 'src/a.ts', 'src/b.ts']);
    for (const row of rows) {
      expect(row.blake3_hash).toBe(b3sumOrKnownGood(path.join(root, row.path)));
      expect(row.blake3_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(Math.abs(row.updated_at - Date.now() / 1000)).toBeLessThan(60);
    }
  });

  it('recreates a corrupt cache and still answers, with a warning', async () => {
    const { engine, root } = await setup();
    await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
    await writeFile(path.join(root, CACHE_DB), 'garbage '.repeat(1000));
    const result = await engine.getChangedArtifacts({ spec_path: APP_SPEC });
    expect(result.changed_artifacts).toHaveLength(4);
    expect(result.warnings?.[0]).toContain('recreated empty');
    expect((await engine.markReconciled(['src/a.ts'])).updated).toBe(1);
  });

  it('a mark whose call is cancelled once its rows are being written records none of them', async () => {
    const { engine } = await setup();
    const controller = new AbortController();
    // The client cancels (or the deadline passes) as the write begins: it spans turns of the
    // event loop on a big repository, so a cancellation can come in the middle of it.
    const write = engine.cache.writeReconciled.bind(engine.cache);
    engine.cache.writeReconciled = (...args) => {
      controller.abort(new Error('the client cancelled'));
      return write(...args);
    };
    await expect(
      engine.markReconciled(['src/a.ts', 'src/b.ts'], controller.signal),
    ).rejects.toThrow('the client cancelled');
    expect((await engine.cache.readReconciled()).size).toBe(0);
  });
});

describe('clear_cache and snapshot_state', () => {
  it('clear_cache deletes the database and says whether it existed', async () => {
    const { engine } = await setup();
    expect(await engine.clearCache()).toEqual({ cleared: false });
    await engine.markReconciled(['src/a.ts']);
    expect(await engine.clearCache()).toEqual({ cleared: true });
    expect(await engine.cache.exists()).toBe(false);
    expect(
      (await engine.getChangedArtifacts({ spec_path: APP_SPEC })).changed_artifacts,
    ).toHaveLength(4);
  });

  it("snapshot_state writes NotarAI's state file", async () => {
    const { engine, root } = await setup();
    await engine.markReconciled(['src/a.ts', APP_SPEC]);
    const head = (await git(root, 'rev-parse', 'HEAD')).trim();
    const result = await engine.snapshotState();
    expect(result).toEqual({
      files: 1,
      specs: 1,
      git_hash: head,
      state_path: path.join(root, STATE_FILE),
    });
    const text = await readFile(result.state_path, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    const state = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(state)).toEqual([
      'schema_version',
      'cli_version',
      'last_reconciliation',
      'file_fingerprints',
      'spec_fingerprints',
    ]);
    expect(state).toMatchObject({
      schema_version: '1',
      last_reconciliation: {
        git_hash: head,
        branch: 'feature',
        timestamp: expect.stringMatching(/^\d+Z$/),
      },
      file_fingerprints: { 'src/a.ts': { blake3: b3sumOrKnownGood(path.join(root, 'src/a.ts')) } },
      spec_fingerprints: { [APP_SPEC]: b3sumOrKnownGood(path.join(root, APP_SPEC)) },
    });
    expect(text).toContain('\n  "schema_version": "1",\n');
  });
});

describe('reconcile state', () => {
  it('summarizes every spec against the base, and reports a bad base without failing', async () => {
    const { engine, root } = await setup({ '.notarai/broken.spec.yaml': 'schema_version: 1\n' });
    await engine.markReconciled([
      'src/a.ts',
      'src/b.ts',
      'docs/guide.md',
      'src/lib/c.ts',
      APP_SPEC,
    ]);
    await writeFiles(root, { 'src/a.ts': 'changed\n' });
    const state = await engine.computeState('main');
    const app = state.specs.find((spec) => spec.path === APP_SPEC);
    expect(app).toMatchObject({
      title: 'The app.',
      tier: 'full',
      isSystemSpec: false,
      governedFiles: 4,
      changedSinceReconciled: 1,
      changedSinceReconciledPaths: ['src/a.ts'],
      specInvalidated: false,
      affected: true,
      affectedPaths: ['src/a.ts'],
      lastReconciledAt: expect.any(Number),
    });
    expect(state.specs.find((spec) => spec.isSystemSpec)?.title).toBe('The product.');
    expect(state.systemSpec).toBe('.notarai/system.spec.yaml');
    expect(state.totals).toMatchObject({ specs: 3, invalidSpecs: 1, affectedSpecs: 1 });
    expect(state.specErrors[0]?.file).toBe('.notarai/broken.spec.yaml');
    const bad = await engine.computeState('nope');
    expect(bad.baseError).toContain('does not resolve');
    expect(bad.specs.every((spec) => !spec.affected)).toBe(true);
  });
});

describe("snapshot_state's Grove options", () => {
  it('dry_run writes nothing (not even the cache); keep_committed keeps what the cache lacks', async () => {
    const { engine, root } = await setup();
    await engine.markReconciled(['src/a.ts', 'src/b.ts', APP_SPEC]);
    await engine.snapshotState(); // the committed snapshot: 2 files, 1 spec
    const committed = await readFile(path.join(root, STATE_FILE), 'utf8');
    await engine.clearCache(); // a fresh clone
    await writeFile(path.join(root, 'src/b.ts'), 'export const b = 3;\n'); // changed since

    const dry = await engine.snapshotState({ dryRun: true });
    expect(dry).toMatchObject({
      files: 0,
      specs: 0,
      written: false,
      cache_fingerprints: 0,
      committed_fingerprints: 3,
      kept_committed: 0,
    });
    expect(await engine.cache.exists()).toBe(false);
    expect(await readFile(path.join(root, STATE_FILE), 'utf8')).toBe(committed);

    const keptDry = await engine.snapshotState({ dryRun: true, keepCommitted: true });
    expect(keptDry).toMatchObject({ files: 2, specs: 1, kept_committed: 3, written: false });
    expect(await readFile(path.join(root, STATE_FILE), 'utf8')).toBe(committed);

    // This machine marks one file; the snapshot keeps the others' committed fingerprints (b's
    // old one too: it still reads "changed since reconciled", not "never").
    await engine.markReconciled(['src/lib/c.ts']);
    const kept = await engine.snapshotState({ keepCommitted: true });
    expect(kept).toMatchObject({
      files: 3,
      specs: 1,
      written: true,
      cache_fingerprints: 1,
      kept_committed: 3,
    });
    const state = JSON.parse(await readFile(path.join(root, STATE_FILE), 'utf8')) as {
      file_fingerprints: Record<string, unknown>;
      spec_fingerprints: Record<string, unknown>;
    };
    const before = JSON.parse(committed) as typeof state;
    expect(Object.keys(state.file_fingerprints)).toEqual(['src/a.ts', 'src/b.ts', 'src/lib/c.ts']);
    expect(state.file_fingerprints['src/b.ts']).toEqual(before.file_fingerprints['src/b.ts']);
    expect(state.spec_fingerprints).toEqual(before.spec_fingerprints);

    // Without options it stays NotarAI's: the cache only, and NotarAI's four keys in the answer.
    const plain = await engine.snapshotState();
    expect(Object.keys(plain).sort()).toEqual(['files', 'git_hash', 'specs', 'state_path']);
    expect(plain).toMatchObject({ files: 1, specs: 0 });
  });
});

describe('the reconciliation state the window shows', () => {
  it('reads the committed snapshot in a fresh clone: specs reconciled at the snapshot say so, edits since count as changed', async () => {
    const { engine, root } = await setup();
    const files = [
      '.notarai/app.spec.yaml',
      'src/a.ts',
      'src/b.ts',
      'src/lib/c.ts',
      'docs/guide.md',
    ];
    await engine.markReconciled(files);
    await engine.snapshotState();
    const written = JSON.parse(await readFile(path.join(root, STATE_FILE), 'utf8')) as {
      last_reconciliation: { timestamp: string };
    };
    const snapshotAt = Number(written.last_reconciliation.timestamp.slice(0, -1)) * 1000;
    await engine.clearCache(); // what a fresh clone of the repository has: no hash cache

    const state = await engine.computeState('main');
    expect(state.snapshot).toMatchObject({ at: snapshotAt, branch: 'feature' });
    const app = state.specs.find((spec) => spec.path === APP_SPEC)!;
    expect(app).toMatchObject({
      lastReconciledAt: snapshotAt,
      reconciledBy: 'snapshot',
      changedSinceReconciled: 0,
    });

    await writeFile(path.join(root, 'src/a.ts'), 'export const a = 42;\n');
    const after = (await engine.computeState('main')).specs.find((spec) => spec.path === APP_SPEC)!;
    expect(after).toMatchObject({
      changedSinceReconciled: 1,
      changedSinceReconciledPaths: ['src/a.ts'],
    });
  });

  it('a spec is reconciled when its own file is marked, not when another spec marks a file they share', async () => {
    const { engine } = await setup();
    // The system spec governs every spec file; reconciling app marks app.spec.yaml.
    await engine.markReconciled(['.notarai/app.spec.yaml', 'src/a.ts']);
    const state = await engine.computeState('main');
    const app = state.specs.find((spec) => spec.path === APP_SPEC)!;
    const system = state.specs.find((spec) => spec.path === '.notarai/system.spec.yaml')!;
    expect(app.reconciledBy).toBe('cache');
    expect(app.lastReconciledAt).not.toBeNull();
    expect(system).toMatchObject({ lastReconciledAt: null, reconciledBy: null });
    expect(state.snapshot).toBeNull();
  });
});
