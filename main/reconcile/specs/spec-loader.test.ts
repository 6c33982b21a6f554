import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempRepo, writeFiles } from '../../testing/temp-repo.ts';
import type { TempRepo } from '../../testing/temp-repo.ts';
import { worstLoopStall } from '../../testing/event-loop.ts';
import {
  discoverSpecPaths,
  loadSpecs,
  MAIN_THREAD_SPEC_BYTES,
  systemSpecPath,
} from './spec-loader.ts';
import { parseSpecText } from './spec-validate.ts';
import type { ValidSpec } from './spec-loader.ts';

const execFileAsync = promisify(execFile);
const repos: TempRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
});

const VALID = `schema_version: '0.6'
intent: Auth.
artifacts:
  code:
    - path: src/auth/**
      role: implementation
  docs:
    - path: docs/auth.md
behaviors:
  - name: login
    given: valid credentials
    then: a session
`;

function errorsOf(text: string): { line: number | null; message: string }[] {
  const loaded = parseSpecText('.notarai/x.spec.yaml', text);
  if (loaded.ok) throw new Error('expected an invalid spec');
  return loaded.errors.map(({ line, message }) => ({ line, message }));
}

describe('spec parsing and validation', () => {
  it('accepts a valid spec in every schema version and compiles its globs', () => {
    for (const version of ['0.5', '0.6', '0.7', '0.8']) {
      const loaded = parseSpecText('.notarai/a.spec.yaml', VALID.replace("'0.6'", `'${version}'`));
      expect(loaded.ok).toBe(true);
      const spec = loaded as ValidSpec;
      expect(spec.governs.test('src/auth/login.ts')).toBe(true);
      expect([...spec.categories.keys()]).toEqual(['code', 'docs']);
    }
  });

  it('refuses a glob whose braces multiply it past the budget, naming the spec and the line', () => {
    // 14 KB of text that came to 10 MB of tokens per pattern: a worktree process ran out of memory.
    const multiplied = `src/*{${Array.from({ length: 1000 }, (_, i) => i).join(',')}}${'a'.repeat(10_000)}`;
    const text = VALID.replace('src/auth/**', multiplied);
    const started = performance.now();
    expect(errorsOf(text)).toEqual([
      {
        line: 3,
        message:
          'globs expand to more than 1,048,576 characters once braces are expanded (braces ' +
          'multiply a pattern)',
      },
    ]);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('loads a spec whose YAML aliases repeat a long glob many times, compiling it once', () => {
    const glob = `src/*${'x'.repeat(10_000)}`;
    const text =
      `schema_version: '0.6'\nintent: Aliases.\nartifacts:\n  code:\n` +
      `    - &long { path: '${glob}' }\n` +
      '    - *long\n'.repeat(990) +
      'behaviors:\n  - name: one\n    given: a\n    then: b\n';
    const started = performance.now();
    const loaded = parseSpecText('.notarai/x.spec.yaml', text);
    expect(loaded.ok).toBe(true);
    expect((loaded as ValidSpec).governs.test(`src/a${'x'.repeat(10_000)}`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('accepts registered and derived specs without behaviors', () => {
    for (const tier of ['registered', 'derived']) {
      const text = `schema_version: '0.7'\nintent: x\ntier: ${tier}\nartifacts:\n  code:\n    - path: a\n`;
      expect(parseSpecText('.notarai/a.spec.yaml', text).ok).toBe(true);
    }
  });

  it('requires behaviors for full specs', () => {
    const text = `schema_version: '0.7'\nintent: x\nartifacts:\n  code:\n    - path: a\n`;
    expect(errorsOf(text)).toEqual([
      {
        line: 1,
        message:
          "behaviors is required unless tier is 'registered' or 'derived' (tier is not set, so full)",
      },
    ]);
  });

  it('rejects an unquoted schema_version, pointing at its line', () => {
    expect(errorsOf(VALID.replace("'0.6'", '0.6'))).toEqual([
      { line: 1, message: "schema_version must be a quoted string ('0.6'), not a number" },
    ]);
    expect(errorsOf(VALID.replace("'0.6'", "'0.9'"))[0]?.message).toBe(
      "schema_version must be one of '0.4', '0.5', '0.6', '0.7', '0.8'",
    );
  });

  it('rejects unknown top-level keys with the line of the key', () => {
    expect(errorsOf(`${VALID}owner: me\n`)).toEqual([
      { line: 13, message: "unknown top-level key 'owner' (not part of the NotarAI spec format)" },
    ]);
  });

  it('names missing keys and nested problems', () => {
    expect(errorsOf(VALID.replace('intent: Auth.\n', ''))).toContainEqual({
      line: 1,
      message: "missing required key 'intent'",
    });
    const noThen = VALID.replace('    then: a session\n', '');
    expect(errorsOf(noThen)).toEqual([
      { line: 10, message: "missing required key 'then' in behaviors[0]" },
    ]);
    const badPath = VALID.replace('    - path: docs/auth.md', '    - path: 42');
    expect(errorsOf(badPath)).toEqual([
      { line: 8, message: 'artifacts.docs[0].path: expected string, got number 42' },
    ]);
  });

  it('reports invalid YAML with its line', () => {
    const [error] = errorsOf("schema_version: '0.7'\nintent: [unclosed\nartifacts: {}\n");
    expect(error?.message).toMatch(/^invalid YAML: /);
    expect(error?.line).toBeGreaterThanOrEqual(2);
    expect(errorsOf('')).toEqual([
      {
        line: 1,
        message: 'spec is empty: expected a mapping with schema_version, intent and artifacts',
      },
    ]);
    expect(errorsOf('- a\n- b\n')[0]?.message).toBe(
      'spec must be a YAML mapping (key: value pairs) at the top level',
    );
    expect(errorsOf(`${VALID}intent: again\n`)[0]?.message).toMatch(/invalid YAML: .*unique/i);
  });
});

describe('spec discovery', () => {
  it('finds *.spec.yaml recursively under .notarai/, skipping .yml and the cache', async () => {
    const repo = await makeTempRepo();
    repos.push(repo);
    await writeFiles(repo.root, {
      '.notarai/a.spec.yaml': VALID,
      '.notarai/sub/b.spec.yaml': VALID,
      '.notarai/c.spec.yml': VALID,
      '.notarai/.cache/d.spec.yaml': VALID,
      'docs/e.spec.yaml': VALID,
      '.notarai/broken.spec.yaml': 'intent: [',
    });
    expect(await discoverSpecPaths(repo.root)).toEqual([
      '.notarai/a.spec.yaml',
      '.notarai/broken.spec.yaml',
      '.notarai/sub/b.spec.yaml',
    ]);
    const set = await loadSpecs(repo.root);
    expect(set.valid.map((spec) => spec.path)).toEqual([
      '.notarai/a.spec.yaml',
      '.notarai/sub/b.spec.yaml',
    ]);
    expect(set.errors).toHaveLength(1);
    expect(set.errors[0]?.file).toBe('.notarai/broken.spec.yaml');
  });

  it('loads every spec of a repository holding more specs than the process may open files', async () => {
    const repo = await makeTempRepo();
    repos.push(repo);
    const count = 300;
    await writeFiles(
      repo.root,
      Object.fromEntries(
        Array.from({ length: count }, (_, i) => [
          `.notarai/s${String(i).padStart(3, '0')}.spec.yaml`,
          VALID,
        ]),
      ),
    );
    // A process allowed 100 open files (node and its libraries hold ~30 of them): every spec
    // read at once ran out of descriptors, and valid specs were reported "cannot read spec: EMFILE".
    const script =
      `import { loadSpecs } from ${JSON.stringify(new URL('./spec-loader.ts', import.meta.url).href)};\n` +
      `const set = await loadSpecs(${JSON.stringify(repo.root)});\n` +
      'console.log(JSON.stringify({ valid: set.valid.length, errors: set.errors.map((e) => e.message) }));';
    const { stdout } = await execFileAsync(
      'bash',
      ['-c', 'ulimit -n 100 && exec "$0" --input-type=module -e "$1"', process.execPath, script],
      { timeout: 20_000 },
    );
    expect(JSON.parse(stdout)).toEqual({ valid: count, errors: [] });
  });

  it('parses big specs without holding the event loop, and reports them as the small ones', async () => {
    const repo = await makeTempRepo();
    repos.push(repo);
    // Two valid specs of ~1 MB each: ~1 s each of YAML parse and schema check on the main thread.
    const behaviours = Array.from(
      { length: 12_000 },
      (_, i) =>
        `  - name: behaviour-${i}\n    given: the state number ${i}\n    then: the outcome ${i}\n`,
    ).join('');
    const big = `${VALID}${behaviours}`;
    expect(big.length).toBeGreaterThan(MAIN_THREAD_SPEC_BYTES);
    await writeFiles(repo.root, {
      '.notarai/big-a.spec.yaml': big,
      '.notarai/big-b.spec.yaml': big.replace('intent: Auth.', 'intent: [broken'),
      '.notarai/small.spec.yaml': VALID,
    });
    const { stallMs, result } = await worstLoopStall(() => loadSpecs(repo.root));
    if (result.status === 'rejected') throw result.reason;
    const set = result.value;
    expect(set.valid.map((spec) => spec.path)).toEqual([
      '.notarai/big-a.spec.yaml',
      '.notarai/small.spec.yaml',
    ]);
    expect(set.valid[0]!.spec.behaviors).toHaveLength(12_001);
    expect(set.valid[0]!.governs.test('src/auth/login.ts')).toBe(true);
    expect(set.errors).toEqual([
      expect.objectContaining({ file: '.notarai/big-b.spec.yaml', line: 3 }),
    ]);
    expect(stallMs).toBeLessThan(400);
  });

  it('a spec refused for its globs costs the specs after it nothing; one that fits alone says why it does not here', async () => {
    const repo = await makeTempRepo();
    repos.push(repo);
    const alternatives = `{${Array.from({ length: 1000 }, (_, i) => i).join(',')}}`;
    const withGlob = (glob: string) => VALID.replace('src/auth/**', glob);
    await writeFiles(repo.root, {
      // ~1.1 million characters once expanded: over the budget on its own.
      '.notarai/a-too-big.spec.yaml': withGlob(`src/*${alternatives}${'a'.repeat(1_100)}`),
      // ~600,000 each: either fits alone, not both.
      '.notarai/b-half.spec.yaml': withGlob(`src/*${alternatives}${'b'.repeat(300)}`),
      '.notarai/c-half.spec.yaml': withGlob(`src/*${alternatives}${'c'.repeat(300)}`),
      '.notarai/d-auth.spec.yaml': VALID,
    });
    const set = await loadSpecs(repo.root);
    expect(set.valid.map((spec) => spec.path)).toEqual([
      '.notarai/b-half.spec.yaml',
      '.notarai/d-auth.spec.yaml',
    ]);
    expect(set.errors.map((error) => [error.file, error.message])).toEqual([
      [
        '.notarai/a-too-big.spec.yaml',
        'globs expand to more than 1,048,576 characters once braces are expanded (braces ' +
          'multiply a pattern)',
      ],
      [
        '.notarai/c-half.spec.yaml',
        expect.stringMatching(
          /^globs expand to more than 1,048,576 characters .*, together with the globs of the specs before it in path order \([\d,]+ characters\)$/,
        ),
      ],
    ]);
  });

  it('picks the system spec: system.spec.yaml with subsystems, else the first top-level one', () => {
    const withSubsystems = (name: string): ValidSpec =>
      parseSpecText(name, `${VALID}subsystems:\n  - $ref: ./a.spec.yaml\n`) as ValidSpec;
    const plain = (name: string): ValidSpec => parseSpecText(name, VALID) as ValidSpec;
    expect(
      systemSpecPath([
        withSubsystems('.notarai/a.spec.yaml'),
        withSubsystems('.notarai/system.spec.yaml'),
      ]),
    ).toBe('.notarai/system.spec.yaml');
    expect(
      systemSpecPath([plain('.notarai/system.spec.yaml'), withSubsystems('.notarai/b.spec.yaml')]),
    ).toBe('.notarai/b.spec.yaml');
    expect(systemSpecPath([withSubsystems('.notarai/sub/c.spec.yaml')])).toBeNull();
    expect(systemSpecPath([plain('.notarai/a.spec.yaml')])).toBeNull();
  });
});
