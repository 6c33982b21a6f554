// Loads the specs of a worktree: every `*.spec.yaml` under `.notarai/` (found by spec-paths.ts:
// recursive, the cache directory skipped), parsed with the `yaml` package (line numbers kept) and
// validated with spec-schema.ts (NotarAI's 0.8 schema for '0.5' to '0.8', the 0.4 schema for '0.4',
// which also earns a deprecation warning). A spec that does not parse or validate becomes a list of
// {file, line, message} errors instead of an exception, so one broken spec never takes a tool down.
// Also owns the system-spec rule and the compiled globs of each spec (one matcher:
// glob-matcher.ts). As in NotarAI, a spec governs what its artifact globs match: its `exclude` list
// only narrows coverage (which files count as unspecced) and never removes a governed file.
import path from 'node:path';
import { LineCounter, isMap, isPair, isScalar } from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import type { SpecError } from '../../../shared/reconcile.ts';
import { nodeCrypto } from '../../platform/builtins.ts';
import { compileGlobs, globBudget } from '../../platform/glob-matcher.ts';
import type { GlobBudget, GlobSet } from '../../platform/glob-matcher.ts';
import { compareUtf8 } from '../../platform/path-order.ts';
import { UserError } from '../../platform/errors.ts';
import {
  CURRENT_SCHEMA_VERSIONS,
  DEPRECATED_SCHEMA_VERSIONS,
  schemaFor,
  TOP_LEVEL_KEYS_SINCE,
  TOP_LEVEL_KEYS_UNTIL,
} from './spec-schema.ts';
import type { Spec } from './spec-schema.ts';
import { nextSlice, sliceUsedUp } from '../../platform/time-slices.ts';
import {
  WorkersUnavailableError,
  workerPool,
  type WorkerPool,
} from '../../platform/worker-pool.ts';
import { mapLimit } from '../../platform/concurrency.ts';
import { specLineTable, type SpecLineTable } from './spec-lines.ts';
import { parseSpecYaml } from './spec-yaml.ts';
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
  /** Category name -> its globs, categories in UTF-8 byte order (NotarAI's BTreeMap order). */
  readonly categories: ReadonlyMap<string, GlobSet>;
  /** Problems that do not make the spec invalid (a deprecated schema_version), with lines. */
  readonly warnings: SpecError[];
  /** Lines of the nodes findings name (spec-lines.ts), from the parse that loaded it. */
  readonly lines: SpecLineTable;
}

/** A spec whose YAML parsed but that did not validate: what NotarAI's check still reads. */
export interface UnvalidatedSpec {
  readonly text: string;
  readonly value: Record<string, unknown>;
  readonly lines: SpecLineTable;
}

export interface InvalidSpec {
  readonly ok: false;
  readonly path: string;
  readonly errors: SpecError[];
  /** Set when its YAML parsed to a mapping (schema or glob errors): check reads it as written. */
  readonly parsed?: UnvalidatedSpec;
}

export type LoadedSpec = ValidSpec | InvalidSpec;

export interface SpecSet {
  /** Every spec file found, valid or not, sorted by path (UTF-8 bytes). */
  readonly all: LoadedSpec[];
  readonly valid: ValidSpec[];
  readonly errors: SpecError[];
  /** Warnings of the valid specs (deprecated schema versions). */
  readonly warnings: SpecError[];
  /** Path of the system spec, or null (see systemSpecPath). */
  readonly systemSpec: string | null;
}

/** Loads one spec file; never throws. */
export async function loadSpec(root: string, relative: string): Promise<LoadedSpec> {
  const text = await readSpec(root, relative);
  return typeof text === 'string' ? parseSpecText(relative, text) : text;
}

/** A spec's text, or the spec error saying why it cannot be read. */
async function readSpec(root: string, relative: string): Promise<string | InvalidSpec> {
  try {
    return await readSpecText(root, relative);
  } catch (error) {
    return invalid(relative, null, `cannot read spec: ${(error as Error).message}`);
  }
}

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

/** A spec that parsed and validated, as plain data (it crosses to and from a worker thread). */
export interface ValidatedSpec {
  readonly ok: true;
  readonly spec: Spec;
  readonly warnings: SpecError[];
  /** The line of its `artifacts` key, for a glob the matcher refuses. */
  readonly artifactsLine: number | null;
  readonly lines: SpecLineTable;
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

/** A validated spec with its globs compiled (charged to `budget`), or the spec error why not. */
function compileSpec(
  relative: string,
  text: string,
  validated: ValidatedSpec | InvalidSpec,
  budget: GlobBudget,
): LoadedSpec {
  if (!validated.ok) return validated;
  const { spec, warnings, lines } = validated;
  const compileAll = (charged: GlobBudget): Map<string, GlobSet> => {
    const categories = new Map<string, GlobSet>();
    for (const category of Object.keys(spec.artifacts).sort(compareUtf8)) {
      const patterns = (spec.artifacts[category] ?? []).map((ref) => ref.path);
      categories.set(category, compileGlobs(patterns, charged));
    }
    return categories;
  };
  const left = budget.characters;
  let categories: Map<string, GlobSet>;
  try {
    categories = compileAll(budget);
  } catch (error) {
    // A glob the matcher refuses (braces expanding too far): the spec is invalid, by name, and
    // costs the specs after it nothing.
    budget.characters = left;
    let message = (error as Error).message;
    if (left < budget.limit && fitsAlone(compileAll, budget.limit)) {
      message +=
        `, together with the globs of the specs before it in path order ` +
        `(${(budget.limit - left).toLocaleString('en-US')} characters)`;
    }
    return {
      ...invalid(relative, validated.artifactsLine, message),
      parsed: { text, value: spec as unknown as Record<string, unknown>, lines },
    };
  }
  return {
    ok: true,
    path: relative,
    text,
    spec,
    governs: anyOf([...categories.values()]),
    categories,
    warnings,
    lines,
  };
}

/** True if a spec's globs compile within a budget of their own. */
function fitsAlone(compile: (budget: GlobBudget) => unknown, limit: number): boolean {
  try {
    compile(globBudget(limit));
    return true;
  } catch {
    return false;
  }
}

/** The globs of every category as one set (each compiled once). */
function anyOf(sets: readonly GlobSet[]): GlobSet {
  if (sets.length === 1) return sets[0]!;
  return {
    patterns: sets.flatMap((set) => set.patterns),
    empty: sets.every((set) => set.empty),
    test: (file) => sets.some((set) => set.test(file)),
    literals: new Set(sets.flatMap((set) => [...set.literals])),
    prefixes: [...new Set(sets.flatMap((set) => set.prefixes))],
  };
}

/** Spec files read at once: a repository may hold thousands, and file descriptors are few. */
const SPEC_READ_CONCURRENCY = 16;
/**
 * Specs bigger than this are parsed on a worker thread (~1 ms per KB of YAML on the main thread:
 * a 2 MiB spec held it ~1.7 s); smaller ones on the main thread, one per slice of the event loop.
 */
export const MAIN_THREAD_SPEC_BYTES = 64 * 1024;
/** A spec whose parse takes longer than this on a worker is reported invalid. */
export const SPEC_PARSE_DEADLINE_MS = 20_000;
/**
 * A worker that parsed a spec this big is ended after it (its heap with it): the parse of 2 MB of
 * short comment lines takes a ~250 MB document, and a worker's heap kept that garbage while it
 * parsed the next one (twelve such specs: 0.94-1.16 GB). Starting a worker costs less than
 * parsing this much YAML.
 */
export const RETIRE_AFTER_SPEC_BYTES = 256 * 1024;
/** Big specs parsed on workers at once, in the whole process. */
const SPEC_WORKER_JOBS = 2;

/**
 * Loads every spec of the worktree: read a few at a time, parsed without holding the event loop
 * (main/platform/time-slices.ts; big ones on a worker), their globs compiled in path order sharing
 * one budget (so the same specs are valid every time, whatever order reads finish in).
 */
export function loadSpecs(root: string, pool?: WorkerPool): Promise<SpecSet> {
  return loadSpecSet(root, pool);
}

/**
 * The specs again after the spec files at `changed` were added, edited or removed (the live
 * index's watcher says so; nothing else under `.notarai/` moved): those are read and parsed, every
 * other spec that is a regular file keeps its parsed and compiled form from `previous` (the same
 * object, so what is derived from it — the files its globs govern — stays valid). Equal to a fresh
 * loadSpecs: specs are found again (a walk of `.notarai/`, not of the worktree), and the glob
 * budget is charged in path order as before, a kept spec its recorded charge.
 */
export function reloadSpecs(
  root: string,
  previous: SpecSet,
  changed: ReadonlySet<string>,
  pool?: WorkerPool,
): Promise<SpecSet> {
  return loadSpecSet(root, pool, { previous, changed });
}

/** What each valid spec's globs took from the shared budget when compiled. */
const budgetCharged = new WeakMap<ValidSpec, number>();

async function loadSpecSet(
  root: string,
  pool: WorkerPool | undefined,
  reuse?: { previous: SpecSet; changed: ReadonlySet<string> },
): Promise<SpecSet> {
  const { paths, problems, irregular } = await discoverSpecs(root);
  const kept = new Map<string, ValidSpec>();
  if (reuse) {
    for (const spec of reuse.previous.valid) {
      if (!reuse.changed.has(spec.path) && !irregular.has(spec.path)) kept.set(spec.path, spec);
    }
  }
  const texts = await mapLimit(paths, SPEC_READ_CONCURRENCY, (relative) => {
    const known = kept.get(relative);
    return known ? Promise.resolve(known.text) : readSpec(root, relative);
  });
  // Big specs go to the workers a few at a time, as one owner: each job's deadline runs from
  // when it is sent, so a queue of them must not wait behind each other.
  const big = texts.flatMap((text, index) =>
    typeof text === 'string' &&
    text.length > MAIN_THREAD_SPEC_BYTES &&
    !kept.has(paths[index] as string)
      ? [index]
      : [],
  );
  const owner = {};
  const bigValidated = mapLimit(big, SPEC_WORKER_JOBS, (index) =>
    validateBig(paths[index]!, texts[index] as string, pool, owner),
  ).then((results) => new Map(big.map((index, position) => [index, results[position]!])));
  bigValidated.catch(() => undefined);
  const isBig = new Set(big);
  const budget = globBudget();
  const all: LoadedSpec[] = [];
  for (const [index, text] of texts.entries()) {
    if (typeof text !== 'string') {
      all.push(text);
      continue;
    }
    const relative = paths[index]!;
    const known = kept.get(relative);
    const charged = known ? budgetCharged.get(known) : undefined;
    if (known && charged !== undefined && budget.characters >= charged) {
      // Compiling it again would take the same characters and give the same globs.
      budget.characters -= charged;
      all.push(known);
      continue;
    }
    if (sliceUsedUp()) await nextSlice();
    const validated = isBig.has(index)
      ? (await bigValidated).get(index)!
      : validateSpecText(relative, text);
    const left = budget.characters;
    const loaded = compileSpec(relative, text, validated, budget);
    if (loaded.ok) budgetCharged.set(loaded, left - budget.characters);
    all.push(loaded);
  }
  const valid = all.filter((spec): spec is ValidSpec => spec.ok);
  const errors = [
    ...problems.map((problem) => ({ file: problem.path, line: null, message: problem.message })),
    ...all.flatMap((spec) => (spec.ok ? [] : spec.errors)),
  ];
  const warnings = valid.flatMap((spec) => spec.warnings);
  return { all, valid, errors, warnings, systemSpec: systemSpecPath(valid) };
}

/** Big-spec parses in flight, by path and text: loads that overlap (the window's, a tool's) share. */
const inFlight = new Map<string, Promise<ValidatedSpec | InvalidSpec>>();
/** Big-spec parses running or waiting for a turn, process-wide (each holds ~100-250 MB). */
let running = 0;
const turns: (() => void)[] = [];

/**
 * A big spec's parse, at most SPEC_WORKER_JOBS at once in the process whatever the number of
 * loads running (a 2 MB spec of short comment lines takes a ~250 MB document to parse), the same
 * text at the same path parsed once for every load that asks while it runs.
 */
function validateBig(
  relative: string,
  text: string,
  pool: WorkerPool | undefined,
  owner: object,
): Promise<ValidatedSpec | InvalidSpec> {
  const key = `${relative}\0${nodeCrypto().createHash('sha256').update(text).digest('hex')}`;
  const known = inFlight.get(key);
  if (known) return known;
  const parse = (async () => {
    if (running >= SPEC_WORKER_JOBS) await new Promise<void>((resolve) => turns.push(resolve));
    else running++;
    try {
      return await validateOnWorker(relative, text, pool, owner);
    } finally {
      const next = turns.shift();
      if (next) next();
      else running--;
    }
  })();
  inFlight.set(key, parse);
  void parse.finally(() => inFlight.delete(key)).catch(() => undefined);
  return parse;
}

/**
 * Validates a big spec on a worker thread (job kind `spec-validate`, main/worktree/pool-worker.ts)
 * with a deadline; on the main thread, in a slice of its own, where worker threads cannot start.
 */
async function validateOnWorker(
  relative: string,
  text: string,
  pool: WorkerPool = workerPool(),
  owner: object = {},
): Promise<ValidatedSpec | InvalidSpec> {
  try {
    return await pool.run<ValidatedSpec | InvalidSpec>(
      'spec-validate',
      { relative, text },
      { deadlineMs: SPEC_PARSE_DEADLINE_MS, owner, retire: text.length >= RETIRE_AFTER_SPEC_BYTES },
    );
  } catch (error) {
    if (error instanceof WorkersUnavailableError) {
      await nextSlice();
      return validateSpecText(relative, text);
    }
    const reason =
      error instanceof UserError && error.code === 'timed-out'
        ? `parsing it took longer than ${SPEC_PARSE_DEADLINE_MS / 1000} s (it is ` +
          `${Math.round(text.length / 1024)} KiB; the machine may be busy): Grove tries again ` +
          'the next time the specs load'
        : error instanceof Error
          ? error.message
          : String(error);
    return invalid(relative, null, `cannot parse spec: ${reason}`);
  }
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

/**
 * True when `spec` governs `file`: one of its artifact globs matches it. The spec's `exclude` list
 * plays no part, as in NotarAI, where `exclude` only keeps files out of the unspecced-file check
 * (`notarai check`, system spec only) and never removes a file listed under `artifacts`.
 */
export function governs(spec: ValidSpec, file: string): boolean {
  return spec.governs.test(file);
}

/** A SpecError as one line of text (for `warnings` lists): `file:line: message`. */
export function formatSpecError(error: SpecError): string {
  return `${error.file}${error.line === null ? '' : `:${error.line}`}: ${error.message}`;
}

/** The first category (in UTF-8 byte order, as NotarAI iterates them) whose globs match `file`. */
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
