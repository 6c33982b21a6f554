// Loads the specs of a worktree: every `*.spec.yaml` under `.notarai/` (found by spec-paths.ts:
// recursive, the cache directory skipped), parsed with the `yaml` package (line numbers kept) and validated with
// spec-schema.ts. A spec that does not parse or validate becomes a list of {file, line, message}
// errors instead of an exception, so one broken spec never takes a tool down. Also owns the
// system-spec rule and the compiled globs of each spec (one matcher: glob-matcher.ts).
import path from 'node:path';
import { LineCounter, isMap, isPair, isScalar, parseDocument } from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import type { SpecError } from '../../shared/reconcile.ts';
import { compileGlobs } from './glob-matcher.ts';
import type { GlobSet } from './glob-matcher.ts';
import { SpecSchema } from './spec-schema.ts';
import type { Spec } from './spec-schema.ts';
import { discoverSpecs, NOTARAI_DIR, readSpecText, SPEC_SUFFIX } from './spec-paths.ts';

export {
  discoverSpecPaths,
  isSpecPath,
  MAX_SPEC_BYTES,
  NOTARAI_DIR,
  SPEC_SUFFIX,
} from './spec-paths.ts';

/** A spec that parsed and validated. */
export interface ValidSpec {
  readonly ok: true;
  /** POSIX path relative to the worktree root, e.g. `.notarai/auth.spec.yaml`. */
  readonly path: string;
  readonly text: string;
  readonly spec: Spec;
  /** Every artifact glob of every category. */
  readonly governs: GlobSet;
  /** Category name -> its globs, categories sorted alphabetically. */
  readonly categories: ReadonlyMap<string, GlobSet>;
  /** The spec's own `exclude` globs (files matching them are not governed by it). */
  readonly excludes: GlobSet;
}

export interface InvalidSpec {
  readonly ok: false;
  readonly path: string;
  readonly errors: SpecError[];
}

export type LoadedSpec = ValidSpec | InvalidSpec;

export interface SpecSet {
  /** Every spec file found, valid or not, sorted by path. */
  readonly all: LoadedSpec[];
  readonly valid: ValidSpec[];
  readonly errors: SpecError[];
  /** Path of the system spec, or null (see systemSpecPath). */
  readonly systemSpec: string | null;
}

/** Loads one spec file; never throws. */
export async function loadSpec(root: string, relative: string): Promise<LoadedSpec> {
  let text: string;
  try {
    text = await readSpecText(root, relative);
  } catch (error) {
    return invalid(relative, null, `cannot read spec: ${(error as Error).message}`);
  }
  return parseSpecText(relative, text);
}

/** Parses and validates spec text; `relative` is used in error reports. */
export function parseSpecText(relative: string, text: string): LoadedSpec {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
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
  const result = SpecSchema.safeParse(value, { reportInput: true });
  if (!result.success) {
    return {
      ok: false,
      path: relative,
      errors: result.error.issues.map((issue) => ({
        file: relative,
        line: issueLine(doc, lineCounter, issue),
        message: describeIssue(issue),
      })),
    };
  }
  const spec = result.data;
  const categories = new Map<string, GlobSet>();
  const all: string[] = [];
  for (const category of Object.keys(spec.artifacts).sort()) {
    const patterns = (spec.artifacts[category] ?? []).map((ref) => ref.path);
    categories.set(category, compileGlobs(patterns));
    all.push(...patterns);
  }
  return {
    ok: true,
    path: relative,
    text,
    spec,
    governs: compileGlobs(all),
    categories,
    excludes: compileGlobs(spec.exclude ?? []),
  };
}

/** Loads every spec of the worktree. */
export async function loadSpecs(root: string): Promise<SpecSet> {
  const { paths, problems } = await discoverSpecs(root);
  const all = await Promise.all(paths.map((relative) => loadSpec(root, relative)));
  const valid = all.filter((spec): spec is ValidSpec => spec.ok);
  const errors = [
    ...problems.map((problem) => ({ file: problem.path, line: null, message: problem.message })),
    ...all.flatMap((spec) => (spec.ok ? [] : spec.errors)),
  ];
  return { all, valid, errors, systemSpec: systemSpecPath(valid) };
}

/**
 * The system spec: `.notarai/system.spec.yaml` if it has a `subsystems` key, else the first spec
 * directly in `.notarai/` (by path) that has one, else none.
 */
export function systemSpecPath(specs: readonly ValidSpec[]): string | null {
  const preferred = specs.find(
    (spec) => spec.path === `${NOTARAI_DIR}/system${SPEC_SUFFIX}` && spec.spec.subsystems,
  );
  if (preferred) return preferred.path;
  const direct = specs.find(
    (spec) => spec.spec.subsystems !== undefined && path.posix.dirname(spec.path) === NOTARAI_DIR,
  );
  return direct?.path ?? null;
}

/** True when `spec` governs `file` (an artifact glob matches and no `exclude` glob does). */
export function governs(spec: ValidSpec, file: string): boolean {
  return spec.governs.test(file) && !spec.excludes.test(file);
}

/** The first category (alphabetical) whose globs match `file`, or null. */
export function categoryOf(spec: ValidSpec, file: string): string | null {
  for (const [category, globs] of spec.categories) if (globs.test(file)) return category;
  return null;
}

function invalid(file: string, line: number | null, message: string): InvalidSpec {
  return { ok: false, path: file, errors: [{ file, line, message }] };
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
function describeIssue(issue: z.core.$ZodIssue): string {
  const where = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => `'${key}'`).join(', ');
    return where === ''
      ? `unknown top-level key ${keys} (not part of the NotarAI spec format)`
      : `unknown key ${keys} in ${where}`;
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
