// A spec's text parsed with the `yaml` package (line numbers kept) and validated with
// spec-schema.ts (NotarAI's 0.8 schema for '0.5' to '0.8', the 0.4 schema for '0.4', which also
// earns a deprecation warning): what the spec loader (spec-loader.ts) runs for each spec it does
// not remember, on the main thread or, for a big spec, on a worker (main/worktree/pool-worker.ts).
// A spec that does not parse or validate becomes a list of {file, line, message} errors, never an
// exception. The only module of the loader that loads the parser and the schema library.
import { LineCounter, isMap, isPair, isScalar, isSeq } from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import type { SpecError } from '../../../shared/reconcile.ts';
import { globBudget, type GlobBudget } from '../../platform/glob-matcher.ts';
import {
  CURRENT_SCHEMA_VERSIONS,
  DEPRECATED_SCHEMA_VERSIONS,
  schemaFor,
  TOP_LEVEL_KEYS_SINCE,
  TOP_LEVEL_KEYS_UNTIL,
} from './spec-schema.ts';
import type { Spec } from './spec-schema.ts';
import {
  compileSpec,
  invalid,
  type InvalidSpec,
  type LoadedSpec,
  type ValidatedSpec,
} from './spec-compile.ts';
import { tableKey } from './spec-lines.ts';
import { parseSpecYaml } from './spec-yaml.ts';

/**
 * Parses and validates spec text; `relative` is used in error reports. `budget`: what its globs
 * may come to once braces are expanded (glob-matcher.ts), shared by a worktree's specs.
 */
export function parseSpecText(
  relative: string,
  text: string,
  budget: GlobBudget = globBudget(),
): LoadedSpec {
  return compileSpec(relative, text, validateSpecText(relative, text), budget);
}

/**
 * Parses and validates spec text: YAML and NotarAI's schema, no globs compiled. The document is
 * dropped before it returns: what findings need of it is in `lines` (spec-lines.ts).
 */
export function validateSpecText(relative: string, text: string): ValidatedSpec | InvalidSpec {
  const lineCounter = new LineCounter();
  const doc = parseSpecYaml(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      path: relative,
      errors: doc.errors.map((error) => ({
        file: relative,
        line: error.linePos?.[0].line ?? null,
        message: `invalid YAML: ${firstLine(error.message)}`,
      })),
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    return invalid(relative, 1, `invalid YAML: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return invalid(
      relative,
      1,
      value === null || value === undefined
        ? 'spec is empty: expected a mapping with schema_version, intent and artifacts'
        : 'spec must be a YAML mapping (key: value pairs) at the top level',
    );
  }
  const record = value as Record<string, unknown>;
  const lines = specLineTable(doc, lineCounter);
  const result = schemaFor(record).safeParse(record, { reportInput: true });
  if (!result.success) {
    return {
      ok: false,
      path: relative,
      errors: result.error.issues.map((issue) => ({
        file: relative,
        line: issueLine(doc, lineCounter, issue),
        message: describeIssue(issue, record['schema_version']),
      })),
      parsed: { text, value: record, lines },
    };
  }
  const spec: Spec = result.data;
  const warnings: SpecError[] = [];
  if ((DEPRECATED_SCHEMA_VERSIONS as readonly string[]).includes(spec.schema_version)) {
    warnings.push({
      file: relative,
      line: keyLine(doc, lineCounter, [], 'schema_version'),
      message:
        `schema_version '${spec.schema_version}' is deprecated: NotarAI's CLI validates only ` +
        `${CURRENT_SCHEMA_VERSIONS.map((v) => `'${v}'`).join(', ')} since v0.2.0, so ` +
        `\`notarai validate\` rejects this spec; Grove checks it against NotarAI's ` +
        `${spec.schema_version} schema. Raise it to '0.5' or later (0.5 dropped sync_policy).`,
    });
  }
  return {
    ok: true,
    spec,
    warnings,
    artifactsLine: keyLine(doc, lineCounter, [], 'artifacts'),
    lines,
  };
}

/** Which nodes get a line: map keys (`*`: any key), `#`: every item of a sequence. */
interface Anchor {
  readonly [key: string]: Anchor | true;
}
const REF_ITEMS: Anchor = { '#': { $ref: true } };
const ANCHORS: Anchor = {
  '*': true,
  artifacts: { '*': { '#': { path: true } } },
  subsystems: REF_ITEMS,
  applies: REF_ITEMS,
  dependencies: REF_ITEMS,
  behaviors: { '#': { tested_by: { '#': { path: true } } } },
  decisions: { '#': true },
};

/** The table of a parsed spec (its `lineCounter` was given to the parse). */
export function specLineTable(doc: Document, lineCounter: LineCounter): Map<string, number> {
  const table = new Map<string, number>();
  const visit = (node: unknown, keys: (string | number)[], anchor: Anchor | true): void => {
    const offset = (node as { range?: number[] } | null)?.range?.[0];
    if (keys.length > 0 && typeof offset === 'number') {
      const key = tableKey(keys);
      // The first of duplicate keys, as Document.getIn finds it.
      if (!table.has(key)) table.set(key, lineCounter.linePos(offset).line);
    }
    if (anchor === true) return;
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isScalar(pair.key) || typeof pair.key.value !== 'string') continue;
        const name = pair.key.value;
        const next = Object.hasOwn(anchor, name) ? anchor[name] : anchor['*'];
        if (next !== undefined) visit(pair.value, [...keys, name], next);
      }
    } else if (isSeq(node)) {
      const next = anchor['#'];
      if (next !== undefined)
        node.items.forEach((item, index) => visit(item, [...keys, index], next));
    }
  };
  visit(doc.contents, [], ANCHORS);
  return table;
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/** The line of the node an issue is about (or of its closest existing ancestor). */
function issueLine(doc: Document, lineCounter: LineCounter, issue: z.core.$ZodIssue): number {
  const keyPath = [...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) {
    const line = keyLine(doc, lineCounter, keyPath, issue.keys[0]);
    if (line !== null) return line;
  }
  const last = keyPath.at(-1);
  if (last !== undefined) {
    const line = keyLine(doc, lineCounter, keyPath.slice(0, -1), last);
    if (line !== null) return line;
  }
  for (let depth = keyPath.length; depth >= 0; depth--) {
    const node = (depth === 0 ? doc.contents : doc.getIn(keyPath.slice(0, depth), true)) as
      YamlNode | null | undefined;
    const offset = node?.range?.[0];
    if (offset !== undefined) return lineCounter.linePos(offset).line;
  }
  return 1;
}

/** Line of the key `key` inside the mapping at `mapPath`, or null. */
function keyLine(
  doc: Document,
  lineCounter: LineCounter,
  mapPath: PropertyKey[],
  key: PropertyKey,
): number | null {
  const map = mapPath.length === 0 ? doc.contents : doc.getIn(mapPath as unknown[], true);
  if (!isMap(map)) return null;
  for (const item of map.items) {
    if (!isPair(item)) continue;
    const keyNode = item.key;
    if (isScalar(keyNode) && String(keyNode.value) === String(key) && keyNode.range) {
      return lineCounter.linePos(keyNode.range[0]).line;
    }
  }
  return null;
}

/** A readable message: where in the spec (`behaviors[0].then`) and what is wrong. */
function describeIssue(issue: z.core.$ZodIssue, version: unknown): string {
  const where = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => `'${key}'`).join(', ');
    if (where !== '') return `unknown key ${keys} in ${where}`;
    const key = issue.keys.length === 1 ? issue.keys[0] : undefined;
    const since = key === undefined ? undefined : TOP_LEVEL_KEYS_SINCE[key];
    const until = key === undefined ? undefined : TOP_LEVEL_KEYS_UNTIL[key];
    const declared = typeof version === 'string' ? `'${version}'` : String(version);
    if (since !== undefined) {
      return `top-level key ${keys} needs schema_version '${since}' or later (this spec says ${declared})`;
    }
    if (until !== undefined) {
      return `top-level key ${keys} exists only in schema ${until} and was removed after it (this spec says ${declared})`;
    }
    return `unknown top-level key ${keys} (not part of the NotarAI spec format)`;
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return `missing required key '${String(issue.path.at(-1))}'${
      issue.path.length > 1 ? ` in ${formatPath(issue.path.slice(0, -1))}` : ''
    }`;
  }
  if (issue.code === 'invalid_type') {
    return `${where || 'spec'}: expected ${issue.expected}, got ${describeValue(issue.input)}`;
  }
  if (where === '' || issue.message.startsWith(`${where} `)) return issue.message;
  return `${where}: ${issue.message}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function formatPath(keyPath: readonly PropertyKey[]): string {
  let out = '';
  for (const key of keyPath) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
