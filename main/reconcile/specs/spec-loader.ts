// Loads the specs of a worktree: every `*.spec.yaml` under `.notarai/` (found by spec-paths.ts:
// recursive, the cache directory skipped), each parsed and validated by spec-validate.ts (the
// `yaml` package and NotarAI's schema; loaded the first time a spec needs it, never when a
// SpecValidationMemo remembers every spec's validation) and its globs compiled (spec-compile.ts).
// A spec that does not parse or validate becomes a list of {file, line, message} errors instead
// of an exception, so one broken spec never takes a tool down. Also owns the system-spec rule. As
// in NotarAI, a spec governs what its artifact globs match: its `exclude` list only narrows
// coverage (which files count as unspecced) and never removes a governed file.
import path from 'node:path';
import type { SpecError } from '../../../shared/reconcile.ts';
import { sha256Hex } from '../../platform/builtins.ts';
import { globBudget } from '../../platform/glob-matcher.ts';
import { UserError } from '../../platform/errors.ts';
import { GROVE_VERSION } from '../../platform/version.ts';
import { nextSlice, sliceUsedUp } from '../../platform/time-slices.ts';
import {
  WorkersUnavailableError,
  workerPool,
  type WorkerPool,
} from '../../platform/worker-pool.ts';
import { mapLimit } from '../../platform/concurrency.ts';
import {
  compileSpec,
  invalid,
  type InvalidSpec,
  type LoadedSpec,
  type SpecSet,
  type ValidatedSpec,
  type ValidSpec,
} from './spec-compile.ts';
import type * as SpecValidator from './spec-validate.ts';
import { discoverSpecs, NOTARAI_DIR, readSpecText, SPEC_SUFFIX } from './spec-paths.ts';

export type {
  InvalidSpec,
  LoadedSpec,
  SpecSet,
  UnvalidatedSpec,
  ValidatedSpec,
  ValidSpec,
} from './spec-compile.ts';
export {
  discoverSpecPaths,
  isSpecPath,
  MAX_SPEC_BYTES,
  NOTARAI_DIR,
  SPEC_SUFFIX,
} from './spec-paths.ts';

/** Loads one spec file; never throws. */
export async function loadSpec(root: string, relative: string): Promise<LoadedSpec> {
  const text = await readSpec(root, relative);
  return typeof text === 'string' ? (await validator()).parseSpecText(relative, text) : text;
}

/** spec-validate.ts (the YAML parser and the schema library), loaded the first time it is needed. */
let loadingValidator: Promise<typeof SpecValidator> | undefined;
const validator = () => (loadingValidator ??= import('./spec-validate.ts'));

/**
 * Names this build of the validator, for validations remembered on disk (validated-spec-store.ts):
 * in the bundle, this module's file is named by a hash of its content, which holds the name of the
 * validator's file, itself named by a hash of its own and of what it imports (checked: a change
 * to spec-yaml.ts or to the `yaml` package renames both). Undefined, and nothing remembered, where
 * the name carries no such hash: running from the sources, or a bundle that put this module in an
 * entry file (`grove.js`).
 */
export const VALIDATOR_BUILD: string | undefined = /-[\w-]{8}\.js$/.test(import.meta.url)
  ? `${GROVE_VERSION} ${import.meta.url}`
  : undefined;

/**
 * Validations remembered between loads (the CLI keeps them on disk: validated-spec-store.ts). A
 * spec whose text it remembers at its path is not parsed again; the validator is not even loaded
 * when it remembers every spec. Only specs validated on the main thread are asked for and
 * remembered: a big spec (over MAIN_THREAD_SPEC_BYTES) goes to a worker every time, and a read
 * error is not a validation.
 */
export interface SpecValidationMemo {
  get(relative: string, text: string): ValidatedSpec | InvalidSpec | undefined;
  set(relative: string, text: string, validated: ValidatedSpec | InvalidSpec): void;
}

/** A spec's text, or the spec error saying why it cannot be read. */
async function readSpec(root: string, relative: string): Promise<string | InvalidSpec> {
  try {
    return await readSpecText(root, relative);
  } catch (error) {
    return invalid(relative, null, `cannot read spec: ${(error as Error).message}`);
  }
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
export function loadSpecs(
  root: string,
  pool?: WorkerPool,
  memo?: SpecValidationMemo,
): Promise<SpecSet> {
  return loadSpecSet(root, pool, undefined, memo);
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
  memo?: SpecValidationMemo,
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
    let validated = isBig.has(index) ? (await bigValidated).get(index)! : memo?.get(relative, text);
    if (validated === undefined) {
      validated = (await validator()).validateSpecText(relative, text);
      memo?.set(relative, text, validated);
    }
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
  const key = `${relative}\0${sha256Hex(text)}`;
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
      return (await validator()).validateSpecText(relative, text);
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
