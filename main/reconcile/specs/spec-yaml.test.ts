// Duplicate keys in a spec are found in time linear in its keys: a committed spec whose
// `artifacts` mapping has 60,000 keys (~780 KiB, valid) loads and validates, where the `yaml` package's own
// check (every key against every earlier one) took it past the loader's 20 s worker deadline and
// `grove check` reported it as a spec that does not parse. The errors are the package's: same
// code, position and words, on every shape of key the package compares.
import { LineCounter, parseDocument } from 'yaml';
import type { YAMLError } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempRepo, writeFiles } from '../../testing/temp-repo.ts';
import type { TempRepo } from '../../testing/temp-repo.ts';
import { appendDecisionToSpecText } from '../notarai07/decisions-spec-edit.ts';
import { loadSpecs } from './spec-loader.ts';
import { parseSpecYaml } from './spec-yaml.ts';

const repos: TempRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
});

const SPEC = `schema_version: '0.8'
intent: App.
tier: registered
artifacts:
  code:
    - path: src/**
`;

/** Each error as code, offset, first line of its message and line/column. */
function errorsOf(doc: { errors: YAMLError[] }) {
  return doc.errors.map((error) => ({
    code: error.code,
    pos: error.pos[0],
    message: error.message.split('\n')[0],
    linePos: error.linePos?.[0],
  }));
}

describe('parseSpecYaml', () => {
  it("reports duplicate keys as the yaml package's uniqueKeys check does", () => {
    const inputs = [
      'a: 1\na: 2\n',
      'a: 1\nb: {x: 1, x: 2}\n',
      '1: a\n"1": b\n',
      '1: a\n1: b\n',
      '~: a\nnull: b\n',
      '? [a]\n: 1\n? [a]\n: 2\n',
      '.nan: 1\n.nan: 2\n',
      '&x a: 1\n*x : 2\n',
      'a: 1\n!!str a: 2\n',
      'x:\n  - {k: 1, k: 2, k: 3}\n  - k: 1\n    k: 2\n',
      '0: a\n-0: b\n',
      '0x10: a\n16: b\n',
      'a: [1, 2\nb: 1\nb: 2\n',
      '\'a\': 1\n"a": 2\na: 3\n',
      'true: 1\nTrue: 2\n',
      '<<: {a: 1}\n<<: {b: 2}\n',
      `${SPEC}intent: again\n`,
    ];
    for (const text of inputs) {
      const theirs = parseDocument(text, {
        lineCounter: new LineCounter(),
        prettyErrors: true,
        uniqueKeys: true,
      });
      const ours = parseSpecYaml(text, { lineCounter: new LineCounter(), prettyErrors: true });
      expect(errorsOf(ours), JSON.stringify(text)).toEqual(errorsOf(theirs));
    }
    expect(errorsOf(parseSpecYaml('a: 1\na: 2\n'))).toEqual([
      {
        code: 'DUPLICATE_KEY',
        pos: 5,
        message: 'Map keys must be unique at line 2, column 1:',
        linePos: { line: 2, col: 1 },
      },
    ]);
  });

  it('a spec whose artifacts has 60,000 keys loads and validates; a duplicate at its end is named by line', async () => {
    const keys = Array.from({ length: 60_000 }, (_, i) => `  k${i}: []\n`).join('');
    const big = `${SPEC}${keys}`;
    expect(big.length).toBeGreaterThan(750 * 1024);
    const repo = await makeTempRepo();
    repos.push(repo);
    await writeFiles(repo.root, {
      '.notarai/big.spec.yaml': big,
      '.notarai/dup.spec.yaml': `${big}  k0: [again]\n`,
    });
    const set = await loadSpecs(repo.root);
    expect(set.valid.map((spec) => spec.path)).toEqual(['.notarai/big.spec.yaml']);
    expect(set.errors).toEqual([
      {
        file: '.notarai/dup.spec.yaml',
        line: 60_007,
        message: 'invalid YAML: Map keys must be unique at line 60007, column 3:',
      },
    ]);
    // The decision edit parses it the same way (before and after the edit).
    const edited = appendDecisionToSpecText(big, {
      date: '2026-04-13',
      choice: 'c',
      rationale: 'r',
    });
    // (the section goes before `artifacts:`, as NotarAI puts it; the rest is kept)
    expect(edited.endsWith(`artifacts:\n  code:\n    - path: src/**\n${keys}`)).toBe(true);
    expect(edited).toContain("decisions:\n  - date: '2026-04-13'\n    choice: 'c'\n");
  });
});
