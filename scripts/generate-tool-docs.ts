// Writes docs/tools.md, the tool reference, from the one tool registry (main/tools/index.ts): each
// tool's name, title, description, annotations and the fields of its input and output schemas (as
// the JSON Schema clients receive). `npm run docs:tools` rewrites the file; `--check` only says
// whether it is up to date. A unit test regenerates it in memory and compares, so the reference
// never drifts from the code.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createFileTools } from '../main/tools/index.ts';
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

/** The whole reference for `tools`, as Markdown. */
export function renderToolDocs(tools: readonly ToolDefinition[]): string {
  const lines: string[] = [
    '# Tool reference',
    '',
    '<!-- Generated by scripts/generate-tool-docs.ts from the tool registry (main/tools/index.ts).',
    '     Do not edit: run `npm run docs:tools`. A unit test fails when this file is out of date. -->',
    '',
    "Every worktree's MCP server offers these tools, on every transport. All of them are read-only",
    'and confined to the worktree: every path goes through the sandbox (`main/tools/sandbox.ts`).',
    'Results come as `structuredContent` and as the same JSON (keys sorted) in a text block; a',
    'refusal is a result with `isError: true` and a message saying why.',
    '',
    ...tools.map((tool) => `- [\`${tool.name}\`](#${tool.name}) — ${tool.title}`),
  ];
  for (const tool of tools) {
    const input = z.toJSONSchema(tool.inputSchema, { io: 'input' }) as JsonSchema;
    const output = z.toJSONSchema(tool.outputSchema, { io: 'output' }) as JsonSchema;
    lines.push(
      '',
      `## ${tool.name}`,
      '',
      `**${tool.title}.** ${tool.description}`,
      '',
      `Annotations: ${annotationsLine(tool)}. Deadline: ${toolDeadlineMs(tool) / 1000} s (the call ends with an error past it).`,
      '',
      '### Input',
      '',
      ...table(fieldRows(input), true),
      '',
      '### Output',
      '',
      ...table(fieldRows(output), false),
    );
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const rendered = renderToolDocs(createFileTools());
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
    `wrote ${path.relative(process.cwd(), TOOLS_DOC_PATH)} (${createFileTools().length} tools)`,
  );
}

if (
  process.argv[1] !== undefined &&
  path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)
) {
  await main();
}
