// list_just_tasks and run_just_task with the real `just` (the pinned copy scripts/install-just.mjs
// installs, put first on PATH by main/testing/just.ts) on real repositories: listing,
// arguments, refusals, deadline, cancellation with the recipe's children, output caps, the
// environment, streamed output, and a missing `just`.
import { existsSync, readFileSync } from 'node:fs';
import { rm, symlink } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../platform/errors.ts';
import { makeTempRepo, writeFiles, type TempRepo } from '../testing/temp-repo.ts';
import { checkArguments, createJustTasks, type JustTasksOptions } from './just-tasks.ts';
import { childEnvironment } from '../platform/run-process.ts';
import type { ToolContext, ToolDefinition } from './tool-definition.ts';
import { putJustOnPath } from '../testing/just.ts';

putJustOnPath();

const JUSTFILE = `
# Greets someone
hello name="world":
    echo "hello {{name}}"

[doc('Prints its words, one per line')]
words first +rest:
    @printf '%s\\n' {{first}} {{rest}}

fail:
    echo going >&2
    exit 3

env:
    echo "grove=[\${GROVE_SECRET_TOKEN:-}] key=[\${SOME_API_KEY:-}] anth=[\${ANTHROPIC_BASE_URL:-}] home=[$HOME]"

sleepy:
    sleep 30 & echo $! > sleeper.pid; wait

loud:
    head -c 200000 /dev/zero | tr '\\0' 'x'; echo; echo the-end

show REF:
    git log -1 --format=%s {{REF}}

# Echoes its words, options too [grove-allow-options]
echo-all +WORDS:
    @echo {{WORDS}}

[metadata("grove-allow-options")]
echo-meta +WORDS:
    @echo {{WORDS}}

leave:
    sleep 601 & echo $! > left.pids
    nohup sleep 602 > /dev/null 2>&1 & echo $! >> left.pids
    setsid sh -c 'sleep 603 & echo $! >> left.pids'
    echo left

escape:
    rm -f escaped.pid
    setsid env -u GROVE_TASK_RUN sh -c 'echo $$ > escaped.pid; exec sleep 604' &
    while [ ! -s escaped.pid ]; do sleep 0.05; done

_hidden:
    echo hidden
`;

let repo: TempRepo;

function tools(options: JustTasksOptions = {}) {
  const tasks = createJustTasks(options);
  const [list, run] = tasks.tools as [ToolDefinition, ToolDefinition];
  return { tasks, list, run };
}

async function call(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  extra: Partial<ToolContext> = {},
  root = repo.root,
): Promise<Record<string, unknown>> {
  const result = await tool.handler(args as never, {
    root,
    signal: new AbortController().signal,
    ...extra,
  });
  return tool.outputSchema.parse(result) as Record<string, unknown>;
}

beforeAll(async () => {
  repo = await makeTempRepo({ justfile: JUSTFILE });
});
afterAll(async () => {
  await repo.cleanup();
});

describe('list_just_tasks', () => {
  it('lists public recipes with doc comments and parameters', async () => {
    const result = await call(tools().list, {});
    expect(result.justfile).toBe('justfile');
    const recipes = result.recipes as { name: string; takes_options?: boolean }[];
    expect(recipes.map((recipe) => recipe.name)).toEqual([
      'echo-all',
      'echo-meta',
      'env',
      'escape',
      'fail',
      'hello',
      'leave',
      'loud',
      'show',
      'sleepy',
      'words',
    ]);
    expect(recipes.find((recipe) => recipe.name === 'hello')).toEqual({
      name: 'hello',
      doc: 'Greets someone',
      parameters: [{ name: 'name', kind: 'optional', default: 'world', option: null }],
      takes_options: false,
    });
    expect(recipes.find((recipe) => recipe.name === 'words')).toEqual({
      name: 'words',
      doc: 'Prints its words, one per line',
      parameters: [
        { name: 'first', kind: 'required', default: null, option: null },
        { name: 'rest', kind: 'one-or-more', default: null, option: null },
      ],
      takes_options: false,
    });
    expect(recipes.find((recipe) => recipe.name === 'echo-all')?.takes_options).toBe(true);
    expect(recipes.find((recipe) => recipe.name === 'echo-meta')?.takes_options).toBe(true);
  });

  it('says so when the worktree root has no justfile, and never uses a parent directory one', async () => {
    const bare = await makeTempRepo();
    try {
      // A justfile above the worktree, which `just` alone would find by searching upward.
      await writeFiles(bare.dir, { justfile: 'outside:\n    echo outside\n' });
      await expect(call(tools().list, {}, {}, bare.root)).rejects.toThrow(
        /no justfile in the worktree root/,
      );
    } finally {
      await bare.cleanup();
    }
  });

  it('never shows the content of a file outside the worktree that the justfile imports', async () => {
    const hostile = await makeTempRepo();
    try {
      const secret = 'SECRET-MARKER-4821';
      await writeFiles(hostile.dir, { 'outside.txt': `first: line\n${secret} here\n` });
      await writeFiles(hostile.root, {
        'link.just': '',
        justfile: `import "../outside.txt"\nok:\n    echo ok\n`,
      });
      const attempt = call(tools().list, {}, {}, hostile.root);
      await expect(attempt).rejects.toThrow(/outside the worktree/);
      await expect(attempt).rejects.not.toThrow(secret);
      // The same through a symlink committed inside the worktree.
      await rm(path.join(hostile.root, 'link.just'));
      await symlink(path.join(hostile.dir, 'outside.txt'), path.join(hostile.root, 'link.just'));
      await writeFiles(hostile.root, { justfile: `import "link.just"\nok:\n    echo ok\n` });
      const linked = call(tools().list, {}, {}, hostile.root);
      await expect(linked).rejects.toThrow(/outside the worktree/);
      await expect(linked).rejects.not.toThrow(secret);
      // An error in the worktree's own justfile is still shown in full.
      await writeFiles(hostile.root, { justfile: 'bad line here\n' });
      await expect(call(tools().list, {}, {}, hostile.root)).rejects.toThrow(/bad line here/);
    } finally {
      await hostile.cleanup();
    }
  });

  it('refuses a justfile that imports or mods anything outside the worktree, by its own line, before just reads it', async () => {
    const hostile = await makeTempRepo();
    try {
      const secret = 'SECRET-DEFAULT-9313';
      await writeFiles(hostile.dir, {
        'outside.just': `# Deploys\ndeploy token="${secret}":\n    echo {{token}}\n`,
        'outside-dir/mod.just': `leak token="${secret}":\n    echo {{token}}\n`,
      });
      await mkfifo(path.join(hostile.dir, 'outside.fifo'));
      await writeFiles(hostile.root, {
        'inc.just': 'inner:\n    echo inner\n',
        'sub/mod.just': 'subtask:\n    echo sub\n',
      });
      await symlink(path.join(hostile.dir, 'outside.just'), path.join(hostile.root, 'link.just'));
      await symlink(path.join(hostile.dir, 'outside-dir'), path.join(hostile.root, 'linked'));
      await symlink(path.join(hostile.dir, 'outside.just'), path.join(hostile.root, 'mine.just'));
      const refused = async (justfile: string, where = 'justfile line 2') => {
        await writeFiles(hostile.root, { justfile });
        const attempt = call(tools().list, {}, {}, hostile.root)
          .then(() => 'listed')
          .catch((error: unknown) => (error as Error).message);
        const message = await attempt;
        expect(message).toMatch(new RegExp(`^${where}: its \`(import|mod)\` `));
        expect(message).toContain('refuses a justfile that pulls in anything from outside');
        expect(message).not.toContain(secret);
        expect(message).not.toContain(hostile.dir);
        expect(message).not.toMatch(/outside\.|outside-dir|\.\.\//);
        return message;
      };
      const ok = 'ok:\n    echo ok\n';
      // Outside by `..`, by an absolute path, through a committed symlink; a file, a directory
      // module, a FIFO; optional or not.
      const byDots = await refused(`# x\nimport '../outside.just'\n${ok}`);
      expect(await refused(`# x\nimport? '../missing-outside.just'\n${ok}`)).toBe(byDots);
      await refused(`# x\nimport '${path.join(hostile.dir, 'outside.just')}'\n${ok}`);
      await refused(`# x\nimport "link.just"\n${ok}`);
      await refused(`# x\nimport '../outside.fifo'\n${ok}`);
      await refused(`# x\nmod linked\n${ok}`);
      await refused(`# x\nmod mine\n${ok}`);
      await refused(`# x\nmod? away '../outside-dir'\n${ok}`);
      await refused(`# x\nimport '~/outside.just'\n${ok}`);
      // A form Grove does not read (a shell-expanded string) is refused too.
      await refused(`# x\nimport x'$HOME/outside.just'\n${ok}`);
      // Through a file the justfile imports from inside: that file's line is named.
      await writeFiles(hostile.root, {
        'inc.just': "inner:\n    echo inner\nimport '../outside.just'\n",
      });
      await refused(`import 'inc.just'\n${ok}`, 'inc.just line 3');
      // Imports and modules that stay inside are read as before.
      await writeFiles(hostile.root, {
        'inc.just': 'inner:\n    echo inner\n',
        justfile: `import 'inc.just'\nimport? 'absent.just'\nmod sub\n${ok}`,
      });
      const listed = await call(tools().list, {}, {}, hostile.root);
      expect((listed.recipes as { name: string }[]).map((recipe) => recipe.name)).toEqual([
        'inner',
        'ok',
      ]);
    } finally {
      await hostile.cleanup();
    }
  });

  it('says clearly when just is not installed', async () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await expect(call(tools().list, {})).rejects.toThrow(/just is not installed/);
    } finally {
      process.env.PATH = saved;
    }
  });
});

describe('run_just_task', () => {
  it('runs a recipe with its arguments and returns the exit code and output', async () => {
    const result = await call(tools().run, { task: 'words', args: ['a', 'b.c', 'x=1'] });
    expect(result).toMatchObject({
      task: 'words',
      args: ['a', 'b.c', 'x=1'],
      exit_code: 0,
      stopped: null,
      stdout: 'a\nb.c\nx=1\n',
      stdout_truncated: false,
    });
    const defaulted = await call(tools().run, { task: 'hello' });
    expect(defaulted.stdout).toBe('hello world\n');
  });

  it('reports a failing recipe by its exit code, with its stderr', async () => {
    const result = await call(tools().run, { task: 'fail' });
    expect(result.exit_code).toBe(3);
    expect(result.stderr).toContain('going');
  });

  it('refuses arguments holding shell metacharacters or whitespace, naming the argument', async () => {
    for (const bad of ['$(id)', '`id`', 'a;b', 'a|b', 'a b', "it's", 'a\nb', '*', '>x', '$HOME']) {
      const attempt = call(tools().run, { task: 'hello', args: [bad] });
      await expect(attempt).rejects.toBeInstanceOf(UserError);
      await expect(attempt).rejects.toThrow(`argument 1 (${JSON.stringify(bad)})`);
    }
    expect(() => checkArguments(['ok', 'x=1', '-v', 'a/b.c', 'a,b', 'u@h:1', '+%'])).not.toThrow();
  });

  it('refuses arguments starting with "-" unless the recipe declares it takes options', async () => {
    const outside = path.join(repo.dir, 'written-by-git-log.txt');
    const attempt = call(tools().run, { task: 'show', args: [`--output=${outside}`] });
    await expect(attempt).rejects.toBeInstanceOf(UserError);
    await expect(attempt).rejects.toThrow(
      `argument 1 (${JSON.stringify(`--output=${outside}`)}) starts with "-": recipe show does ` +
        'not declare that it takes options',
    );
    expect(existsSync(outside)).toBe(false);
    for (const bad of ['-p', '--', '-']) {
      await expect(call(tools().run, { task: 'words', args: ['a', bad] })).rejects.toThrow(
        'argument 2',
      );
    }
    const shown = await call(tools().run, { task: 'show', args: ['HEAD'] });
    expect(shown.exit_code).toBe(0);
    // A recipe that declares it, by its doc comment or by just's [metadata] attribute.
    for (const task of ['echo-all', 'echo-meta']) {
      const echoed = await call(tools().run, { task, args: ['-v', '--x=1', 'plain'] });
      expect(echoed.stdout).toBe('-v --x=1 plain\n');
    }
  });

  it('refuses a recipe that is not listed, private ones included', async () => {
    await expect(call(tools().run, { task: 'deploy' })).rejects.toThrow(
      /no recipe named "deploy" in justfile; recipes: echo-all, echo-meta, env, escape, fail/,
    );
    await expect(call(tools().run, { task: '_hidden' })).rejects.toThrow(/no recipe named/);
  });

  it('refuses argument counts the recipe does not take (just would run extras as recipes)', async () => {
    await expect(call(tools().run, { task: 'hello', args: ['a', 'fail'] })).rejects.toThrow(
      /recipe hello takes 0 to 1 argument\(s\) \(name\); 2 given/,
    );
    await expect(call(tools().run, { task: 'words', args: ['a'] })).rejects.toThrow(/at least 2/);
  });

  it('never runs a second recipe from extra arguments, even for a recipe whose parameters are options', async () => {
    const optioned = await makeTempRepo({
      justfile:
        '[arg("level", long="level")]\nbuild level="1":\n    echo build {{level}}\n\n' +
        '_private:\n    echo PRIVATE-RAN\n',
    });
    try {
      const named = await call(
        tools().run,
        { task: 'build', args: ['--level=2'] },
        {},
        optioned.root,
      );
      expect(named.stdout).toBe('build 2\n');
      // Its own option, but not a value that is an option again.
      await expect(
        call(tools().run, { task: 'build', args: ['--level=--output=x'] }, {}, optioned.root),
      ).rejects.toThrow(/starts with "-"/);
      await expect(
        call(tools().run, { task: 'build', args: ['--other=2'] }, {}, optioned.root),
      ).rejects.toThrow(/starts with "-"/);
      const attempt = call(tools().run, { task: 'build', args: ['_private'] }, {}, optioned.root)
        .then((result) => `${String(result.stdout)}${String(result.stderr)}`)
        .catch((error: unknown) => String(error));
      expect(await attempt).not.toContain('PRIVATE-RAN');
    } finally {
      await optioned.cleanup();
    }
  });

  it('passes no Grove token, API key or LLM setting to the recipe', async () => {
    const saved = { ...process.env };
    process.env.GROVE_SECRET_TOKEN = 'grove-secret';
    process.env.SOME_API_KEY = 'key-secret';
    process.env.ANTHROPIC_BASE_URL = 'http://llm.invalid';
    try {
      const result = await call(tools().run, { task: 'env' });
      expect(result.exit_code).toBe(0);
      expect(result.stdout).toBe(`grove=[] key=[] anth=[] home=[${process.env.HOME ?? ''}]\n`);
    } finally {
      for (const key of ['GROVE_SECRET_TOKEN', 'SOME_API_KEY', 'ANTHROPIC_BASE_URL']) {
        if (saved[key] === undefined) delete process.env[key];
      }
    }
    expect(
      Object.keys(childEnvironment({ GROVE_X: '1', OPENAI_API_KEY: '2', PATH: '/bin' })),
    ).toEqual(['PATH']);
  });

  it('stops a run at its deadline, with the children the recipe started', async () => {
    const { run } = tools({ runTimeoutMs: 1500 });
    const started = Date.now();
    const result = await call(run, { task: 'sleepy' });
    expect(result.stopped).toBe('timeout');
    expect(result.exit_code).toBeNull();
    expect(result.note).toMatch(/stopped after 1.5 s/);
    expect(Date.now() - started).toBeLessThan(10_000);
    await expectGone(readPid());
  });

  it('stops a run when the call is cancelled, and lists it as running meanwhile', async () => {
    const { tasks, run } = tools();
    const controller = new AbortController();
    const attempt = call(run, { task: 'sleepy' }, { signal: controller.signal });
    await waitFor(() => tasks.running().length === 1);
    expect(tasks.running()[0]).toMatchObject({ task: 'sleepy', args: [] });
    await waitFor(() => pidWritten());
    controller.abort();
    await expect(attempt).rejects.toThrow(/cancelled/);
    expect(tasks.running()).toEqual([]);
    await expectGone(readPid());
  });

  it('ends what a recipe leaves behind when it exits, in its group or not (sleep &, nohup, setsid)', async () => {
    const result = await call(tools().run, { task: 'leave' });
    expect(result).toMatchObject({ exit_code: 0, stdout: 'left\n' });
    const pids = readFileSync(path.join(repo.root, 'left.pids'), 'utf8').trim().split('\n');
    expect(pids).toHaveLength(3);
    for (const pid of pids) await expectGone(Number(pid));
  });

  it('returns when the recipe exits, not when a process that escaped closes its output', async () => {
    // `setsid` and a scrubbed environment: neither the group nor the marker finds it
    // (docs/security.md). It holds the recipe's stdout and stderr for 604 s.
    const result = await call(tools().run, { task: 'escape' });
    const pid = Number(readFileSync(path.join(repo.root, 'escaped.pid'), 'utf8').trim());
    try {
      expect(result.exit_code).toBe(0);
      if (process.platform === 'linux') expect(running(pid)).toBe(true);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });

  it('keeps the last bytes of a long output and says it truncated', async () => {
    const { run } = tools({ maxStdoutBytes: 1000 });
    const result = await call(run, { task: 'loud' });
    expect(result.exit_code).toBe(0);
    expect(result.stdout_truncated).toBe(true);
    expect((result.stdout as string).length).toBe(1000);
    expect(result.stdout).toMatch(/the-end\n$/);
    expect(result.note).toMatch(/stdout truncated to its last 1000 bytes/);
  });

  // `words` is quiet (@): just echoes a recipe's lines on stderr, a pipe of its own whose chunk
  // may be read before or after stdout's, so the last progress message would be either.
  it('streams output to the client as log messages and progress', async () => {
    const logs: string[] = [];
    const progress: (string | undefined)[] = [];
    await call(
      tools().run,
      { task: 'words', args: ['one', 'two'] },
      {
        log: (_level, message) => logs.push(message),
        progress: (_value, _total, message) => progress.push(message),
      },
    );
    expect(logs.join('')).toContain('one\ntwo\n');
    expect(progress[0]).toBe('just words started');
    expect(progress.at(-1)).toBe('two');
  });
});

async function mkfifo(target: string): Promise<void> {
  execFileSync('mkfifo', [target]);
}

const pidFile = (): string => path.join(repo.root, 'sleeper.pid');

function pidWritten(): boolean {
  try {
    return readFileSync(pidFile(), 'utf8').trim() !== '';
  } catch {
    return false;
  }
}

function readPid(): number {
  return Number(readFileSync(pidFile(), 'utf8').trim());
}

/** True while the process runs (a zombie nobody reaped does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function expectGone(pid: number): Promise<void> {
  expect(pid).toBeGreaterThan(0);
  if (process.platform !== 'linux') return;
  await waitFor(() => !running(pid));
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
