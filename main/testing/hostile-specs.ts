// Fixtures: the specs and configs of issue 33's attacks on check (items 1, 2 and 7), as files to
// write into a repository. Shared by main/reconcile/notarai07/notarai-bounds.test.ts and
// scripts/bench-attacks.ts. Never used by production code.

/** Specs in the dense `$ref` graph of denseRefSpecs(). */
export const DENSE_SPECS = 1000;

const denseName = (index: number) => `d${String(index).padStart(4, '0')}.spec.yaml`;

/**
 * `count` specs under `.notarai/dense/` where spec k refers to spec k+1 and to every spec j < k:
 * ~count²/2 `$ref`s, and as many cycles (each back edge closes one).
 */
export function denseRefSpecs(count = DENSE_SPECS): Record<string, string> {
  const files: Record<string, string> = {};
  for (let k = 0; k < count; k++) {
    const refs = [k + 1, ...Array.from({ length: k }, (_, j) => j)]
      .map((target) => `  - $ref: ./${denseName(target)}\n`)
      .join('');
    files[`.notarai/dense/${denseName(k)}`] =
      `schema_version: '0.8'\nintent: dense ${k}\ntier: registered\n` +
      `artifacts:\n  code:\n    - path: src/main.rs\nsubsystems:\n${refs}`;
  }
  return files;
}

/** Cycles in denseRefSpecs(count): every ref to a j < k is a back edge of the search. */
export const denseCycleCount = (count = DENSE_SPECS) => (count * (count - 1)) / 2;

/** Specs of bigCommentSpecs(). */
export const BIG_SPECS = 12;
/** The line of each big spec's one behavior. */
export const BIG_SPEC_BEHAVIOR_LINE = 7 + 500_000;

/**
 * `count` specs of ~2 MB under `.notarai/big/`, mostly comments (short lines, the costliest to
 * parse: ~3 s and ~120 MB of document each), one behavior each without
 * `tested_by` in a full-tier spec with code artifacts: a T001 finding per spec, whose line is
 * after the comments (BIG_SPEC_BEHAVIOR_LINE).
 */
export function bigCommentSpecs(count = BIG_SPECS): Record<string, string> {
  const comments = '# c\n'.repeat(500_000);
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    files[`.notarai/big/b${String(i).padStart(2, '0')}.spec.yaml`] =
      `schema_version: '0.8'\nintent: big ${i}\nartifacts:\n  code:\n    - path: src/main.rs\n` +
      `behaviors:\n${comments}  - name: behavior ${i}\n    given: a state\n    then: an outcome\n`;
  }
  return files;
}

/** Bytes of each nested config (NotarAI's configs, as big as Grove reads them: 1 MiB). */
const NESTED_BYTES = 1024 * 1024;

/**
 * `.notarai/check.yaml`, `lint.yaml` and `scoring.yaml` nested as deep as 1 MiB allows: flow
 * sequences, block mappings (one more space per level), flow mappings; `salt` makes other texts.
 */
export function nestedConfigs(salt = ''): Record<string, string> {
  const flow = (open: string, close: string, unit: number) => {
    const depth = Math.floor((NESTED_BYTES - 64) / unit);
    return open.repeat(depth) + close.repeat(depth);
  };
  const lines: string[] = ['rules:'];
  let size = 8;
  for (let level = 1; size < NESTED_BYTES - 2_000; level++) {
    const line = `${' '.repeat(level)}k${level}:`;
    lines.push(line);
    size += line.length + 1;
  }
  return {
    '.notarai/check.yaml': `# ${salt}\n${flow('[', ']', 2)}\n`,
    '.notarai/lint.yaml': `# ${salt}\n${lines.join('\n')}\n`,
    '.notarai/scoring.yaml': `# ${salt}\n${flow('{a: ', '}', 5)}\n`,
  };
}
