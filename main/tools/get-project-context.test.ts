// get_project_context on real repositories: branch, HEAD, upstream ahead/behind, changes with
// sample paths, other worktrees, the spec summary provider (present, absent, failing) and URLs.
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addWorktree,
  git,
  makeTempDir,
  makeTempRepo,
  writeFiles,
  type TempRepo,
} from '../testing/temp-repo.ts';
import {
  createProjectContextTool,
  type ProjectContextOptions,
  type ProjectContextResult,
  type ServerEndpoints,
  type SpecSummary,
} from './get-project-context.ts';

let repo: TempRepo;
let feature: string;

async function context(
  options: ProjectContextOptions = {},
  root = feature,
): Promise<ProjectContextResult> {
  const tool = createProjectContextTool(options);
  const result = await tool.handler({} as never, { root, signal: new AbortController().signal });
  return tool.outputSchema.parse(result) as ProjectContextResult;
}

beforeAll(async () => {
  repo = await makeTempRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', '.gitignore': '*.log\n' });
  feature = await addWorktree(repo, 'feature');
  await git(feature, 'branch', '--set-upstream-to=main');
  for (const n of [1, 2]) {
    await writeFile(path.join(feature, `f${n}.txt`), `${n}\n`);
    await git(feature, 'add', '.');
    await git(feature, 'commit', '-q', '-m', `feature commit ${n}`);
  }
  await writeFile(path.join(repo.root, 'm.txt'), 'm\n');
  await git(repo.root, 'add', '.');
  await git(repo.root, 'commit', '-q', '-m', 'main moves on');
  // Changes in the feature worktree.
  await writeFile(path.join(feature, 'a.txt'), 'changed\n');
  await writeFile(path.join(feature, 'b.txt'), 'staged\n');
  await git(feature, 'add', 'b.txt');
  await writeFiles(feature, { 'new/one.txt': '1', 'new/two.txt': '2', 'x.log': 'ignored' });
  await addWorktree(repo, 'detached', 'tmp-branch');
  await git(path.join(repo.dir, 'detached'), 'checkout', '-q', '--detach');
});

afterAll(async () => {
  await repo.cleanup();
});

describe('get_project_context', () => {
  it('reports branch, HEAD, upstream, changes and the other worktrees', async () => {
    const result = await context();
    expect(result.root).toBe(feature);
    expect(result.branch).toBe('feature');
    expect(result.head).toMatchObject({ subject: 'feature commit 2' });
    expect(result.head?.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(Date.parse(result.head!.date)).not.toBeNaN();
    expect(result.upstream).toEqual({ name: 'main', ahead: 2, behind: 1 });
    expect(result.changes).toEqual({
      changed: 2,
      staged: 1,
      unstaged: 1,
      conflicted: 0,
      untracked: 2,
      changed_paths: ['a.txt', 'b.txt'],
      untracked_paths: ['new/one.txt', 'new/two.txt'],
    });
    expect(result.worktrees).toEqual([
      {
        path: repo.root,
        branch: 'main',
        head: expect.stringMatching(/^[0-9a-f]{40}$/),
        missing: false,
      },
      {
        path: path.join(repo.dir, 'detached'),
        branch: null,
        head: expect.stringMatching(/^[0-9a-f]{40}$/),
        missing: false,
      },
    ]);
  });

  it('says why there are no specs, or shows the summary the provider gives', async () => {
    const without = await context();
    expect(without.specs).toBeNull();
    expect(without.specs_unavailable).toMatch(/reconciliation engine is not running/);

    const summary: SpecSummary = {
      total: 2,
      paths: ['.notarai/system.spec.yaml', '.notarai/api.spec.yaml'],
      system_spec: '.notarai/system.spec.yaml',
      invalid: [{ path: '.notarai/bad.spec.yaml', message: 'intent: required' }],
      drifted: { specs: 1, files: 3 },
    };
    const withSpecs = await context({ specSummary: async () => summary });
    expect(withSpecs.specs).toEqual(summary);
    expect(withSpecs.specs_unavailable).toBeUndefined();

    const failing = await context({
      specSummary: async () => {
        throw new Error('cache is locked');
      },
    });
    expect(failing.specs).toBeNull();
    expect(failing.specs_unavailable).toBe('the spec summary failed: cache is locked');
  });

  it("reports the server's URLs once known, and null before", async () => {
    const bound: { urls?: ServerEndpoints } = {};
    const getter = (): ServerEndpoints | undefined => bound.urls;
    expect((await context({ serverUrls: getter })).server).toBeNull();
    const urls = {
      sse: 'http://127.0.0.1:47111/sse',
      streamable_http: 'http://127.0.0.1:47111/mcp',
    };
    bound.urls = urls;
    expect((await context({ serverUrls: getter })).server).toEqual(urls);
    expect((await context({ serverUrls: urls })).server).toEqual(urls);
  });

  it('handles a repository without commits and a directory that is no repository', async () => {
    const empty = await makeTempDir('grove-empty-');
    const plain = await makeTempDir('grove-plain-');
    try {
      await git(empty, 'init', '-q', '-b', 'trunk');
      const fresh = await context({}, empty);
      expect(fresh).toMatchObject({ branch: 'trunk', head: null, upstream: null, worktrees: [] });
      const none = await context({}, plain);
      expect(none).toMatchObject({ branch: null, head: null, changes: null, worktrees: [] });
    } finally {
      await rm(empty, { recursive: true, force: true });
      await rm(plain, { recursive: true, force: true });
    }
  });
});
