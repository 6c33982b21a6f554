// The specs as NotarAI 0.7's check, lint, score and export-context see them: every spec whose YAML
// parses, as its plain value, whether or not it validates against the schema (NotarAI's check
// never validates; `validate` does). Built from the spec loader's results (spec-loader.ts: the
// confined reads, the sizes, the workers), with each artifact glob compiled on its own by the one
// matcher (orphaned globs are per glob), `$ref`s resolved as NotarAI resolves them, and the line
// of any node in the spec file found on demand (a finding's `line`).
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { Document } from 'yaml';
import type { UnreadableSpec } from '../../shared/notarai-check.ts';
import type { SpecError } from '../../shared/reconcile.ts';
import { compileGlobs, globBudget } from '../platform/glob-matcher.ts';
import type { GlobSet } from '../platform/glob-matcher.ts';
import { compareUtf8 } from '../platform/path-order.ts';
import type { LoadedSpec, SpecSet } from './spec-loader.ts';
import { readSpecText } from './spec-paths.ts';

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

const cache = new WeakMap<LoadedSpec, Promise<CheckSpec>>();
const documents = new WeakMap<CheckSpec, { doc: Document; lines: LineCounter }>();

/** Every spec of the set, in path order (UTF-8 bytes); cached while the loaded spec lives. */
export function checkSpecs(root: string, specs: SpecSet): Promise<CheckSpec[]> {
  return Promise.all(
    specs.all.map((loaded) => {
      let built = cache.get(loaded);
      if (!built) {
        built = buildCheckSpec(root, loaded);
        cache.set(loaded, built);
      }
      return built;
    }),
  );
}

async function buildCheckSpec(root: string, loaded: LoadedSpec): Promise<CheckSpec> {
  const spec: CheckSpec = {
    path: loaded.path,
    text: '',
    value: {},
    globs: [],
    refs: [],
    errors: [],
    schemaErrors: [],
  };
  if (loaded.ok) {
    spec.text = loaded.text;
    spec.value = loaded.spec as unknown as Record<string, unknown>;
  } else {
    // The loader read it, but it did not validate: read it again to tell YAML from schema errors.
    const unreadable = loaded.errors.some((error) => error.message.startsWith('cannot read spec'));
    if (unreadable) return { ...spec, errors: loaded.errors };
    try {
      spec.text = await readSpecText(root, loaded.path);
    } catch (error) {
      return { ...spec, errors: [{ file: loaded.path, line: null, message: String(error) }] };
    }
    const doc = parseDocument(spec.text, { uniqueKeys: false });
    let value: unknown;
    try {
      value = doc.errors.length === 0 ? doc.toJS({ maxAliasCount: 1000 }) : undefined;
    } catch {
      value = undefined;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { ...spec, errors: loaded.errors };
    }
    spec.value = value as Record<string, unknown>;
    spec.schemaErrors = loaded.errors;
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
export function resolveRef(specPath: string, ref: string): { resolved: string; outside: boolean } {
  const absolute = ref.startsWith('/') || ref.startsWith('\\') || /^[A-Za-z]:/.test(ref);
  if (absolute) return { resolved: ref, outside: true };
  const joined =
    ref.startsWith('./') || ref.startsWith('../')
      ? path.posix.join(path.posix.dirname(specPath), ref)
      : ref;
  const resolved = path.posix.normalize(joined);
  const outside = resolved === '..' || resolved.startsWith('../');
  return { resolved, outside };
}

/** 1-based line of the node at `keys` in the spec (or of its closest existing ancestor). */
export function lineOf(spec: CheckSpec, keys: readonly (string | number)[]): number | null {
  if (spec.text === '') return null;
  let parsed = documents.get(spec);
  if (!parsed) {
    const lines = new LineCounter();
    parsed = { doc: parseDocument(spec.text, { lineCounter: lines, uniqueKeys: false }), lines };
    documents.set(spec, parsed);
  }
  for (let depth = keys.length; depth > 0; depth--) {
    const node = parsed.doc.getIn(keys.slice(0, depth), true) as { range?: number[] } | undefined;
    const offset = node?.range?.[0];
    if (typeof offset === 'number') return parsed.lines.linePos(offset).line;
  }
  return null;
}
