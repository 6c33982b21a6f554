// The opt-in task tools: `list_just_tasks` (the recipes of the worktree's justfile, from `just
// --dump --dump-format json`) and `run_just_task` (one of those recipes, with plain-word
// arguments). They break the read-only promise, so a worktree offers them only when its user turned
// them on (worktree-server.ts); off by default. The justfile is untrusted worktree content: `just`
// reads it itself (only the one in the worktree root, never a parent's), nothing is ever pasted into
// a shell by Grove, and arguments holding shell metacharacters are refused because `just` pastes
// arguments into recipe lines. Runs go through main/platform/run-process.ts: a deadline, output
// caps, cancellation that ends the recipe's whole process group, output streamed as progress and
// log messages, and an environment without Grove's own tokens and keys.
import { z } from 'zod';
import { firstFileInRoot, statInsideRoot } from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';
import { childEnvironment, runProcess, type ProcessOutput } from '../platform/run-process.ts';
import { checkJustfileSources } from './justfile-imports.ts';
import { parseToolArguments } from './tool-arguments.ts';
import {
  defineTool,
  MAX_TASKS_RUNNING,
  orNull,
  type ToolContext,
  type ToolDefinition,
} from './tool-definition.ts';
import { LIST_JUST_TASKS, RUN_JUST_TASK } from './tool-constants.ts';

/** Names `just` finds a justfile under, looked for in the worktree root only. */
export const JUSTFILE_NAMES = ['justfile', 'Justfile', 'JUSTFILE', '.justfile'] as const;
/** Longest a recipe may run. */
export const RUN_TIMEOUT_MS = 10 * 60_000;
/** Longest `just --dump` may take. */
export const LIST_TIMEOUT_MS = 10_000;
/** Output kept per stream of a run (the last bytes: a failure's reason is at the end). */
export const MAX_STDOUT_BYTES = 64 * 1024;
export const MAX_STDERR_BYTES = 32 * 1024;
/** How often streamed output is sent to the client, at most. */
const STREAM_INTERVAL_MS = 250;
const MAX_ARGS = 64;
/**
 * What a recipe's doc comment holds (or its `[metadata(...)]` attribute, without the brackets) to
 * declare that it takes arguments starting with `-`. Without it such an argument is refused: a
 * recipe line such as `git log -1 {{REF}}` would hand `--output=<path>` to the command as an
 * option.
 */
export const ALLOW_OPTIONS_MARKER = '[grove-allow-options]';
const ALLOW_OPTIONS_METADATA = 'grove-allow-options';
const MAX_ARG_CHARS = 4096;

/**
 * Characters an argument may not hold: whatever a shell treats specially (quotes, substitution,
 * redirection, pipes, separators, globs, history, comments, home), whitespace and control
 * characters. `just` pastes `{{arg}}` into the recipe line the shell runs.
 */
const SHELL_METACHARACTERS = /[`$\\"';&|<>(){}[\]*?!#~^\s\p{Cc}]/u;

const parameterSchema = z.object({
  name: z.string(),
  kind: z
    .enum(['required', 'optional', 'zero-or-more', 'one-or-more'])
    .describe(
      'required: one argument; optional: one argument or its default; zero-or-more / ' +
        'one-or-more: the remaining arguments (variadic, last).',
    ),
  default: orNull(z.string()).describe('Its default (an expression is shown as just writes it).'),
  option: orNull(z.string()).describe(
    "The option that sets it (`--level`, `-l`: just's `[arg(long=…, short=…)]`), or null for a " +
      'positional parameter.',
  ),
});

const recipeSchema = z.object({
  name: z.string(),
  doc: orNull(z.string()).describe('The doc comment above the recipe, or its [doc] attribute.'),
  parameters: z.array(parameterSchema),
  takes_options: z
    .boolean()
    .describe(
      `True when the recipe declares that it takes arguments starting with \`-\` (${ALLOW_OPTIONS_MARKER} ` +
        'in its doc comment, or `[metadata("grove-allow-options")]`); otherwise such arguments are ' +
        'refused, except its own options.',
    ),
});

export type JustRecipe = z.infer<typeof recipeSchema>;

const listInput = z.strictObject({});
const listOutput = z.object({
  justfile: z.string().describe('The justfile read, relative to the worktree root.'),
  recipes: z.array(recipeSchema).describe('Public recipes (private ones are left out), by name.'),
});
export type JustRecipeList = z.infer<typeof listOutput>;

const runInput = z.strictObject({
  task: z.string().min(1).max(200).describe('A recipe name, as list_just_tasks returns it.'),
  args: z
    .array(z.string().max(MAX_ARG_CHARS))
    .max(MAX_ARGS)
    .default([])
    .describe(
      "The recipe's arguments, one word each. No shell string: whitespace and shell " +
        'metacharacters are refused.',
    ),
});

const runOutput = z.object({
  task: z.string(),
  args: z.array(z.string()),
  exit_code: orNull(z.number().int()).describe('Null when the run was stopped.'),
  stopped: orNull(z.literal('timeout')).describe(
    'timeout: the run passed its deadline and was stopped (a cancelled run ends the call with an error).',
  ),
  duration_ms: z.number().int(),
  stdout: z.string().describe(`Standard output (its last ${MAX_STDOUT_BYTES / 1024} KiB).`),
  stderr: z.string().describe(`Standard error (its last ${MAX_STDERR_BYTES / 1024} KiB).`),
  stdout_truncated: z.boolean(),
  stderr_truncated: z.boolean(),
  note: z.string().optional().describe('What to know about this result (truncation, a stop).'),
});

/** A run in progress, for get_project_context's active tasks and the window. */
export interface RunningTask {
  /** The call's id (ToolContext.callId), or one of this module's own outside a server. */
  id: string;
  task: string;
  args: string[];
  startedAt: number;
  /** Who asked for it (the client's clientInfo name), when known. */
  clientName: string | null;
}

export interface JustTasksOptions {
  /** Longest a run may take (default RUN_TIMEOUT_MS; tests shorten it). */
  runTimeoutMs?: number;
  /** Output kept per stream (defaults MAX_STDOUT_BYTES / MAX_STDERR_BYTES). */
  maxStdoutBytes?: number;
  maxStderrBytes?: number;
  /** The runs going on, whenever a run starts or ends. */
  onRunningChanged?: (runs: RunningTask[]) => void;
}

export interface JustTasks {
  /** list_just_tasks and run_just_task. */
  readonly tools: readonly ToolDefinition[];
  /** The runs going on now, oldest first. */
  running(): RunningTask[];
  /**
   * Stops a run now (its recipe's group and what it left, as a cancel does); its call ends with
   * an error saying who stopped it. False when no run has that id (it already ended).
   */
  stop(id: string, by: string): boolean;
  /** The recipes on offer in `root` (what list_just_tasks returns). */
  listRecipes(root: string, signal: AbortSignal): Promise<JustRecipeList>;
}

const NOT_INSTALLED =
  'just is not installed (no `just` program on the PATH of the Grove server): install it ' +
  '(https://just.systems, a package manager, or `npm install -g rust-just`) and restart the server';

/** The justfile in the root (a regular file inside it), relative and real paths. */
async function findJustfile(root: string): Promise<{ relative: string; real: string }> {
  const found = await firstFileInRoot(root, JUSTFILE_NAMES);
  if (found) return { relative: found.relativePath, real: found.realPath };
  throw new UserError(
    `no justfile in the worktree root (looked for ${JUSTFILE_NAMES.join(', ')})`,
    { code: 'not-found' },
  );
}

/** `just` pinned to the worktree's own justfile and root: it never searches parent directories. */
function justArguments(root: string, justfile: string, rest: readonly string[]): string[] {
  return ['--justfile', justfile, '--working-directory', root, ...rest];
}

/** Where `just` says an error is (`——▶ path:line:col`, relative to the worktree root). */
const ERROR_LOCATION = /^\s*—+▶\s+(.+):\d+:\d+\s*$/u;

/**
 * `just`'s error output, unless it is about a file outside the worktree (a justfile may `import`
 * or `mod` any path): just quotes the offending line and its tokens, and a file outside is never
 * shown, not even in an error. Then only where the error is.
 */
async function errorReport(root: string, stderr: Buffer): Promise<string> {
  const lines = stderr.toString('utf8').trim().split('\n');
  for (const line of lines) {
    const location = ERROR_LOCATION.exec(line)?.[1];
    if (location === undefined) continue;
    const inside = await statInsideRoot(root, location).then(
      (found) => found.stats.isFile(),
      () => false,
    );
    if (!inside) {
      return `the error is in ${location}, outside the worktree (its text is not shown)`;
    }
  }
  return lines.slice(0, 8).join('\n');
}

async function failure(root: string, output: ProcessOutput, what: string): Promise<UserError> {
  if (output.startError?.code === 'ENOENT')
    return new UserError(NOT_INSTALLED, { code: 'unavailable' });
  if (output.stopped === 'timeout') {
    return new UserError(`${what} took longer than ${LIST_TIMEOUT_MS / 1000} s`, {
      code: 'timed-out',
    });
  }
  if (output.stopped === 'cancelled')
    return new UserError(`${what} was cancelled`, { code: 'cancelled' });
  if (output.startError)
    return new UserError(`${what} could not start: ${output.startError.message}`);
  const reason = await errorReport(root, output.stderr);
  return new UserError(`${what} failed (exit ${output.code}): ${reason || 'no message'}`);
}

interface DumpParameter {
  name?: unknown;
  kind?: unknown;
  default?: unknown;
  long?: unknown;
  short?: unknown;
}
interface DumpRecipe {
  name?: unknown;
  doc?: unknown;
  private?: unknown;
  parameters?: unknown;
  attributes?: unknown;
}

function toParameter(raw: DumpParameter): JustRecipe['parameters'][number] {
  const defaultValue =
    raw.default === null || raw.default === undefined
      ? null
      : typeof raw.default === 'string'
        ? raw.default
        : JSON.stringify(raw.default);
  const kind =
    raw.kind === 'plus'
      ? 'one-or-more'
      : raw.kind === 'star'
        ? 'zero-or-more'
        : defaultValue === null
          ? 'required'
          : 'optional';
  const option =
    typeof raw.long === 'string'
      ? `--${raw.long}`
      : typeof raw.short === 'string'
        ? `-${raw.short}`
        : null;
  return { name: String(raw.name), kind, default: defaultValue, option };
}

/** Whether a recipe declares that it takes arguments starting with `-` (ALLOW_OPTIONS_MARKER). */
function declaresOptions(recipe: DumpRecipe): boolean {
  if (typeof recipe.doc === 'string' && recipe.doc.includes(ALLOW_OPTIONS_MARKER)) return true;
  if (!Array.isArray(recipe.attributes)) return false;
  return (recipe.attributes as unknown[]).some((attribute) => {
    const metadata = (attribute as { metadata?: unknown } | null)?.metadata;
    return Array.isArray(metadata) && metadata.includes(ALLOW_OPTIONS_METADATA);
  });
}

/** The public recipes of `just --dump --dump-format json` output, by name. */
export function parseDump(json: string): JustRecipe[] {
  let dump: { recipes?: Record<string, DumpRecipe> };
  try {
    dump = JSON.parse(json) as typeof dump;
  } catch (error) {
    throw new UserError(`just printed something other than JSON: ${(error as Error).message}`);
  }
  return Object.values(dump.recipes ?? {})
    .filter((recipe) => recipe.private !== true && typeof recipe.name === 'string')
    .map((recipe) => ({
      name: recipe.name as string,
      doc: typeof recipe.doc === 'string' ? recipe.doc : null,
      parameters: Array.isArray(recipe.parameters)
        ? (recipe.parameters as DumpParameter[]).map(toParameter)
        : [],
      takes_options: declaresOptions(recipe),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Refuses arguments a recipe line would hand to the shell as more than one plain word. */
export function checkArguments(args: readonly string[]): void {
  args.forEach((arg, index) => {
    const match = SHELL_METACHARACTERS.exec(arg);
    if (match) {
      const shown = JSON.stringify(match[0]);
      throw new UserError(
        `argument ${index + 1} (${JSON.stringify(arg)}) holds ${shown}, a shell metacharacter, ` +
          'whitespace or control character: just pastes arguments into recipe lines, so each ' +
          'argument must be one plain word (letters, digits and - _ . / : = , @ + %)',
      );
    }
  });
}

/**
 * Refuses arguments starting with `-` unless the recipe declares it takes them
 * (ALLOW_OPTIONS_MARKER) or the argument is one of the recipe's own options (`--level`, `-l`,
 * `--level=<value>` with a value not starting with `-`), which `just` itself reads.
 */
export function checkOptions(recipe: JustRecipe, args: readonly string[]): void {
  if (recipe.takes_options) return;
  const own = new Set(recipe.parameters.flatMap((p) => (p.option === null ? [] : [p.option])));
  args.forEach((arg, index) => {
    if (!arg.startsWith('-')) return;
    const equals = arg.indexOf('=');
    const name = equals === -1 ? arg : arg.slice(0, equals);
    const value = equals === -1 ? '' : arg.slice(equals + 1);
    if (own.has(name) && !value.startsWith('-')) return;
    throw new UserError(
      `argument ${index + 1} (${JSON.stringify(arg)}) starts with "-": recipe ${recipe.name} ` +
        'does not declare that it takes options, and a command in it could read the argument as ' +
        `one (its author can add ${ALLOW_OPTIONS_MARKER} to its doc comment)`,
    );
  });
}

/** Refuses argument counts the recipe does not take (just would run the extra as recipes). */
function checkArity(recipe: JustRecipe, count: number): void {
  const params = recipe.parameters;
  const min = params.filter((p) => p.kind === 'required' || p.kind === 'one-or-more').length;
  const variadic = params.some((p) => p.kind === 'zero-or-more' || p.kind === 'one-or-more');
  const max = variadic ? Infinity : params.length;
  if (count < min || count > max) {
    const takes =
      max === Infinity ? `at least ${min}` : min === max ? `exactly ${min}` : `${min} to ${max}`;
    const names = params.map((p) => p.name).join(', ') || 'none';
    throw new UserError(
      `recipe ${recipe.name} takes ${takes} argument(s) (${names}); ${count} given`,
    );
  }
}

/** Sends a run's output to its client as it comes: log messages and progress, throttled. */
function outputStreamer(ctx: ToolContext, task: string) {
  let pending = '';
  let lines = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    timer = undefined;
    if (pending === '') return;
    const text = pending;
    pending = '';
    const last = text.trimEnd().split('\n').pop() ?? '';
    lines += text.split('\n').length - 1;
    ctx.log?.('info', text, { task });
    ctx.progress?.(lines, undefined, last.slice(0, 200));
  };
  return {
    push(chunk: Buffer): void {
      pending += chunk.toString('utf8');
      if (pending.length > 16 * 1024) pending = pending.slice(-16 * 1024);
      timer ??= setTimeout(flush, STREAM_INTERVAL_MS);
    },
    end(): void {
      clearTimeout(timer);
      flush();
    },
  };
}

export function createJustTasks(options: JustTasksOptions = {}): JustTasks {
  const runTimeoutMs = options.runTimeoutMs ?? RUN_TIMEOUT_MS;
  const maxStdout = options.maxStdoutBytes ?? MAX_STDOUT_BYTES;
  const maxStderr = options.maxStderrBytes ?? MAX_STDERR_BYTES;
  /** Runs going on, oldest first, each with the controller that stops it. */
  const runs = new Map<string, { run: RunningTask; stopper: AbortController }>();
  let runSequence = 0;
  const running = (): RunningTask[] =>
    [...runs.values()].map(({ run }) => ({ ...run, args: [...run.args] }));
  const changed = (): void => options.onRunningChanged?.(running());

  /** The justfile found and its public recipes (one lookup serves a run's check and its start). */
  const dumpRecipes = async (root: string, signal: AbortSignal) => {
    const justfile = await findJustfile(root);
    await checkJustfileSources(root, justfile.relative);
    const output = await runProcess(
      'just',
      justArguments(root, justfile.real, ['--dump', '--dump-format', 'json']),
      {
        cwd: root,
        env: childEnvironment(),
        signal,
        timeoutMs: LIST_TIMEOUT_MS,
        maxStdoutBytes: 8 * 1024 * 1024,
        onOverflow: 'kill',
        processGroup: true,
      },
    );
    if (output.code !== 0) throw await failure(root, output, 'just --dump');
    return { justfile, recipes: parseDump(output.stdout.toString('utf8')) };
  };

  const listRecipes = async (root: string, signal: AbortSignal): Promise<JustRecipeList> => {
    const { justfile, recipes } = await dumpRecipes(root, signal);
    return { justfile: justfile.relative, recipes };
  };

  const listTool = defineTool({
    name: LIST_JUST_TASKS,
    title: 'List just tasks',
    description:
      "The recipes of this worktree's justfile (the one in its root), with their doc comments " +
      'and parameters, from `just --dump --dump-format json`; private recipes are left out. ' +
      'Opt-in: offered only when the user turned on just tasks for this worktree in Grove.',
    inputSchema: listInput,
    outputSchema: listOutput,
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    deadlineMs: LIST_TIMEOUT_MS + 5_000,
    handler: async (rawArgs, ctx) => {
      parseToolArguments('list_just_tasks', listInput, rawArgs);
      return listRecipes(ctx.root, ctx.signal);
    },
  });

  const runTool = defineTool({
    name: RUN_JUST_TASK,
    title: 'Run a just task',
    description:
      "Runs one recipe of this worktree's justfile (a name list_just_tasks returns) in the " +
      'worktree with `just`, and returns its exit code and output. The recipe runs with your ' +
      "user's rights and may change files, the network or anything else: it is not read-only. " +
      "`args` are the recipe's arguments, one plain word each; whitespace and shell " +
      'metacharacters are refused, and so are arguments starting with `-` unless they are the ' +
      "recipe's own options (`option` in list_just_tasks) or the recipe declares " +
      `${ALLOW_OPTIONS_MARKER} in its doc comment (\`takes_options\`). Output is streamed as ` +
      `progress and log messages while it runs; the result keeps the last ${MAX_STDOUT_BYTES / 1024} KiB of stdout and ` +
      `${MAX_STDERR_BYTES / 1024} KiB of stderr. A run is stopped after ` +
      `${RUN_TIMEOUT_MS / 60_000} minutes, when the call is cancelled, when its client goes away ` +
      '(closes its session or connection), or when the user stops it in Grove; when the recipe ' +
      'exits, what it left running is ended too. At most ' +
      `${MAX_TASKS_RUNNING} runs at once per worktree (more are refused). Opt-in: offered only ` +
      'when the user turned on just tasks for this worktree in Grove.',
    inputSchema: runInput,
    outputSchema: runOutput,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    deadlineMs: RUN_TIMEOUT_MS + 30_000,
    // Its own bound, apart from the read tools' (server-factory.ts MAX_TASKS_RUNNING).
    runsTask: true,
    handler: async (rawArgs, ctx) => {
      const { task, args } = parseToolArguments('run_just_task', runInput, rawArgs);
      checkArguments(args);
      const { justfile, recipes } = await dumpRecipes(ctx.root, ctx.signal);
      const recipe = recipes.find((candidate) => candidate.name === task);
      if (!recipe) {
        const names = recipes.map((candidate) => candidate.name).join(', ') || 'none';
        throw new UserError(
          `no recipe named ${JSON.stringify(task)} in ${justfile.relative}; recipes: ${names}`,
          {
            code: 'not-found',
          },
        );
      }
      checkArity(recipe, args.length);
      checkOptions(recipe, args);
      const run: RunningTask = {
        id: ctx.callId ?? `run-${++runSequence}`,
        task,
        args,
        startedAt: Date.now(),
        clientName: ctx.clientName ?? null,
      };
      const stopper = new AbortController();
      runs.set(run.id, { run, stopper });
      changed();
      const stream = outputStreamer(ctx, task);
      ctx.progress?.(0, undefined, `just ${task} started`);
      let output: ProcessOutput;
      try {
        output = await runProcess(
          'just',
          justArguments(ctx.root, justfile.real, ['--', task, ...args]),
          {
            cwd: ctx.root,
            // One recipe per run: arguments a recipe does not take as positional ones (its
            // parameters may be options, `[arg(long)]`) are an error, never more recipes.
            env: { ...childEnvironment(), JUST_ONE: 'true' },
            signal: AbortSignal.any([ctx.signal, stopper.signal]),
            timeoutMs: runTimeoutMs,
            maxStdoutBytes: maxStdout,
            maxStderrBytes: maxStderr,
            onOverflow: 'truncate',
            keep: 'tail',
            processGroup: true,
            // And what left the group (setsid, nohup ... &): ended when the recipe ends.
            markDescendants: true,
            onStdout: stream.push,
            onStderr: stream.push,
          },
        );
      } finally {
        runs.delete(run.id);
        changed();
        stream.end();
      }
      if (output.startError) throw await failure(ctx.root, output, `just ${task}`);
      if (output.stopped === 'cancelled' && stopper.signal.aborted && !ctx.signal.aborted) {
        throw new UserError(`just ${task} was stopped ${String(stopper.signal.reason)}`, {
          code: 'cancelled',
        });
      }
      if (output.stopped === 'cancelled') {
        throw new UserError(`just ${task} was cancelled and stopped`, { code: 'cancelled' });
      }
      const notes: string[] = [];
      if (output.stopped === 'timeout') {
        notes.push(`stopped after ${runTimeoutMs / 1000} s (the deadline of a run)`);
      }
      if (output.stdoutTruncated) notes.push(`stdout truncated to its last ${maxStdout} bytes`);
      if (output.stderrTruncated) notes.push(`stderr truncated to its last ${maxStderr} bytes`);
      return {
        task,
        args,
        exit_code: output.code,
        stopped: output.stopped === 'timeout' ? ('timeout' as const) : null,
        duration_ms: Date.now() - run.startedAt,
        stdout: output.stdout.toString('utf8'),
        stderr: output.stderr.toString('utf8'),
        stdout_truncated: output.stdoutTruncated,
        stderr_truncated: output.stderrTruncated,
        ...(notes.length === 0 ? {} : { note: notes.join('; ') }),
      };
    },
  });

  return {
    tools: [listTool, runTool],
    running,
    stop(id, by) {
      const entry = runs.get(id);
      if (entry === undefined) return false;
      entry.stopper.abort(by);
      return true;
    },
    listRecipes,
  };
}

/** The two tool definitions without a server (docs, tests). */
export const justTaskTools: readonly ToolDefinition[] = createJustTasks().tools;
