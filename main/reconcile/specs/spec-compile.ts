// What loading a spec gives (its types) and the last step of it: a validated spec's artifact globs
// compiled (one matcher: glob-matcher.ts), charged to the worktree's glob budget. Free of the YAML
// parser and the schema library, so that a load whose validations are all remembered
// (spec-loader.ts, SpecValidationMemo) loads neither (spec-validate.ts does the validation).
import type { SpecError } from '../../../shared/reconcile.ts';
import { compileGlobs, globBudget } from '../../platform/glob-matcher.ts';
import type { GlobBudget, GlobSet } from '../../platform/glob-matcher.ts';
import { compareUtf8 } from '../../platform/path-order.ts';
import type { Spec } from './spec-schema.ts';
import type { SpecLineTable } from './spec-lines.ts';

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

/** A spec that parsed and validated, as plain data (it crosses to and from a worker thread). */
export interface ValidatedSpec {
  readonly ok: true;
  readonly spec: Spec;
  readonly warnings: SpecError[];
  /** The line of its `artifacts` key, for a glob the matcher refuses. */
  readonly artifactsLine: number | null;
  readonly lines: SpecLineTable;
}

/** An invalid spec with one error. */
export function invalid(file: string, line: number | null, message: string): InvalidSpec {
  return { ok: false, path: file, errors: [{ file, line, message }] };
}

/** A validated spec with its globs compiled (charged to `budget`), or the spec error why not. */
export function compileSpec(
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
