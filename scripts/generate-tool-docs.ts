// Writes docs/tools.md, the reference of everything a worktree's server offers: every tool of the
// one registry (the file tools, main/tools/index.ts, and the reconciliation tools,
// main/tools/reconcile-tools.ts, and the opt-in just tasks, main/tools/just-tasks.ts) with its title, description, annotations, deadline and the
// fields of its input and output schemas (as the JSON Schema clients receive), then the prompts
// and resource templates as a real server lists them to a real MCP client. `npm run docs:tools`
// rewrites the file; `--check` only says whether it is up to date. A unit test regenerates it in
// memory and compares, so the reference never drifts from the code.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { connectClient, startTestListener } from '../main/testing/mcp-clients.ts';
import { registerReconcileMcp } from '../main/tools/reconcile-mcp-registration.ts';
import { createReconcileTools } from '../main/tools/reconcile-tools.ts';
import { createFileTools } from '../main/tools/index.ts';
import { justTaskTools } from '../main/tools/just-tasks.ts';
import { toolDeadlineMs, type ToolDefinition } from '../main/tools/tool-definition.ts';

export const TOOLS_DOC_PATH = fileURLToPath(new URL('../docs/tools.md', import.meta.url));

/** The part of JSON Schema the reference reads. */
interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  default?: unknown;
  description: string;
}

/** JavaScript's safe-integer bounds, which zod puts on every `.int()`: not worth printing. */
const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

function bounds(low: number | undefined, high: number | undefined, unit = ''): string {
  const min = low === undefined || Math.abs(low) >= SAFE_INTEGER ? undefined : low;
  const max = high === undefined || Math.abs(high) >= SAFE_INTEGER ? undefined : high;
  if (min === undefined && max === undefined) return '';
  if (min !== undefined && max !== undefined) return ` (${min}–${max}${unit})`;
  return min !== undefined ? ` (≥ ${min}${unit})` : ` (≤ ${max}${unit})`;
}

/** A short type for a schema: `integer (1–2000)`, `string[]`, `"a" \| "b"`, `object \| null`. */
function typeOf(schema: JsonSchema): string {
  if (schema.anyOf !== undefined) return schema.anyOf.map(typeOf).join(' | ');
  if (schema.enum !== undefined)
    return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : (schema.type ?? 'any');
  if (type === 'array') {
    const items = schema.items === undefined ? 'any' : typeOf(schema.items);
    const item = items.includes(' ') ? `(${items})` : items;
    return `${item}[]${bounds(schema.minItems, schema.maxItems, ' items')}`;
  }
  if (type === 'integer' || type === 'number') return type + bounds(schema.minimum, schema.maximum);
  if (type === 'string') return type + bounds(schema.minLength, schema.maxLength, ' chars');
  return type;
}

/** The object schema inside a field (itself, its items, or the non-null branch), if any. */
function nestedObject(schema: JsonSchema): { schema: JsonSchema; suffix: string } | undefined {
  if (schema.properties !== undefined) return { schema, suffix: '' };
  if (schema.items !== undefined) {
    const inner = nestedObject(schema.items);
    return inner && { schema: inner.schema, suffix: `[]${inner.suffix}` };
  }
  for (const branch of schema.anyOf ?? []) {
    const inner = nestedObject(branch);
    if (inner) return inner;
  }
  return undefined;
}

/** Rows for an object's fields, nested fields as `parent.child` / `list[].child`. */
function fieldRows(schema: JsonSchema, prefix = ''): FieldRow[] {
  const rows: FieldRow[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const row: FieldRow = {
      name: prefix + name,
      type: typeOf(field),
      required: required.has(name),
      description: field.description ?? '',
    };
    if (field.default !== undefined) row.default = field.default;
    rows.push(row);
    const inner = nestedObject(field);
    if (inner) rows.push(...fieldRows(inner.schema, `${prefix}${name}${inner.suffix}.`));
  }
  return rows;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function table(rows: FieldRow[], withDefaults: boolean): string[] {
  if (rows.length === 0) return ['No fields.'];
  const header = withDefaults
    ? ['| field | type | required | default | description |', '| --- | --- | --- | --- | --- |']
    : ['| field | type | always | description |', '| --- | --- | --- | --- |'];
  return [
    ...header,
    ...rows.map((row) => {
      const columns = [`\`${row.name}\``, cell(row.type), row.required ? 'yes' : 'no'];
      if (withDefaults) {
        columns.push(row.default === undefined ? '' : cell(`\`${JSON.stringify(row.default)}\``));
      }
      columns.push(cell(row.description));
      return `| ${columns.join(' | ')} |`;
    }),
  ];
}

function annotationsLine(tool: ToolDefinition): string {
  const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = tool.annotations;
  return [
    `readOnlyHint: ${readOnlyHint}`,
    `destructiveHint: ${destructiveHint}`,
    `idempotentHint: ${idempotentHint}`,
    `openWorldHint: ${openWorldHint}`,
  ]
    .map((item) => `\`${item}\``)
    .join(', ');
}

/** What the reference shows for each tool besides its schemas: a call, and typical refusals. */
export interface ToolUsage {
  /** Arguments of an example call (checked against the tool's input schema by the docs test). */
  example: Record<string, unknown>;
  /** Refusals a client may meet, in the words the tool uses (an `isError` result carries them). */
  errors: string[];
}

const PATH_ERRORS = [
  'path escapes the worktree root with "..": "../x"',
  'path resolves outside the worktree root through a symbolic link, which is not allowed: "link"',
  'path is inside .git, which is not readable: ".git/config"',
  'no such file or directory in the worktree: "src/missing.ts"',
];

const SPEC_ERRORS = [
  'spec_path must name a *.spec.yaml file under .notarai/ (got "src/a.ts")',
  'the hash cache .notarai/.cache/notarai.db is locked by another process (…); try again',
];

/** Usage per tool name; the docs test fails when a tool has none. */
export const TOOL_USAGE: Record<string, ToolUsage> = {
  read_file: {
    example: { path: 'src/server.ts', start_line: 1, end_line: 40 },
    errors: [
      ...PATH_ERRORS,
      'not a regular file (a FIFO, socket or device), refusing to read: "fifo"',
      'is a directory, not a file: "src"; use list_directory to see what it contains',
    ],
  },
  read_multiple_files: {
    example: { paths: ['README.md', 'package.json'] },
    errors: ['each path is refused on its own, in its entry of the result; the others are read'],
  },
  list_directory: { example: { path: 'src' }, errors: PATH_ERRORS },
  directory_tree: { example: { path: '.', max_depth: 2 }, errors: PATH_ERRORS },
  get_file_info: { example: { path: 'package.json' }, errors: PATH_ERRORS },
  search_files: {
    example: { patterns: ['**/*.test.ts'], exclude: ['node_modules/**'] },
    errors: [
      'patterns: a glob pattern is empty',
      'patterns: invalid glob pattern: glob expands to more than 1024 alternatives',
      ...PATH_ERRORS.slice(0, 2),
    ],
  },
  grep: {
    example: { pattern: 'TODO', include: ['src/**'], context_lines: 1 },
    errors: [
      'grep took longer than 60 s and was stopped; the regular expression may backtrack badly: …',
      ...PATH_ERRORS.slice(0, 2),
    ],
  },
  get_project_context: { example: {}, errors: [] },
  list_just_tasks: {
    example: {},
    errors: [
      'no justfile in the worktree root (looked for justfile, Justfile, JUSTFILE, .justfile)',
      'just is not installed (no `just` program on the PATH of the Grove server): install it …',
      'just --dump failed (exit 1): error: Unknown setting `foo` …',
    ],
  },
  run_just_task: {
    example: { task: 'test', args: ['unit'] },
    errors: [
      'argument 1 ("$(id)") holds "$", a shell metacharacter, whitespace or control character: just pastes arguments into recipe lines, so each argument must be one plain word (…)',
      'no recipe named "deploy" in justfile; recipes: build, test',
      'recipe test takes 0 to 1 argument(s) (suite); 2 given',
      'just is not installed (no `just` program on the PATH of the Grove server): install it …',
    ],
  },
  list_affected_specs: {
    example: { base_branch: 'main' },
    errors: [
      'base_branch does not resolve to a commit in this repository: "mian" (try a local branch …)',
      SPEC_ERRORS[1]!,
    ],
  },
  get_spec_diff: {
    example: {
      spec_path: '.notarai/api.spec.yaml',
      base_branch: 'main',
      exclude_patterns: ['*.lock'],
    },
    errors: [...SPEC_ERRORS, 'spec .notarai/api.spec.yaml is invalid: …'],
  },
  get_changed_artifacts: {
    example: { spec_path: '.notarai/api.spec.yaml', artifact_type: 'code' },
    errors: SPEC_ERRORS,
  },
  mark_reconciled: {
    example: { files: ['.notarai/api.spec.yaml', 'src/server.ts'] },
    errors: [
      'refused paths are listed in `rejected` with the reason; the others are marked',
      SPEC_ERRORS[1]!,
    ],
  },
  clear_cache: {
    example: {},
    errors: [
      "the hash cache's .notarai/.cache/notarai.db-wal is a symlink, which Grove never opens; delete it (the cache is rebuilt) and try again",
    ],
  },
  snapshot_state: {
    example: {},
    errors: [
      'cannot write ".notarai/reconciliation_state.json": it is a symbolic link, which Grove never writes through',
      'the hash cache .notarai/.cache/notarai.db is locked by another process (…); try again',
    ],
  },
  check_specs: {
    example: { strict: false },
    errors: [
      'never an error for findings: a spec that does not parse is a `spec_invalid` finding, and an unreadable check.yaml or lint.yaml is a warning (defaults used)',
    ],
  },
  get_drift_score: {
    example: { spec_path: '.notarai/api.spec.yaml' },
    errors: ['no spec at .notarai/nope.spec.yaml (or it does not parse)'],
  },
  export_context: {
    example: { base_branch: 'main', format: 'markdown' },
    errors: [
      'base_branch does not resolve to a commit in this repository: "nope" (…)',
      'spec file not found: .notarai/nope.spec.yaml',
    ],
  },
  list_decisions: {
    example: { status: 'proposed' },
    errors: [
      'cannot read .notarai/decision-log.json: file is larger than the 1048576-byte limit: …',
      '.notarai/decision-log.json is not valid: proposals[2].date: Invalid input: expected string, received undefined',
    ],
  },
  propose_decision: {
    example: {
      spec_path: '.notarai/api.spec.yaml',
      choice: 'Retry idempotent requests up to 3 times',
      rationale: 'The client now retries on 503.\nSee src/api/http.ts.',
      related_files: ['src/api/http.ts'],
    },
    errors: [
      'no such spec: .notarai/nope.spec.yaml (…)',
      'choice must be one line',
      '.notarai/decision-log.json would be larger than 1048576 bytes; accept or reject some proposals first (nothing was written)',
      'cannot write .notarai/decision-log.json: it is a symbolic link, which Grove never writes through',
    ],
  },
};

/** Tools a worktree offers only when its user turned them on (off by default). */
const OPT_IN_TOOLS = new Set(justTaskTools.map((tool) => tool.name));

/** Every tool a worktree's server may offer, in the order it lists them (opt-in ones last). */
export function serverTools(): ToolDefinition[] {
  const noEngine = () => Promise.reject(new Error('the reference only reads the definitions'));
  return [...createFileTools(), ...createReconcileTools(noEngine), ...justTaskTools];
}

/** A prompt or resource template as tools/list's siblings report it. */
export interface ListedExtra {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  /** Prompt arguments, or the resource's URI template and MIME type. */
  details: string[];
}

/** The prompts and resource templates a real server lists, asked by a real MCP client. */
export async function listServerExtras(): Promise<{
  prompts: ListedExtra[];
  resources: ListedExtra[];
}> {
  const server = await startTestListener({
    tools: serverTools(),
    extendServer: (mcp) => registerReconcileMcp(mcp, { root: '/', defaultBase: () => 'main' }),
  });
  try {
    const { client } = await connectClient(server.port, 'legacy-http');
    try {
      const { prompts } = await client.listPrompts();
      const { resourceTemplates } = await client.listResourceTemplates();
      return {
        prompts: prompts.map((prompt) => ({
          name: prompt.name,
          title: prompt.title,
          description: prompt.description,
          details: (prompt.arguments ?? []).map(
            (argument) =>
              `argument \`${argument.name}\`${argument.required ? ' (required)' : ''}: ${
                argument.description ?? ''
              }`,
          ),
        })),
        resources: resourceTemplates.map((template) => ({
          name: template.name,
          title: template.title,
          description: template.description,
          details: [
            `URI template \`${template.uriTemplate}\``,
            ...(template.mimeType ? [`MIME type \`${template.mimeType}\``] : []),
          ],
        })),
      };
    } finally {
      await client.close();
    }
  } finally {
    await server.close();
  }
}

function errorLines(errors: readonly string[]): string[] {
  if (errors.length === 0) return [];
  return ['', '#### Errors', '', ...errors.map((error) => `- ${error.replaceAll('|', '\\|')}`)];
}

function extraSection(heading: string, extras: readonly ListedExtra[]): string[] {
  const lines = ['', `## ${heading}`];
  for (const extra of extras) {
    lines.push('', `### ${extra.name}`, '');
    lines.push(`**${extra.title ?? extra.name}.** ${extra.description ?? ''}`.trimEnd());
    if (extra.details.length > 0) lines.push('', ...extra.details.map((detail) => `- ${detail}`));
  }
  return lines;
}

/** The whole reference, as Markdown: `tools` in detail, then the prompts and resources. */
export function renderToolDocs(
  tools: readonly ToolDefinition[],
  extras: { prompts: readonly ListedExtra[]; resources: readonly ListedExtra[] },
): string {
  const writers = tools
    .filter((tool) => !tool.annotations.readOnlyHint && !OPT_IN_TOOLS.has(tool.name))
    .map((tool) => tool.name);
  const optIn = tools.filter((tool) => OPT_IN_TOOLS.has(tool.name)).map((tool) => tool.name);
  const lines: string[] = [
    '# Server reference',
    '',
    '<!-- Generated by scripts/generate-tool-docs.ts from the tool registry and a running server.',
    '     Do not edit: run `npm run docs:tools`. A unit test fails when this file is out of date. -->',
    '',
    "Every worktree's MCP server offers these tools, prompts and resources, on every transport.",
    'Every tool is confined to the worktree: every path goes through the confined file layer',
    '(`main/platform/confined-fs.ts`, docs/security.md). The file tools only read; the',
    `reconciliation tools ${writers.map((name) => `\`${name}\``).join(', ')} write, inside the`,
    "worktree's `.notarai/` only (the hash cache, the state file, the decision log), as their",
    'annotations say; `get_spec_diff` and `get_changed_artifacts` also create the empty hash',
    "cache where NotarAI does and keep Grove's stat rows beside it (`.notarai/.cache/`, a cache,",
    'not content).',
    'Results come as `structuredContent` and as the same JSON (keys sorted) in a text block; a',
    'refusal is a result with `isError: true` and a message saying why (the path and the reason,',
    'never the content of a refused file). Every call has a deadline and can be cancelled.',
    'The reconciliation tools are NotarAI\'s six; keys NotarAI does not have are marked "Grove',
    'addition", and docs/notarai-compatibility.md lists every place Grove differs, and why.',
    '',
    `Opt-in: ${optIn.map((name) => `\`${name}\``).join(' and ')} run the worktree's \`just\``,
    "recipes with the user's rights, so they break the read-only promise: a worktree offers them",
    "only when its user turned them on (the server view's setting, or `grove serve --just-tasks`",
    'for every worktree); off by default, and not listed then. Turning them on or off sends',
    '`notifications/tools/list_changed`.',
    '',
    '## Tools',
    '',
    ...tools.map(
      (tool) =>
        `- [\`${tool.name}\`](#${tool.name}) — ${tool.title}${OPT_IN_TOOLS.has(tool.name) ? ' (opt-in, off by default)' : ''}`,
    ),
  ];
  for (const tool of tools) {
    const input = z.toJSONSchema(tool.inputSchema, { io: 'input' }) as JsonSchema;
    const output = z.toJSONSchema(tool.outputSchema, { io: 'output' }) as JsonSchema;
    lines.push(
      '',
      `### ${tool.name}`,
      '',
      `**${tool.title}.** ${tool.description}`,
      '',
      ...(OPT_IN_TOOLS.has(tool.name)
        ? ['**Opt-in, off by default**: listed only while just tasks are on for the worktree.', '']
        : []),
      `Annotations: ${annotationsLine(tool)}. Deadline: ${toolDeadlineMs(tool) / 1000} s (the call ends with an error past it).`,
      '',
      '#### Input',
      '',
      ...table(fieldRows(input), true),
      '',
      '#### Output',
      '',
      ...table(fieldRows(output), false),
      '',
      '#### Example',
      '',
      '```json',
      JSON.stringify({ name: tool.name, arguments: TOOL_USAGE[tool.name]?.example ?? {} }),
      '```',
      ...errorLines(TOOL_USAGE[tool.name]?.errors ?? []),
    );
  }
  lines.push(...extraSection('Prompts', extras.prompts));
  lines.push(...extraSection('Resources', extras.resources));
  return `${lines.join('\n')}\n`;
}

/** The reference as the code makes it today. */
export async function renderServerDocs(): Promise<string> {
  return renderToolDocs(serverTools(), await listServerExtras());
}

async function main(): Promise<void> {
  const rendered = await renderServerDocs();
  if (process.argv.includes('--check')) {
    const current = await readFile(TOOLS_DOC_PATH, 'utf8').catch(() => '');
    if (current !== rendered) {
      console.error(
        `${path.relative(process.cwd(), TOOLS_DOC_PATH)} is out of date: run npm run docs:tools`,
      );
      process.exitCode = 1;
    }
    return;
  }
  await writeFile(TOOLS_DOC_PATH, rendered);
  console.log(
    `wrote ${path.relative(process.cwd(), TOOLS_DOC_PATH)} (${serverTools().length} tools)`,
  );
}

if (
  process.argv[1] !== undefined &&
  path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)
) {
  await main();
}
