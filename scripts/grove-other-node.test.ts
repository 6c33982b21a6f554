// `grove` started by a Node other than the one it was installed for (issue 32): the system's Node
// 20, on which the native SQLite binding built for the pinned Node 24 dies with signal 11. Each
// command runs as a user runs it, `node bin/grove.js ...` with that other Node, and must work
// (bin/grove.js runs itself again under the installed Node: bin/other-node.js) or say in one line
// which Node it needs — never end on a signal. The other Node is the first `node` outside
// node_modules whose ABI differs from the pinned one (the system's Node 20 here and in CI); a
// machine without one gets Node 20 from the npm registry (`npm pack node-<os>-<cpu>@20`, kept in
// node_modules/.cache/grove/), as scripts/install-just.mjs gets `just`.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../package.json' with { type: 'json' };
import { randomFirstPort } from '../main/testing/net.ts';
import { makeTempDir, makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GROVE = path.join(ROOT, 'bin', 'grove.js');
/** The Node the tests run on: the pinned one, which `npm install` recorded. */
const PINNED = process.execPath;

/** The ABI of the Node at `node`, or undefined when it does not run. */
async function abiOf(node: string): Promise<string | undefined> {
  try {
    const { stdout } = await run(node, ['-p', 'process.versions.modules'], { timeout: 30_000 });
    return stdout.trim();
  } catch {
    return undefined;
  }
}

/** Node 20 from the npm registry, fetched once into node_modules/.cache/grove/. */
async function fetchNode20(): Promise<string> {
  const spec = `node-${process.platform}-${process.arch}@20`;
  const binary = path.join(ROOT, 'node_modules', '.cache', 'grove', 'node-20', 'node');
  if (existsSync(binary)) return binary;
  const scratch = await mkdtemp(path.join(tmpdir(), 'grove-node20-'));
  try {
    const { stdout } = await run('npm', ['pack', spec, '--silent', '--pack-destination', scratch], {
      timeout: 600_000,
    });
    const tarball = path.join(scratch, stdout.trim().split('\n').pop()!);
    await run('tar', ['-xzf', tarball, '-C', scratch]);
    await mkdir(path.dirname(binary), { recursive: true });
    await copyFile(path.join(scratch, 'package', 'bin', 'node'), `${binary}.partial`);
    await chmod(`${binary}.partial`, 0o755);
    await rename(`${binary}.partial`, binary);
    return binary;
  } catch (error) {
    throw new Error(
      `no Node other than the pinned one on PATH, and \`npm pack ${spec}\` failed: ${String(error)}`,
      { cause: error },
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** A Node whose ABI is not the pinned one's: the system's, else Node 20 from the registry. */
async function otherNode(): Promise<string> {
  const pinnedAbi = process.versions.modules;
  const directories = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin'];
  for (const directory of directories) {
    const candidate = path.join(directory, 'node');
    if (!directory || candidate.split(path.sep).includes('node_modules')) continue;
    if (!existsSync(candidate) || (await realpath(candidate)) === (await realpath(PINNED))) {
      continue;
    }
    const abi = await abiOf(candidate);
    if (abi !== undefined && abi !== pinnedAbi) return candidate;
  }
  return fetchNode20();
}

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `<node> <script> <args>` in `cwd` to its end. */
function runScript(script: string, node: string, cwd: string, ...args: string[]): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(node, [script, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs `<node> bin/grove.js <args>` in `cwd` to its end. */
const grove = (node: string, cwd: string, ...args: string[]): Promise<Ended> =>
  runScript(GROVE, node, cwd, ...args);

/** The SDK client's transport over a child process's stdin and stdout (one message a line). */
class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly child: ChildProcessWithoutNullStreams;
  constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
  }
  async start(): Promise<void> {
    createInterface({ input: this.child.stdout }).on('line', (line) =>
      this.onmessage?.(JSON.parse(line) as JSONRPCMessage),
    );
    this.child.once('exit', () => this.onclose?.());
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }
  async close(): Promise<void> {
    this.child.stdin.end();
  }
}

/** A line of `grove serve --json`. */
interface ServeEvent {
  event: string;
  worktrees?: { path: string; mcp: string; token: string }[];
}

const SPEC =
  "schema_version: '0.8'\nintent: App\nbehaviors:\n  - name: greets\n    given: a user\n" +
  '    then: a greeting\n    tested_by:\n      - tests/app.test.ts\n' +
  'artifacts:\n  code:\n    - path: src/**\n    - path: tests/**\n    - path: README.md\n';

let node: string;
let repo: TempRepo;
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  node = await otherNode();
  repo = await makeTempRepo({
    '.notarai/app.spec.yaml': SPEC,
    'src/app.ts': 'export const app = 1;\n',
    'tests/app.test.ts': 'test\n',
    'README.md': '# app\n',
  });
  cleanups.push(() => repo.cleanup());
}, 600_000);
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('grove started by another Node', () => {
  it('is a Node whose native ABI is not the installed one (else this file proves nothing)', async () => {
    expect(await abiOf(node)).not.toBe(process.versions.modules);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`serves a repository, and stops cleanly on ${signal} to the process it started`, async () => {
      const dataDir = await makeTempDir('grove-other-node-data-');
      const child = spawn(
        node,
        [GROVE, 'serve', '--json', '--no-ui', '--data-dir', dataDir, repo.root],
        { env: { ...process.env, GROVE_FIRST_PORT: String(randomFirstPort()) } },
      );
      cleanups.push(async () => void child.kill('SIGKILL'));
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.once('exit', (code, exitSignal) => resolve([code, exitSignal])),
      );
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const next = async (): Promise<ServeEvent> => {
        const line = await lines.next();
        if (line.done) throw new Error(`grove serve ended; stderr: ${stderr}`);
        return JSON.parse(line.value) as ServeEvent;
      };
      let ready = await next();
      while (ready.event === 'waiting') ready = await next();
      expect(ready.event, stderr).toBe('ready');
      const [worktree] = ready.worktrees!;
      expect(worktree!.path).toBe(repo.root);
      const health = await fetch(worktree!.mcp.replace(/\/mcp$/, '/healthz'), {
        headers: { Authorization: `Bearer ${worktree!.token}` },
      });
      expect(health.status).toBe(200);

      child.kill(signal);
      let last = await next();
      while (last.event !== 'stopped') last = await next();
      expect(await ended).toEqual([0, null]);
    });
  }

  it('bridges a stdio client (initialize, tools/list, a mark), then check and score read the mark', async () => {
    const statusOf = async (): Promise<string> => {
      const { stdout } = await grove(node, repo.root, 'score', '--format', 'json');
      return (JSON.parse(stdout) as { specs: { status: string }[] }).specs[0]!.status;
    };
    expect(await statusOf()).toBe('review');
    const dataDir = await makeTempDir('grove-other-node-nohost-');
    const child = spawn(node, [GROVE, 'bridge', '--data-dir', dataDir, repo.root], {
      stdio: 'pipe',
    });
    cleanups.push(async () => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (code, signal) => resolve([code, signal])),
    );
    const client = new Client({ name: 'other-node-test', version: '1.0.0' });
    await client.connect(new ChildStdioTransport(child));
    expect(client.getServerVersion()?.name).toMatch(/grove/i);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('mark_reconciled');
    const marked = await client.callTool({
      name: 'mark_reconciled',
      arguments: { files: ['.notarai/app.spec.yaml', 'src/app.ts', 'tests/app.test.ts'] },
    });
    expect(marked.structuredContent).toMatchObject({ updated: 3, rejected: [] });
    expect(existsSync(path.join(repo.root, '.notarai/.cache/notarai.db'))).toBe(true);
    await client.close();
    expect(await ended).toEqual([0, null]);
    // Its one word on stderr: this data directory has no host, so it served the worktree itself.
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/no Grove host uses/)]);

    // With the hash cache there (the file Node 20 crashed on), both commands answer as they do
    // on the installed Node.
    for (const args of [['check'], ['score'], ['score', '--format', 'json']]) {
      const other = await grove(node, repo.root, ...args);
      const pinned = await grove(PINNED, repo.root, ...args);
      expect(other, other.stderr).toMatchObject({ code: 0, signal: null });
      expect(other).toEqual(pinned);
    }
    // And the mark counts: never reconciled, the spec was due for review; just marked, healthy.
    expect(await statusOf()).toBe('healthy');
  }, 120_000);

  it("passes on the command's exit status (check: 2 without .notarai/)", async () => {
    const plain = await makeTempRepo({ 'README.md': 'hi\n' });
    cleanups.push(() => plain.cleanup());
    expect(await grove(node, plain.root, 'check')).toEqual({
      code: 2,
      signal: null,
      stdout: '',
      stderr: 'Error: .notarai/ directory not found. Run `notarai init` first.\n',
    });
  });

  it('answers --version itself, on any Node', async () => {
    expect(await grove(node, repo.root, '--version')).toMatchObject({
      code: 0,
      stdout: `${packageJson.version}\n`,
    });
  });
});

describe("`npm link` (the README's way to have `grove` on PATH)", () => {
  it('gives a `grove` that works from another directory, whatever `node` the PATH has', async () => {
    const prefix = await makeTempDir('grove-npm-prefix-');
    cleanups.push(() => rm(prefix, { recursive: true, force: true }));
    // npm's global prefix, here a temp one: the link goes there, never into the checkout.
    const env = { ...process.env, npm_config_prefix: prefix };
    await run('npm', ['link', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: ROOT,
      env,
      timeout: 300_000,
    });
    const bin = path.join(prefix, process.platform === 'win32' ? '' : 'bin');
    // The user's PATH: the linked bin directory, and the other Node as `node` (no node_modules).
    const PATH = [
      bin,
      path.dirname(node),
      ...(process.env.PATH ?? '')
        .split(path.delimiter)
        .filter((dir) => !dir.includes('node_modules')),
    ].join(path.delimiter);
    const ended = await new Promise<Ended>((resolve) => {
      const child = spawn('grove', ['score', '--format', 'json'], {
        cwd: repo.root,
        env: { ...process.env, PATH },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
    expect(ended, ended.stderr).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(ended.stdout)).toMatchObject({
      specs: [{ spec_path: '.notarai/app.spec.yaml' }],
    });
    await run('npm', ['rm', '-g', 'grove', '--loglevel=error'], { env, timeout: 300_000 });
  }, 900_000); // npm link asks the registry about the checkout's packages: its speed, not ours
});

describe('grove started by another Node, the installed Node unusable', () => {
  /** A copy of bin/ with its own install record (the checkout's stays as it is). */
  async function installWith(record: object): Promise<string> {
    const install = await makeTempDir('grove-other-node-install-');
    cleanups.push(() => rm(install, { recursive: true, force: true }));
    await mkdir(path.join(install, 'bin'));
    for (const file of ['grove.js', 'other-node.js']) {
      await copyFile(path.join(ROOT, 'bin', file), path.join(install, 'bin', file));
    }
    await copyFile(path.join(ROOT, 'package.json'), path.join(install, 'package.json'));
    await mkdir(path.join(install, 'node_modules', '.cache', 'grove'), { recursive: true });
    await writeFile(
      path.join(install, 'node_modules', '.cache', 'grove', 'runtime.json'),
      JSON.stringify(record),
    );
    return path.join(install, 'bin', 'grove.js');
  }

  it('says in one line which Node it needs when that Node is gone', async () => {
    const copy = await installWith({
      node: 'v24.21.0',
      modules: process.versions.modules,
      execPath: 'node_modules/node/bin/node',
    });
    const ended = await runScript(copy, node, repo.root, 'check');
    expect(ended).toMatchObject({ code: 1, signal: null, stdout: '' });
    const lines = ended.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^grove: Grove runs on Node v24\.21\.0 .* is gone: run `npm ci` in /);
  });

  it('says so in one line, instead of starting itself again and again, when the recorded Node is not it', async () => {
    // The record names the other Node's path with the installed ABI: a wrong record.
    const copy = await installWith({
      node: 'v24.21.0',
      modules: process.versions.modules,
      execPath: node,
    });
    const ended = await runScript(copy, node, repo.root, 'score');
    expect(ended).toMatchObject({ code: 1, signal: null, stdout: '' });
    const lines = ended.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/not the Node v24\.21\.0 .* this install of Grove recorded/);
  });
});
