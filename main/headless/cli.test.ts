// Runs the real `grove` command (bin/grove.js, which runs the bundle the test setup builds) as a
// child process, as a user would: what each command line loads, `grove serve` end to end, and no
// zombie under its worktree processes.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { childProcesses, zombieChildren } from '../testing/child-processes.ts';
import { connectClient } from '../testing/mcp-clients.ts';
import { isPortOpen, randomFirstPort } from '../testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo, specGoverning } from '../testing/temp-repo.ts';
import { putJustOnPath } from '../testing/just.ts';
import { makeLoggingGit } from '../testing/logging-git.ts';
import { ReconcileEngine } from '../reconcile/reconcile-engine.ts';

// The just-task tests run the real `just` (grove serve finds it on the PATH it inherits).
putJustOnPath();

const GROVE = fileURLToPath(new URL('../../bin/grove.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  child: ChildProcessWithoutNullStreams;
  lines: AsyncIterableIterator<string>;
  stderr: () => string;
  exit: Promise<number | null>;
}

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function runGrove(...args: string[]): Run {
  return runGroveWith({}, ...args);
}

/** `grove <args>` with more environment variables and Node options. */
function runGroveWith(
  { env = {}, nodeOptions = [] }: { env?: NodeJS.ProcessEnv; nodeOptions?: string[] },
  ...args: string[]
): Run {
  const child = spawn(process.execPath, [...nodeOptions, GROVE, ...args], {
    stdio: 'pipe',
    env: { ...process.env, GROVE_FIRST_PORT: String(randomFirstPort()), ...env },
  });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines: createInterface({ input: child.stdout })[Symbol.asyncIterator](),
    stderr: () => stderr,
    exit,
  };
}

async function nextLine(run: Run, timeoutMs = 20_000): Promise<string> {
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(
      () => reject(new Error(`no output within ${timeoutMs} ms; stderr: ${run.stderr()}`)),
      timeoutMs,
    ),
  );
  const result = await Promise.race([run.lines.next(), timeout]);
  if (result.done) throw new Error(`grove exited; stderr: ${run.stderr()}`);
  // A start slower than 5 s (a loaded machine) says what it waits for before the ready line.
  if (result.value.startsWith('{"event":"waiting"')) return nextLine(run, timeoutMs);
  return result.value;
}

/** Records every module file the process loads, and writes their URLs to $GROVE_MODULE_PROBE on exit. */
const PROBE = `import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
const files = [];
registerHooks({ load(url, context, next) { files.push(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.GROVE_MODULE_PROBE, JSON.stringify(files)));
`;

/**
 * Runs `grove <args>` to its end and returns its exit code, stdout, and the sources of the modules
 * it loaded relative to the repository root: for the bundle's chunks, the sources their source
 * maps name (node_modules' included), for anything else the file itself.
 */
async function loadedBy(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; sources: string[] }> {
  const dir = await makeTempDir('grove-cli-probe-');
  const probe = path.join(dir, 'probe.mjs');
  const report = path.join(dir, 'modules.json');
  await writeFile(probe, PROBE);
  const run = runGroveWith(
    { env: { ...env, GROVE_MODULE_PROBE: report }, nodeOptions: ['--import', probe] },
    ...args,
  );
  let stdout = '';
  run.child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await run.exit;
  const sources = new Set<string>();
  for (const url of JSON.parse(await readFile(report, 'utf8')) as string[]) {
    if (!url.startsWith('file:') || url === `file://${probe}`) continue;
    const file = fileURLToPath(url);
    if (!file.startsWith(path.join(ROOT, 'out/cli/'))) {
      sources.add(path.relative(ROOT, file));
      continue;
    }
    const map = JSON.parse(await readFile(`${file}.map`, 'utf8').catch(() => '{}')) as {
      sources?: string[];
    };
    for (const source of map.sources ?? []) {
      sources.add(path.relative(ROOT, path.resolve(path.dirname(file), source)));
    }
  }
  return { code, stdout, sources: [...sources].sort() };
}

describe('grove', () => {
  it('prints its version from package.json, loading nothing but bin/grove.js', async () => {
    for (const flag of ['--version', '-v']) {
      const { code, stdout, sources } = await loadedBy({}, flag);
      expect(code).toBe(0);
      expect(stdout).toBe(`${packageJson.version}\n`);
      expect(sources).toEqual(['bin/grove.js']);
    }
  });

  it('prints its usage from the bundle, loading no command', async () => {
    const { code, stdout, sources } = await loadedBy({}, '--help');
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: grove serve [options] [<repo-path>...]');
    expect(sources).toEqual(expect.arrayContaining(['bin/grove.js', 'main/headless/cli.ts']));
    // Nothing of a command, and no dependency.
    expect(
      sources.filter(
        (source) =>
          !/^(bin|main\/(headless\/(cli|usage)|platform|host\/data-directory))\b/.test(source) &&
          source !== 'package.json',
      ),
    ).toEqual([]);
  });

  it('loads the bridge for `bridge`, never the host or the UI server', async () => {
    const plain = await makeTempDir();
    const { code, sources } = await loadedBy({}, 'bridge', plain);
    expect(code).toBe(1); // not a git worktree
    expect(sources).toEqual(expect.arrayContaining(['main/bridge/bridge-command.ts']));
    expect(
      sources.filter((source) =>
        /^main\/(host\/host|headless\/(serve-command|ui-server))\.ts$/.test(source),
      ),
    ).toEqual([]);
  });

  it('runs from its TypeScript sources with GROVE_CLI_ENTRY=source (a checkout not built yet)', async () => {
    const { code, stdout, sources } = await loadedBy({ GROVE_CLI_ENTRY: 'source' }, '--help');
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: grove serve [options] [<repo-path>...]');
    expect(sources).toContain('main/headless/cli.ts');
    expect(sources.filter((source) => source.startsWith('out/'))).toEqual([]);
  });
});

describe('grove serve', () => {
  it('prints a ready line with every worktree, serves them, and stops cleanly on SIGTERM', async () => {
    const repo = await makeTempRepo();
    const linked = await addWorktree(repo, 'feature-x');
    const run = runGrove('serve', '--json', '--no-ui', '--data-dir', await makeTempDir(), linked);
    const ready = JSON.parse(await nextLine(run)) as {
      event: string;
      ui: string | null;
      worktrees: { path: string; branch: string; sse: string; mcp: string; token: string }[];
    };
    expect(ready.event).toBe('ready');
    expect(ready.ui).toBeNull();
    expect(ready.worktrees.map(({ path, branch }) => ({ path, branch }))).toEqual([
      { path: repo.root, branch: 'main' },
      { path: linked, branch: 'feature-x' },
    ]);
    for (const worktree of ready.worktrees) {
      expect(worktree.sse).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sse$/);
      expect(worktree.mcp).toBe(worktree.sse.replace(/\/sse$/, '/mcp'));
      const health = await fetch(worktree.mcp.replace(/\/mcp$/, '/healthz'), {
        headers: { Authorization: `Bearer ${worktree.token}` },
      });
      expect(health.status).toBe(200);
    }

    run.child.kill('SIGTERM');
    const lines: { event: string; worktree?: { path: string; status: { state: string } } }[] = [];
    do lines.push(JSON.parse(await nextLine(run)));
    while (lines.at(-1)!.event !== 'stopped');
    // Events printed before the signal (reconciliation state, status changes) may come first;
    // the last word on each worktree is that its server stopped, then the host says it is done.
    const lastState = new Map<string, string>();
    for (const line of lines) {
      if (line.event === 'worktree-changed')
        lastState.set(line.worktree!.path, line.worktree!.status.state);
    }
    expect(Object.fromEntries(lastState)).toEqual({ [repo.root]: 'stopped', [linked]: 'stopped' });
    expect(await run.exit).toBe(0);
    for (const worktree of ready.worktrees) {
      expect(await isPortOpen(Number(new URL(worktree.mcp).port))).toBe(false);
    }
    await repo.cleanup();
  });

  it.runIf(process.platform === 'linux')(
    'leaves no zombie child under its worktree processes (4 worktrees, watchers started)',
    async () => {
      const repo = await makeTempRepo({ 'a.txt': 'a\n' });
      // One after another: concurrent `git worktree add` in one repository races inside git
      // ("failed to read .git/worktrees/two/commondir").
      const linked: string[] = [];
      for (const name of ['one', 'two', 'three']) linked.push(await addWorktree(repo, name));
      const run = runGrove(
        'serve',
        '--json',
        '--no-ui',
        '--data-dir',
        await makeTempDir(),
        repo.root,
      );
      const ready = JSON.parse(await nextLine(run)) as { worktrees: { path: string }[] };
      expect(ready.worktrees.map((worktree) => worktree.path).sort()).toEqual(
        [repo.root, ...linked].sort(),
      );
      // A worktree's first reconciliation state comes from its watcher once it has subscribed
      // (which, left to pick its backend, leaves a zombie shell).
      // A worktree's first state can also come before the ready line, when nobody listens yet:
      // wait for the four, or at most 20 s (a zombie, once made, is never reaped: it stays).
      const watching = new Set<string>();
      const until = Date.now() + 20_000;
      while (watching.size < 4 && Date.now() < until) {
        const text = await nextLine(run, Math.max(1, until - Date.now())).catch(() => null);
        if (text === null) break;
        const line = JSON.parse(text) as { event: string; worktreeId?: string };
        if (line.event === 'reconcile-state') watching.add(line.worktreeId!);
      }
      const worktreeProcesses = (await childProcesses(run.child.pid!)).filter((child) =>
        child.args.some((arg) => arg.endsWith('worktree-process.js')),
      );
      expect(worktreeProcesses).toHaveLength(4);
      for (const worktreeProcess of worktreeProcesses) {
        expect(await zombieChildren(worktreeProcess.pid)).toEqual([]);
      }
      expect(await zombieChildren(run.child.pid!)).toEqual([]);
      run.child.kill('SIGTERM');
      expect(await run.exit).toBe(0);
      await repo.cleanup();
    },
    120_000,
  );

  it('offers the just task tools only with --just-tasks', async () => {
    const repo = await makeTempRepo({ justfile: 'hello:\n    echo hi\n' });
    const toolNames = async (...flags: string[]): Promise<string[]> => {
      const run = runGrove(
        'serve',
        '--json',
        '--no-ui',
        '--data-dir',
        await makeTempDir(),
        ...flags,
        repo.root,
      );
      const ready = JSON.parse(await nextLine(run)) as {
        worktrees: { mcp: string; token: string }[];
      };
      const { mcp, token } = ready.worktrees[0]!;
      const { client } = await connectClient(Number(new URL(mcp).port), 'legacy-http', token);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      await client.close();
      run.child.kill('SIGTERM');
      await run.exit;
      return names;
    };
    expect(await toolNames()).not.toContain('run_just_task');
    expect(await toolNames('--just-tasks')).toEqual(
      expect.arrayContaining(['list_just_tasks', 'run_just_task', 'read_file']),
    );
  });

  it('prints branch, path, URLs, token and the UI URL for people', async () => {
    const repo = await makeTempRepo();
    const run = runGrove('serve', '--ui-port', '0', '--data-dir', await makeTempDir(), repo.root);
    let output = '';
    while (!output.includes('Press Ctrl+C to stop.')) output += (await nextLine(run)) + '\n';
    expect(output).toContain(`main  ${repo.root}`);
    expect(output).toMatch(/SSE {5}http:\/\/127\.0\.0\.1:\d+\/sse/);
    expect(output).toMatch(/HTTP {4}http:\/\/127\.0\.0\.1:\d+\/mcp/);
    expect(output).toMatch(/token {3}[A-Za-z0-9_-]{43}/);
    const ui = /UI: (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(output)?.[1];
    expect(ui).toBeDefined();
    const page = await fetch(ui!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(0);
    await repo.cleanup();
  });

  it('checks a worktree with one listing, loading SQLite only once there is a hash cache', async () => {
    const repo = await makeTempRepo({
      '.notarai/app.spec.yaml': specGoverning('App', 'src/**'),
      'src/a.ts': 'a\n',
    });
    await writeFile(path.join(repo.root, 'notes.txt'), 'untracked\n');
    // Every git command the check runs, through a git that logs it and runs the real one.
    const git = await makeLoggingGit();
    const env = { PATH: git.path, GROVE_CACHE_DIR: await makeTempDir() };
    const { code, stdout, sources } = await loadedBy(env, 'check', '--format', 'json', repo.root);
    // Both listings count: the tracked README and the untracked notes no spec governs.
    expect(code).toBe(0);
    const { findings } = JSON.parse(stdout) as { findings: { type: string; file_path: string }[] };
    expect(
      findings.filter((item) => item.type === 'coverage_gap').map((item) => item.file_path),
    ).toEqual(['README.md', 'notes.txt']);
    // One listing: each of its git commands runs once.
    const listings = (await git.runs()).filter((line) => /ls-files/.test(line));
    expect(listings.sort()).toEqual([
      '-c core.fsmonitor=false -c core.quotepath=false ls-files -z --cached',
      '-c core.fsmonitor=false -c core.quotepath=false ls-files -z --others --exclude-standard',
    ]);
    expect(sources.filter((source) => source.includes('better-sqlite3'))).toEqual([]);

    // With a hash cache, the bundle loads SQLite at its first open and reads the rows: a file
    // reconciled, then edited, is changed since reconciliation.
    const engine = new ReconcileEngine({ root: repo.root });
    await engine.markReconciled(['src/a.ts']);
    engine.close();
    await writeFile(path.join(repo.root, 'src/a.ts'), 'a, edited\n');
    const cached = await loadedBy(env, 'check', '--format', 'json', repo.root);
    const changed = (JSON.parse(cached.stdout) as { findings: { type: string }[] }).findings.filter(
      (item) => item.type === 'changed_since_reconciliation',
    );
    expect(changed).toMatchObject([{ file_path: 'src/a.ts' }]);
    expect(cached.sources).toContain('node_modules/better-sqlite3/lib/database.js');
    await repo.cleanup();
  });

  it('refuses a path that is not a git repository, with a clear error and a non-zero exit', async () => {
    const plain = await makeTempDir();
    const run = runGrove('serve', '--no-ui', '--data-dir', await makeTempDir(), plain);
    expect(await run.exit).toBe(1);
    expect(run.stderr()).toBe(`grove: not a git repository: ${plain}\n`);
  });

  it.skipIf(process.platform !== 'linux')(
    'refuses /proc with a clear error, and keeps its data directory private (0700)',
    async () => {
      const dataDir = path.join(await makeTempDir(), 'Grove');
      const run = runGrove('serve', '--no-ui', '--data-dir', dataDir, '/proc');
      expect(await run.exit).toBe(1);
      expect(run.stderr()).toBe(
        'grove: the path /proc is inside /proc, a system directory, not a git work tree: ' +
          'Grove will not serve it\n',
      );
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
      expect((await stat(path.join(dataDir, 'grove.db'))).mode & 0o777).toBe(0o600);
    },
  );

  it('refuses a path that does not exist', async () => {
    const missing = path.join(await makeTempDir(), 'missing');
    const run = runGrove('serve', '--no-ui', '--data-dir', await makeTempDir(), missing);
    expect(await run.exit).toBe(1);
    expect(run.stderr()).toBe(`grove: path does not exist: ${missing}\n`);
  });

  it('explains usage errors', async () => {
    const dataDir = await makeTempDir();
    const noRepo = runGrove('serve', '--data-dir', dataDir);
    expect(await noRepo.exit).toBe(2);
    expect(noRepo.stderr()).toContain(
      `grove: no repositories opened before in ${dataDir}: give a path`,
    );
    const badPort = runGrove('serve', '--ui-port', 'eighty', '.');
    expect(await badPort.exit).toBe(2);
    expect(badPort.stderr()).toContain('--ui-port must be a port number (0-65535), got eighty');
    // The bridge's stdout belongs to the protocol: its usage goes to stderr.
    const noPath = runGrove('bridge');
    const stdout: string[] = [];
    for await (const line of noPath.lines) stdout.push(line);
    expect(await noPath.exit).toBe(2);
    expect(noPath.stderr()).toContain('grove bridge takes one worktree path, got 0');
    expect(noPath.stderr()).toContain('Usage: grove bridge [options] <worktree-path>');
    expect(stdout).toEqual([]);
  });
});
