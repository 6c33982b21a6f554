// NotarAI 0.7's lint rules L001-L011 and the two detections check shares with them (incomplete
// behaviors, `$ref` cycles), over the specs of notarai-specs.ts. Same rules, defaults, messages
// and `.notarai/lint.yaml` overrides as NotarAI (`src/core/lint.rs`), plus each finding's line in
// its spec. Bounded: the cycle search is iterative (a chain through 10,000 specs needs no deep
// stack), yields to the event loop in time slices, takes time and memory in proportion to the specs
// and their refs whatever the graph, and reports at most MAX_CYCLES cycles (the rest counted).
import type { LintRule } from '../../../shared/notarai-check.ts';
import { compareUtf8 } from '../../platform/path-order.ts';
import { nextSlice, sliceDue } from '../../platform/time-slices.ts';
import type { LintConfig, LintSeverity } from './notarai-configs.ts';
import { lineOf, type CheckSpec } from './notarai-specs.ts';

/** The newest schema_version the bundled schema knows (NotarAI 0.7: the 0.8 schema). */
export const BUNDLED_SCHEMA_VERSION = '0.8';
/** Cycles reported at most (each is one finding); the count of the rest goes in a warning. */
export const MAX_CYCLES = 1000;
/** Specs named by the reported cycles, all together, at most (a cycle's message names each). */
export const MAX_CYCLE_NODES = 100_000;

export interface LintFinding {
  rule: LintRule;
  severity: LintSeverity;
  spec_path: string;
  message: string;
  line: number | null;
}

const DEFAULT_SEVERITY: Record<LintRule, LintSeverity> = {
  L001: 'error',
  L002: 'warning',
  L003: 'warning',
  L004: 'error',
  L005: 'warning',
  L006: 'warning',
  L007: 'info',
  L008: 'warning',
  L009: 'error',
  L010: 'warning',
  L011: 'error',
};

const list = (value: unknown): unknown[] | undefined => (Array.isArray(value) ? value : undefined);
const field = (value: unknown, key: string): unknown =>
  value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
const tierOf = (spec: CheckSpec): unknown => spec.value['tier'] ?? 'full';

export interface IncompleteBehavior {
  spec: CheckSpec;
  index: number;
  name: string;
  field: 'given' | 'then';
}

/** Behaviors without (or with a blank) `given` or `then`. */
export function incompleteBehaviors(specs: readonly CheckSpec[]): IncompleteBehavior[] {
  const out: IncompleteBehavior[] = [];
  for (const spec of specs) {
    list(spec.value['behaviors'])?.forEach((behavior, index) => {
      const name = field(behavior, 'name');
      for (const key of ['given', 'then'] as const) {
        const text = field(behavior, key);
        if (typeof text !== 'string' || text.trim() === '') {
          out.push({
            spec,
            index,
            name: typeof name === 'string' ? name : `behavior[${index}]`,
            field: key,
          });
        }
      }
    });
  }
  return out;
}

export interface RefCycle {
  /** Spec paths, the first repeated at the end (`a -> b -> a`). */
  path: string[];
  /** Line of the `$ref` in path[0] that points to path[1]. */
  line: number | null;
}

/**
 * `$ref` cycles through subsystems, applies and dependencies, as NotarAI finds them (`lint.rs`
 * `detect_ref_cycles`): a depth-first search from each spec in path order, neighbours in path
 * order, one cycle per back edge. Iterative, in time slices, in O(specs + refs) time and memory
 * whatever the graph: past MAX_CYCLES cycles, or MAX_CYCLE_NODES specs named by the cycles kept,
 * a cycle is only counted (`dropped`), never built.
 *
 * NotarAI also keeps a set of every cycle found, rotated to start at its smallest path, to report
 * each once. Here edges are distinct (a spec's refs to one target are one edge), and each back
 * edge closes its own cycle: the tree path from its target to its source, then the back edge,
 * which no other cycle found has (the others' edges are tree edges and their own back edge), so no
 * two cycles found are rotations of each other and that set would never drop one. Without it,
 * a dense graph (1,000 specs, spec k referring to k+1 and to every j < k: ~500,000 cycles) costs
 * its edges, not the O(specs³) of a key per cycle.
 */
export async function refCycles(
  specs: readonly CheckSpec[],
  signal?: AbortSignal,
): Promise<{ cycles: RefCycle[]; dropped: number }> {
  const bySpec = new Map(specs.map((spec) => [spec.path, spec]));
  const graph = new Map<string, string[]>();
  for (const spec of specs) {
    const edges = new Set<string>();
    for (const ref of spec.refs)
      if (!ref.outside && bySpec.has(ref.resolved)) edges.add(ref.resolved);
    graph.set(spec.path, [...edges].sort(compareUtf8));
    if (sliceDue()) await nextSlice(signal);
  }
  const color = new Map<string, number>();
  const cycles: RefCycle[] = [];
  let nodesLeft = MAX_CYCLE_NODES;
  let dropped = 0;
  for (const root of [...graph.keys()].sort(compareUtf8)) {
    if ((color.get(root) ?? 0) !== 0) continue;
    const stack: string[] = [root];
    const position = new Map<string, number>([[root, 0]]);
    const cursor: number[] = [0];
    color.set(root, 1);
    while (stack.length > 0) {
      if (sliceDue()) await nextSlice(signal);
      const depth = stack.length - 1;
      const node = stack[depth] as string;
      const neighbours = graph.get(node) ?? [];
      const at = cursor[depth] as number;
      if (at >= neighbours.length) {
        color.set(node, 2);
        position.delete(node);
        stack.pop();
        cursor.pop();
        continue;
      }
      cursor[depth] = at + 1;
      const next = neighbours[at] as string;
      const state = color.get(next) ?? 0;
      if (state === 0) {
        color.set(next, 1);
        position.set(next, stack.length);
        stack.push(next);
        cursor.push(0);
      } else if (state === 1) {
        const start = position.get(next) as number;
        const length = stack.length - start;
        if (cycles.length >= MAX_CYCLES || length > nodesLeft) {
          dropped++;
          continue;
        }
        nodesLeft -= length;
        const nodes = stack.slice(start);
        const first = bySpec.get(nodes[0] as string) as CheckSpec;
        const second = nodes[1] ?? nodes[0];
        const ref = first.refs.find((candidate) => candidate.resolved === second);
        cycles.push({
          path: [...nodes, next],
          line: ref ? lineOf(first, [ref.field, ref.index, '$ref']) : null,
        });
      }
    }
  }
  return { cycles, dropped };
}

/** Today as days since the epoch (UTC), or NOTARAI_TODAY (YYYY-MM-DD) as NotarAI's tests set it. */
export function todayDays(now: number): number {
  const override = process.env['NOTARAI_TODAY'];
  const parsed = override ? parseDateDays(override) : null;
  return parsed ?? Math.floor(now / 86_400_000);
}

/** A YYYY-MM-DD date (as NotarAI parses it: three numbers, month 1-12, day 1-31) as epoch days. */
export function parseDateDays(text: string): number | null {
  const parts = text.split('-');
  if (parts.length !== 3 || !parts.every((part) => /^\d+$/.test(part))) return null;
  const [year, month, day] = parts.map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  return Math.floor(Date.UTC(year, month - 1, day) / 86_400_000);
}

export interface LintInputs {
  specs: readonly CheckSpec[];
  config: LintConfig;
  /** Results of the `$ref` lookups: resolved path -> exists (refs outside are never looked up). */
  refExists: ReadonlyMap<string, boolean>;
  cycles: readonly RefCycle[];
  incomplete: readonly IncompleteBehavior[];
  now: number;
}

/** Every enabled rule's findings, by rule. */
export function runLint(inputs: LintInputs): LintFinding[] {
  const { specs, config } = inputs;
  const findings: LintFinding[] = [];
  const add = (rule: LintRule, spec: CheckSpec, message: string, line: number | null) =>
    findings.push({
      rule,
      severity: config.get(rule)?.severity ?? DEFAULT_SEVERITY[rule],
      spec_path: spec.path,
      message,
      line,
    });
  const enabled = (rule: LintRule) => config.get(rule)?.enabled ?? true;

  if (enabled('L001')) {
    for (const spec of specs) {
      if (tierOf(spec) !== 'full') continue;
      if ((list(spec.value['behaviors'])?.length ?? 0) === 0) {
        add('L001', spec, `Tier 1 (full) spec has zero behaviors: ${spec.path}`, null);
      }
    }
  }
  for (const [rule, which] of [
    ['L002', 'given'],
    ['L003', 'then'],
  ] as const) {
    if (!enabled(rule)) continue;
    for (const item of inputs.incomplete) {
      if (item.field !== which) continue;
      add(
        rule,
        item.spec,
        `Behavior '${item.name}' missing '${which}' field (in ${item.spec.path})`,
        lineOf(item.spec, ['behaviors', item.index]),
      );
    }
  }
  if (enabled('L004')) {
    for (const spec of specs) {
      for (const ref of spec.refs) {
        if (ref.outside || inputs.refExists.get(ref.resolved) !== false) continue;
        add(
          'L004',
          spec,
          `$ref target does not exist: ${ref.ref} (resolved to ${ref.resolved}, in ${spec.path})`,
          lineOf(spec, [ref.field, ref.index, '$ref']),
        );
      }
    }
  }
  if (enabled('L005')) {
    const byPath = new Map(specs.map((spec) => [spec.path, spec]));
    for (const cycle of inputs.cycles) {
      const spec = byPath.get(cycle.path[0] as string) as CheckSpec;
      add('L005', spec, `Circular $ref dependency: ${cycle.path.join(' -> ')}`, cycle.line);
    }
  }
  if (enabled('L006')) {
    const maxAge = config.get('L006')?.decisionAgeDays ?? 90;
    const today = todayDays(inputs.now);
    for (const spec of specs) {
      list(spec.value['decisions'])?.forEach((decision, index) => {
        const rationale = field(decision, 'rationale');
        if (typeof rationale === 'string' && rationale.trim() !== '') return;
        const date = field(decision, 'date');
        const days = typeof date === 'string' ? parseDateDays(date) : null;
        if (days === null) return;
        const age = today - days;
        if (age <= maxAge) return;
        const choice = field(decision, 'choice');
        add(
          'L006',
          spec,
          `Decision #${index + 1} ('${typeof choice === 'string' ? choice : 'unknown'}', ${String(date)}) ` +
            `is ${age} days old with no rationale (in ${spec.path})`,
          lineOf(spec, ['decisions', index]),
        );
      });
    }
  }
  if (enabled('L007')) {
    for (const spec of specs) {
      const count = list(spec.value['open_questions'])?.length ?? 0;
      if (count > 0) {
        add(
          'L007',
          spec,
          `Spec has ${count} open question${count === 1 ? '' : 's'}: ${spec.path}`,
          lineOf(spec, ['open_questions']),
        );
      }
    }
  }
  if (enabled('L008')) {
    for (const spec of specs) {
      for (const glob of spec.globs) {
        if (glob.pattern !== '**/*') continue;
        add(
          'L008',
          spec,
          `Artifact glob '**/*' is overly broad (in ${spec.path})`,
          lineOf(spec, ['artifacts', glob.category, glob.index, 'path']),
        );
      }
    }
  }
  if (enabled('L009')) {
    for (const spec of specs) {
      const raw = spec.value['schema_version'];
      const version = typeof raw === 'string' ? raw : '';
      if (version === BUNDLED_SCHEMA_VERSION) continue;
      add(
        'L009',
        spec,
        `schema_version '${version}' does not match bundled '${BUNDLED_SCHEMA_VERSION}' (in ${spec.path})`,
        lineOf(spec, ['schema_version']),
      );
    }
  }
  if (enabled('L010')) {
    for (const spec of specs) {
      const seen = new Map<string, { count: number; index: number }>();
      list(spec.value['behaviors'])?.forEach((behavior, index) => {
        const name = field(behavior, 'name');
        if (typeof name !== 'string') return;
        const entry = seen.get(name);
        if (entry) entry.count++;
        else seen.set(name, { count: 1, index });
      });
      for (const [name, { count, index }] of seen) {
        if (count < 2) continue;
        add(
          'L010',
          spec,
          `Duplicate behavior name '${name}' (${count} occurrences, in ${spec.path})`,
          lineOf(spec, ['behaviors', index]),
        );
      }
    }
  }
  if (enabled('L011')) {
    const crossCutting = new Set(
      specs.filter((spec) => spec.value['cross_cutting'] === true).map((spec) => spec.path),
    );
    for (const spec of crossCutting.size > 0 ? specs : []) {
      for (const ref of spec.refs) {
        if (ref.field !== 'subsystems' || !crossCutting.has(ref.resolved)) continue;
        add(
          'L011',
          spec,
          `Cross-cutting spec '${ref.resolved}' referenced in subsystems of ${spec.path}; move it to \`applies\``,
          lineOf(spec, [ref.field, ref.index, '$ref']),
        );
      }
    }
  }
  return findings;
}
