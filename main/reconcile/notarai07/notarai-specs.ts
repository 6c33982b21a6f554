// The specs as NotarAI 0.7's check, lint, score and export-context see them: every spec whose YAML
// parses, as its plain value, whether or not it validates against the schema (NotarAI's check
// never validates; `validate` does). Built from the spec loader's results (spec-loader.ts: the
// confined reads, the sizes, the workers), with each artifact glob compiled on its own by the one
// matcher (orphaned globs are per glob), `$ref`s resolved as NotarAI resolves them, and the line
// of the nodes findings name (a finding's `line`) from the table the loader's one parse left
// (spec-lines.ts): nothing here parses a spec again.
import path from 'node:path';
import type { UnreadableSpec } from '../../../shared/notarai-check.ts';
import type { SpecError } from '../../../shared/reconcile.ts';
import { compileGlobs, globBudget } from '../../platform/glob-matcher.ts';
import type { GlobSet } from '../../platform/glob-matcher.ts';
import { compareUtf8 } from '../../platform/path-order.ts';
import { nextSlice, sliceUsedUp } from '../../platform/time-slices.ts';
import type { LoadedSpec, SpecSet } from '../specs/spec-loader.ts';
import { lineAt, type SpecLineTable } from '../specs/spec-lines.ts';

export interface ArtifactGlob {
  category: string;
  /** Index in the category's list (for its line). */
  index: number;
  pattern: string;
  set: GlobSet;
}

export interface SpecRef {
  field: 'subsystems' | 'applies' | 'dependencies';
  index: number;
  /** As written. */
  ref: string;
  /** Resolved against the spec's folder (`./`, `../`) or the root; POSIX, normalised. */
  resolved: string;
  /** An absolute path, or one that climbs out of the worktree: never looked up. */
  outside: boolean;
}

export interface CheckSpec {
  path: string;
  text: string;
  value: Record<string, unknown>;
  /** Artifact globs, categories in UTF-8 byte order (NotarAI's map order), then as listed. */
  globs: ArtifactGlob[];
  refs: SpecRef[];
  /** The spec's YAML or globs failed (schema errors do not count: see the header). */
  errors: SpecError[];
  /** Schema errors (reported as warnings: NotarAI's check does not validate). */
  schemaErrors: SpecError[];
  /** Lines of the nodes findings name (null: the YAML did not parse). */
  lines: SpecLineTable | null;
}

/** The specs that cannot be read, one entry per error (score and export-context leave them out). */
export function unreadableSpecs(specs: readonly CheckSpec[]): UnreadableSpec[] {
  return specs.flatMap((spec) =>
    spec.errors.map((error) => ({
      spec_path: spec.path,
      line: error.line,
      message: error.message,
    })),
  );
}

const cache = new WeakMap<LoadedSpec, CheckSpec>();

/**
 * Every spec of the set, in path order (UTF-8 bytes), in slices of the event loop (a dense graph's
 * 500,000 refs take a while to resolve); cached while the loaded spec lives.
 */
export async function checkSpecs(specs: SpecSet, signal?: AbortSignal): Promise<CheckSpec[]> {
  const out: CheckSpec[] = [];
  for (const loaded of specs.all) {
    let built = cache.get(loaded);
    if (!built) {
      if (sliceUsedUp()) await nextSlice(signal);
      built = buildCheckSpec(loaded);
      cache.set(loaded, built);
    }
    out.push(built);
  }
  return out;
}

function buildCheckSpec(loaded: LoadedSpec): CheckSpec {
  const spec: CheckSpec = {
    path: loaded.path,
    text: '',
    value: {},
    globs: [],
    refs: [],
    errors: [],
    schemaErrors: [],
    lines: null,
  };
  if (loaded.ok) {
    spec.text = loaded.text;
    spec.value = loaded.spec as unknown as Record<string, unknown>;
    spec.lines = loaded.lines;
  } else if (loaded.parsed) {
    // It parsed but did not validate: NotarAI's check reads it as written.
    spec.text = loaded.parsed.text;
    spec.value = loaded.parsed.value;
    spec.lines = loaded.parsed.lines;
    spec.schemaErrors = loaded.errors;
  } else {
    return { ...spec, errors: loaded.errors };
  }
  try {
    spec.globs = compileArtifactGlobs(spec.value);
  } catch (error) {
    spec.errors.push({
      file: spec.path,
      line: lineOf(spec, ['artifacts']),
      message: (error as Error).message,
    });
    spec.globs = [];
  }
  spec.refs = specRefs(spec.path, spec.value);
  return spec;
}

function compileArtifactGlobs(value: Record<string, unknown>): ArtifactGlob[] {
  const artifacts = value['artifacts'];
  if (artifacts === null || typeof artifacts !== 'object' || Array.isArray(artifacts)) return [];
  const budget = globBudget();
  const globs: ArtifactGlob[] = [];
  const entries = Object.entries(artifacts as Record<string, unknown>).sort(([a], [b]) =>
    compareUtf8(a, b),
  );
  for (const [category, refs] of entries) {
    if (!Array.isArray(refs)) continue;
    refs.forEach((item: unknown, index) => {
      const pattern = (item as { path?: unknown } | null)?.path;
      if (typeof pattern !== 'string') return;
      globs.push({ category, index, pattern, set: compileGlobs([pattern], budget) });
    });
  }
  return globs;
}

/** Artifact entries of every category, with or without a `path` (score's total globs). */
export function artifactEntryCount(value: Record<string, unknown>): number {
  const artifacts = value['artifacts'];
  if (artifacts === null || typeof artifacts !== 'object' || Array.isArray(artifacts)) return 0;
  let count = 0;
  for (const refs of Object.values(artifacts as Record<string, unknown>)) {
    if (Array.isArray(refs)) count += refs.length;
  }
  return count;
}

const REF_FIELDS = ['subsystems', 'applies', 'dependencies'] as const;

function specRefs(specPath: string, value: Record<string, unknown>): SpecRef[] {
  const refs: SpecRef[] = [];
  for (const field of REF_FIELDS) {
    const list = value[field];
    if (!Array.isArray(list)) continue;
    list.forEach((item: unknown, index) => {
      const ref = (item as { $ref?: unknown } | null)?.$ref;
      if (typeof ref !== 'string') return;
      refs.push({ field, index, ref, ...resolveRef(specPath, ref) });
    });
  }
  return refs;
}

/**
 * NotarAI's resolution: `./` and `../` against the spec's folder, anything else against the root.
 * Unlike NotarAI (which drops a `..` above the root), a path that climbs out is `outside`.
 */
/** A ref's rest that path.posix.normalize would change (or that is empty). */
const NEEDS_NORMALISING = /^$|(^|\/)\.{1,2}(\/|$)|\/\/|\/$|^\//;

export function resolveRef(specPath: string, ref: string): { resolved: string; outside: boolean } {
  const absolute = ref.startsWith('/') || ref.startsWith('\\') || /^[A-Za-z]:/.test(ref);
  if (absolute) return { resolved: ref, outside: true };
  // `./name` or `./dir/name` with nothing to normalise (the usual ref): no path functions.
  if (ref.startsWith('./') && !NEEDS_NORMALISING.test(ref.slice(2))) {
    const folder = specPath.slice(0, Math.max(0, specPath.lastIndexOf('/')));
    return { resolved: folder === '' ? ref.slice(2) : `${folder}/${ref.slice(2)}`, outside: false };
  }
  const joined =
    ref.startsWith('./') || ref.startsWith('../')
      ? path.posix.join(path.posix.dirname(specPath), ref)
      : ref;
  const resolved = path.posix.normalize(joined);
  const outside = resolved === '..' || resolved.startsWith('../');
  return { resolved, outside };
}

/** 1-based line of the node at `keys` in the spec (or of its closest ancestor findings name). */
export function lineOf(spec: CheckSpec, keys: readonly (string | number)[]): number | null {
  return lineAt(spec.lines, keys);
}
