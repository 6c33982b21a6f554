// get_project_context on real repositories: branch, HEAD, upstream ahead/behind, changes with
// sample paths, other worktrees, the spec summary provider (present, absent, failing) and URLs.
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
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
  MAX_DOCKER_MESSAGE_CHARS,
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

// Recorded `docker compose ps --format json` output: compose ≥ 2.21 prints one object per line,
// older versions one array (with Publishers but no Ports/Status strings).
const PS_LINES = [
  '{"Command":"\\"docker-entrypoint.s…\\"","CreatedAt":"2026-11-25 09:12:40 +0000 UTC","ExitCode":0,"Health":"healthy","ID":"5b7f0c1e9a2d","Image":"postgres:16","Labels":"com.docker.compose.project=repo","LocalVolumes":"1","Mounts":"repo_pgdata","Name":"repo-db-1","Names":"repo-db-1","Networks":"repo_default","Ports":"0.0.0.0:5432->5432/tcp","Project":"repo","Publishers":[{"URL":"0.0.0.0","TargetPort":5432,"PublishedPort":5432,"Protocol":"tcp"}],"RunningFor":"2 hours ago","Service":"db","Size":"0B","State":"running","Status":"Up 2 hours (healthy)"}',
  '{"Command":"\\"node server.js\\"","CreatedAt":"2026-11-25 09:12:41 +0000 UTC","ExitCode":1,"Health":"","ID":"9c3a4d2b7e11","Image":"repo-web","Labels":"","LocalVolumes":"0","Mounts":"","Name":"repo-web-1","Names":"repo-web-1","Networks":"repo_default","Ports":"","Project":"repo","Publishers":[],"RunningFor":"2 hours ago","Service":"web","Size":"0B","State":"exited","Status":"Exited (1) 5 minutes ago"}',
].join('\n');
const PS_ARRAY =
  '[{"ID":"5b7f0c1e9a2d","Name":"repo-db-1","Command":"docker-entrypoint.sh postgres","Project":"repo","Service":"db","State":"running","Health":"","ExitCode":0,"Publishers":[{"URL":"0.0.0.0","TargetPort":5432,"PublishedPort":5432,"Protocol":"tcp"},{"URL":"","TargetPort":9187,"PublishedPort":0,"Protocol":"tcp"}]}]';

describe('get_project_context containers and active tasks', () => {
  let composed: TempRepo;
  let bin: string;
  let savedPath: string | undefined;

  /** Puts a fake `docker` first on PATH: it records its arguments and runs `body`. */
  async function fakeDocker(body: string): Promise<void> {
    await writeFile(
      path.join(bin, 'docker'),
      `#!/bin/sh\nprintf '%s\\n' "$@" > "${bin}/args"\n${body}\n`,
      { mode: 0o755 },
    );
  }

  beforeAll(async () => {
    composed = await makeTempRepo({ 'compose.yaml': 'services:\n  db:\n    image: postgres:16\n' });
    bin = await makeTempDir('grove-fake-docker-');
    savedPath = process.env.PATH;
    process.env.PATH = `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
  });
  afterAll(async () => {
    process.env.PATH = savedPath;
    await composed.cleanup();
    await rm(bin, { recursive: true, force: true });
  });

  it('lists the containers of the compose file (one JSON object per line)', async () => {
    await fakeDocker(`cat <<'JSON'\n${PS_LINES}\nJSON`);
    const result = await context({}, composed.root);
    expect(result.containers).toEqual({
      compose_file: 'compose.yaml',
      services: [
        {
          name: 'repo-db-1',
          service: 'db',
          state: 'running',
          status: 'Up 2 hours (healthy)',
          health: 'healthy',
          ports: '0.0.0.0:5432->5432/tcp',
        },
        {
          name: 'repo-web-1',
          service: 'web',
          state: 'exited',
          status: 'Exited (1) 5 minutes ago',
          health: null,
          ports: '',
        },
      ],
    });
    const args = (await readFile(path.join(bin, 'args'), 'utf8')).trim().split('\n');
    expect(args).toEqual([
      'compose',
      '--file',
      path.join(composed.root, 'compose.yaml'),
      '--project-directory',
      composed.root,
      'ps',
      '--format',
      'json',
    ]);
  });

  it('reads the older array output too', async () => {
    await fakeDocker(`echo '${PS_ARRAY}'`);
    const result = await context({}, composed.root);
    expect(result.containers?.services).toEqual([
      {
        name: 'repo-db-1',
        service: 'db',
        state: 'running',
        status: '',
        health: null,
        ports: '0.0.0.0:5432->5432/tcp, 9187/tcp',
      },
    ]);
  });

  it('says in one field that docker is not running, not installed, or not answering', async () => {
    await fakeDocker(
      'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1',
    );
    const stopped = await context({}, composed.root);
    expect(stopped.containers).toEqual({
      compose_file: 'compose.yaml',
      services: null,
      unavailable: expect.stringMatching(/^docker is not running: Cannot connect/) as string,
    });

    await rm(path.join(bin, 'docker'));
    const saved = process.env.PATH;
    process.env.PATH = bin; // no docker anywhere
    try {
      const missing = await context({}, composed.root);
      expect(missing.containers?.unavailable).toBe('docker is not installed (no docker on PATH)');
    } finally {
      process.env.PATH = saved;
    }

    await fakeDocker('exec sleep 30');
    const started = Date.now();
    const slow = await context({}, composed.root);
    expect(slow.containers?.unavailable).toBe('docker did not answer within 3 s');
    expect(Date.now() - started).toBeLessThan(8_000);
    // The call itself never failed: the rest is there.
    expect(slow.branch).toBe('main');
  });

  it("never shows docker compose's error text, which may quote files outside the worktree", async () => {
    // compose quotes the offending line of an env_file (or extends/include file) it cannot parse.
    await fakeDocker(
      `echo 'failed to read /home/u/.netrc: line 1: unexpected character " " in variable name "machine h password SECRET-7731"' >&2; exit 15`,
    );
    const failed = await context({}, composed.root);
    expect(failed.containers?.services).toBeNull();
    expect(failed.containers?.unavailable).toMatch(/^docker compose ps failed \(exit 15\)/);
    expect(JSON.stringify(failed)).not.toContain('SECRET-7731');
  });

  it('says when docker compose ps was cut at its output cap, and caps the daemon message it echoes', async () => {
    // 5 MiB of one JSON array that never ends: past the 4 MiB cap docker is stopped.
    await fakeDocker(`printf '['; head -c ${5 * 1024 * 1024} /dev/zero | tr '\\0' ' '; printf ']'`);
    const flooded = await context({}, composed.root);
    expect(flooded.containers?.services).toBeNull();
    expect(flooded.containers?.unavailable).toBe(
      'docker compose ps printed more than 4 MiB and was stopped at that cap: run `docker ' +
        'compose ps` in the worktree to see it',
    );
    // A daemon-down line 64 KiB long is echoed cut to MAX_DOCKER_MESSAGE_CHARS.
    await fakeDocker(
      `printf 'Cannot connect to the Docker daemon at unix:///x. Is the docker daemon running? '>&2; ` +
        `head -c 65536 /dev/zero | tr '\\0' y >&2; exit 1`,
    );
    const stopped = await context({}, composed.root);
    const message = stopped.containers?.unavailable ?? '';
    expect(message).toMatch(/^docker is not running: Cannot connect to the Docker daemon/);
    expect(message).toMatch(/y…$/);
    expect(message.length).toBe('docker is not running: '.length + MAX_DOCKER_MESSAGE_CHARS);
  });

  it('stops docker with what it started when it does not answer (a compose plugin holding on)', async () => {
    const pidFile = path.join(bin, 'plugin.pid');
    await fakeDocker(`sh -c 'trap "" TERM; sleep 30' & echo $! > "${pidFile}"; trap '' TERM; wait`);
    const result = await context({}, composed.root);
    expect(result.containers?.unavailable).toBe('docker did not answer within 3 s');
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    await new Promise((resolve) => setTimeout(resolve, 200));
    const alive = await readFile(`/proc/${pid}/stat`, 'utf8').then(
      (stat) => !/^\d+ \(.*\) [ZX]/.test(stat),
      () => false,
    );
    if (alive) process.kill(pid, 'SIGKILL');
    expect(alive).toBe(false);
  });

  it('never runs a docker committed in the worktree, whatever relative or empty entries PATH has', async () => {
    const hostile = await makeTempRepo({
      'compose.yaml': 'services:\n  db:\n    image: postgres:16\n',
      docker: '#!/bin/sh\necho ran > "$(dirname "$0")/pwned"; echo "[]"\n',
      'bin/docker': '#!/bin/sh\necho ran > pwned; echo "[]"\n',
    });
    const saved = process.env.PATH;
    try {
      await chmod(path.join(hostile.root, 'docker'), 0o755);
      await chmod(path.join(hostile.root, 'bin/docker'), 0o755);
      // No docker installed; an empty entry (a trailing colon) and relative ones mean "here".
      for (const hostilePath of [`${bin}:`, `${bin}::/nonexistent`, `.:${bin}`, `bin:${bin}`]) {
        await rm(path.join(bin, 'docker'), { force: true });
        process.env.PATH = hostilePath;
        const result = await context({}, hostile.root);
        expect(result.containers?.unavailable).toBe('docker is not installed (no docker on PATH)');
        await expect(readFile(path.join(hostile.root, 'pwned'), 'utf8')).rejects.toThrow();
      }
    } finally {
      process.env.PATH = saved;
      await hostile.cleanup();
    }
  });

  it('reports no containers without a compose file, and never runs docker then', async () => {
    await fakeDocker('echo called > "$0.called"; echo "[]"');
    const result = await context({}, feature);
    expect(result.containers).toBeNull();
    await expect(readFile(path.join(bin, 'docker.called'), 'utf8')).rejects.toThrow();
  });

  it('reports the running just tasks with their elapsed time, and the recipes when tasks are on', async () => {
    const startedAt = Date.now() - 4_000;
    const running = [{ task: 'test', args: ['unit'], startedAt }];
    const on = await context(
      {
        activeTasks: {
          enabled: () => true,
          running: () => running,
          recipes: async () => ['build', 'test'],
        },
      },
      composed.root,
    );
    expect(on.active_tasks).toMatchObject({ enabled: true, recipes: ['build', 'test'] });
    expect(on.active_tasks.running).toHaveLength(1);
    expect(on.active_tasks.running[0]).toMatchObject({ task: 'test', args: ['unit'] });
    expect(on.active_tasks.running[0]!.elapsed_ms).toBeGreaterThanOrEqual(4_000);

    const off = await context({
      activeTasks: { enabled: () => false, running: () => [], recipes: async () => ['x'] },
    });
    expect(off.active_tasks).toEqual({ enabled: false, running: [], recipes: null });
    expect((await context()).active_tasks).toEqual({ enabled: false, running: [], recipes: null });

    const failing = await context({
      activeTasks: {
        enabled: () => true,
        running: () => [],
        recipes: () => Promise.reject(new Error('no justfile in the worktree root')),
      },
    });
    expect(failing.active_tasks).toEqual({
      enabled: true,
      running: [],
      recipes: null,
      recipes_unavailable: 'no justfile in the worktree root',
    });

    const hanging = await context({
      activeTasks: { enabled: () => true, running: () => [], recipes: () => new Promise(() => {}) },
    });
    expect(hanging.active_tasks.recipes_unavailable).toBe(
      'listing the recipes took longer than 3 s',
    );
  });
});
