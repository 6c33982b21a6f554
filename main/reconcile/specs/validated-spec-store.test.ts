// The CLI's remembered spec validations: a load that takes every spec from the memory gives the
// same specs as a fresh load (valid ones, a deprecated version's warning, schema errors with what
// check reads of the spec, a YAML error), an edited spec is validated again, and a memory that is
// corrupt, of another build, or holding what JSON cannot give back is not used.
import { chmod, mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, makeTempRepo, writeFiles, type TempRepo } from '../../testing/temp-repo.ts';
import {
  loadSpecs,
  type LoadedSpec,
  type SpecSet,
  type SpecValidationMemo,
} from './spec-loader.ts';
import {
  CACHE_FILE_MAX_AGE_MS as MAX_STORE_AGE_MS,
  userCacheDirectory,
} from '../../platform/user-cache-directory.ts';
import { survivesJson, ValidatedSpecStore } from './validated-spec-store.ts';

const repos: TempRepo[] = [];
const directories: string[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true });
});

const SPECS = {
  '.notarai/app.spec.yaml': `schema_version: '0.8'
intent: The app.
artifacts:
  code:
    - path: src/**
  docs:
    - path: docs/*.md
behaviors:
  - name: runs
    given: input
    then: output
    tested_by:
      - path: tests/run.test.ts
`,
  '.notarai/old.spec.yaml': `schema_version: '0.4'
intent: Old.
artifacts:
  code:
    - path: old/**
behaviors:
  - name: stays
    given: time
    then: it stays
`,
  // A schema error: check still reads what the spec says (parsed value and lines).
  '.notarai/bad.spec.yaml': `schema_version: '0.8'
intent: 12
artifacts:
  code:
    - path: bad/**
surprise: true
`,
  '.notarai/broken.spec.yaml': 'schema_version: [\n',
};

/** What a loaded spec is, without its compiled glob matchers (functions). */
function plain(spec: LoadedSpec): unknown {
  if (!spec.ok) return spec;
  const { governs, categories, ...rest } = spec;
  return {
    ...rest,
    patterns: governs.patterns,
    categories: [...categories].map(([name, set]) => [name, set.patterns]),
  };
}
const plainSet = (set: SpecSet) => ({
  ...set,
  all: set.all.map(plain),
  valid: set.valid.map(plain),
});

/** The store, counting what it answered. */
function counted(store: ValidatedSpecStore): SpecValidationMemo & { hits: string[] } {
  const hits: string[] = [];
  return {
    hits,
    get: (relative, text) => {
      const found = store.get(relative, text);
      if (found) hits.push(relative);
      return found;
    },
    set: (relative, text, validated) => store.set(relative, text, validated),
  };
}

async function setUp(): Promise<{ repo: TempRepo; cache: string }> {
  const repo = await makeTempRepo(SPECS);
  repos.push(repo);
  const cache = await makeTempDir('grove-cache-');
  directories.push(cache);
  return { repo, cache };
}

describe('ValidatedSpecStore', () => {
  it('gives back every spec as a fresh load does, and validates an edited one again', async () => {
    const { repo, cache } = await setUp();
    const fresh = await loadSpecs(repo.root);
    expect(fresh.all.map((spec) => spec.ok)).toEqual([true, false, false, true]);

    const first = new ValidatedSpecStore(repo.root, 'build 1', cache);
    const firstMemo = counted(first);
    expect(plainSet(await loadSpecs(repo.root, undefined, firstMemo))).toEqual(plainSet(fresh));
    expect(firstMemo.hits).toEqual([]);
    first.save();

    const second = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    expect(plainSet(await loadSpecs(repo.root, undefined, second))).toEqual(plainSet(fresh));
    expect(second.hits.sort()).toEqual(Object.keys(SPECS).sort());

    await writeFiles(repo.root, {
      '.notarai/app.spec.yaml': SPECS['.notarai/app.spec.yaml'].replace('src/**', 'lib/**'),
    });
    const edited = await loadSpecs(repo.root);
    const third = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    expect(plainSet(await loadSpecs(repo.root, undefined, third))).toEqual(plainSet(edited));
    expect(third.hits).not.toContain('.notarai/app.spec.yaml');
    expect(third.hits).toHaveLength(3);
  });

  it('forgets specs that are gone once a run saves', async () => {
    const { repo, cache } = await setUp();
    const first = new ValidatedSpecStore(repo.root, 'build 1', cache);
    await loadSpecs(repo.root, undefined, first);
    first.save();
    await rm(path.join(repo.root, '.notarai/old.spec.yaml'));
    const second = new ValidatedSpecStore(repo.root, 'build 1', cache);
    await loadSpecs(repo.root, undefined, second);
    second.save();
    await writeFiles(repo.root, { '.notarai/old.spec.yaml': SPECS['.notarai/old.spec.yaml'] });
    const third = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    await loadSpecs(repo.root, undefined, third);
    expect(third.hits).not.toContain('.notarai/old.spec.yaml');
  });

  it('uses nothing from another build, a corrupt file, or another worktree', async () => {
    const { repo, cache } = await setUp();
    const first = new ValidatedSpecStore(repo.root, 'build 1', cache);
    await loadSpecs(repo.root, undefined, first);
    first.save();

    const otherBuild = counted(new ValidatedSpecStore(repo.root, 'build 2', cache));
    await loadSpecs(repo.root, undefined, otherBuild);
    expect(otherBuild.hits).toEqual([]);

    const other = await makeTempRepo(SPECS);
    repos.push(other);
    const otherWorktree = counted(new ValidatedSpecStore(other.root, 'build 1', cache));
    await loadSpecs(other.root, undefined, otherWorktree);
    expect(otherWorktree.hits).toEqual([]);

    const [file] = await readdir(path.join(cache, 'validated-specs'));
    await writeFile(path.join(cache, 'validated-specs', file!), '{"identity":"build 1","specs":');
    const corrupt = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    expect(plainSet(await loadSpecs(repo.root, undefined, corrupt))).toEqual(
      plainSet(await loadSpecs(repo.root)),
    );
    expect(corrupt.hits).toEqual([]);
  });

  it('does not remember what JSON cannot give back exactly', async () => {
    expect(survivesJson({ a: [1, 'x', null, true, { b: 2.5 }] })).toBe(true);
    for (const value of [Infinity, Number.NaN, -0, undefined, new Date(0), new Map()]) {
      expect(survivesJson({ a: [value] })).toBe(false);
    }
    expect(survivesJson(JSON.parse('{"__proto__": 1}'))).toBe(false);

    const { repo, cache } = await setUp();
    // `.inf` parses to Infinity: the spec is invalid (intent must be a string) and check reads
    // its value as written, which JSON would turn into null.
    await writeFiles(repo.root, {
      '.notarai/bad.spec.yaml': SPECS['.notarai/bad.spec.yaml'].replace(
        'intent: 12',
        'intent: .inf',
      ),
    });
    const first = new ValidatedSpecStore(repo.root, 'build 1', cache);
    await loadSpecs(repo.root, undefined, first);
    first.save();
    const second = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    expect(plainSet(await loadSpecs(repo.root, undefined, second))).toEqual(
      plainSet(await loadSpecs(repo.root)),
    );
    expect(second.hits).not.toContain('.notarai/bad.spec.yaml');
    expect(second.hits).toHaveLength(3);
  });

  it('loads a spec whose YAML anchor refers to itself, and leaves it out of the memory', async () => {
    // yaml builds a cyclic value for it; JSON would never end. The spec is invalid (unknown key).
    const { repo, cache } = await setUp();
    const cyclic = `${SPECS['.notarai/app.spec.yaml']}extra: &x\n  self: *x\n`;
    await writeFiles(repo.root, { '.notarai/app.spec.yaml': cyclic });
    const fresh = await loadSpecs(repo.root);
    const first = new ValidatedSpecStore(repo.root, 'build 1', cache);
    expect(plainSet(await loadSpecs(repo.root, undefined, first)).errors).toEqual(fresh.errors);
    first.save();
    const second = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    await loadSpecs(repo.root, undefined, second);
    expect(second.hits).not.toContain('.notarai/app.spec.yaml');
    expect(second.hits).toHaveLength(3);
  });

  it('does not remember what aliases expand past four times the spec, nor a stack-depth error', async () => {
    const { repo, cache } = await setUp();
    // 60 KB once, referred to 999 times: 60 MB as JSON.
    const expanded = `${SPECS['.notarai/old.spec.yaml']}big: &a ${'x'.repeat(60_000)}\nextra: [${Array(999).fill('*a').join(', ')}]\n`;
    await writeFiles(repo.root, { '.notarai/old.spec.yaml': expanded });
    const first = new ValidatedSpecStore(repo.root, 'build 1', cache);
    await loadSpecs(repo.root, undefined, first);
    first.save();
    const [file] = await readdir(path.join(cache, 'validated-specs'));
    const text = await readFile(path.join(cache, 'validated-specs', file!), 'utf8');
    expect(text.length).toBeLessThan(64 * 1024);
    const stack = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    stack.set('.notarai/deep.spec.yaml', 'a: [[[', {
      ok: false,
      path: '.notarai/deep.spec.yaml',
      errors: [
        {
          file: '.notarai/deep.spec.yaml',
          line: 1,
          message: 'invalid YAML: Maximum call stack size exceeded',
        },
      ],
    });
    expect(stack.get('.notarai/deep.spec.yaml', 'a: [[[')).toBeUndefined();
  });

  it('keeps the memory when a run fails before loading the specs, and never throws writing it', async () => {
    const { repo, cache } = await setUp();
    const first = new ValidatedSpecStore(repo.root, 'build 1', cache);
    await loadSpecs(repo.root, undefined, first);
    first.save();
    new ValidatedSpecStore(repo.root, 'build 1', cache).save(); // a run that never loaded
    const after = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    await loadSpecs(repo.root, undefined, after);
    expect(after.hits).toHaveLength(4);

    // Its folder is a file: nothing is written, nothing thrown, the specs load as ever.
    const blocked = await makeTempDir('grove-cache-');
    directories.push(blocked);
    await writeFile(path.join(blocked, 'validated-specs'), 'not a folder');
    const store = new ValidatedSpecStore(repo.root, 'build 1', blocked);
    expect(plainSet(await loadSpecs(repo.root, undefined, store))).toEqual(
      plainSet(await loadSpecs(repo.root)),
    );
    expect(() => store.save()).not.toThrow();
    // A directory others can write to is not used.
    const shared = await makeTempDir('grove-cache-');
    directories.push(shared);
    await mkdir(path.join(shared, 'open'));
    await chmod(path.join(shared, 'open'), 0o777);
    const open = new ValidatedSpecStore(repo.root, 'build 1', path.join(shared, 'open'));
    await loadSpecs(repo.root, undefined, open);
    open.save();
    expect(await readdir(path.join(shared, 'open'))).toEqual([]);
  });

  it('uses no cache directory inside the worktree, and none from a relative path', async () => {
    const { repo } = await setUp();
    const inside = path.join(repo.root, '.cache');
    const store = new ValidatedSpecStore(repo.root, 'build 1', inside);
    await loadSpecs(repo.root, undefined, store);
    store.save();
    expect(await readdir(repo.root)).not.toContain('.cache');
    expect(userCacheDirectory({ XDG_CACHE_HOME: '.cache' }, 'linux')).not.toBe('.cache/grove');
    expect(userCacheDirectory({ GROVE_CACHE_DIR: 'relative' }, 'linux')).not.toBe('relative');
    expect(userCacheDirectory({ XDG_CACHE_HOME: '/c' }, 'linux')).toBe('/c/grove');
    expect(userCacheDirectory({ GROVE_CACHE_DIR: '/g', XDG_CACHE_HOME: '/c' }, 'linux')).toBe('/g');
  });

  it('treats an entry of the wrong shape as a miss', async () => {
    const { repo, cache } = await setUp();
    const first = new ValidatedSpecStore(repo.root, 'build 1', cache);
    await loadSpecs(repo.root, undefined, first);
    first.save();
    const [file] = await readdir(path.join(cache, 'validated-specs'));
    const where = path.join(cache, 'validated-specs', file!);
    const memory = JSON.parse(await readFile(where, 'utf8')) as {
      specs: Record<string, { validated: unknown }>;
    };
    memory.specs['.notarai/app.spec.yaml']!.validated = { ok: true };
    await writeFile(where, JSON.stringify(memory));
    const second = counted(new ValidatedSpecStore(repo.root, 'build 1', cache));
    expect(plainSet(await loadSpecs(repo.root, undefined, second))).toEqual(
      plainSet(await loadSpecs(repo.root)),
    );
    expect(second.hits).not.toContain('.notarai/app.spec.yaml');
  });

  it('sweeps memories not written for 30 days when it writes one', async () => {
    const { repo, cache } = await setUp();
    const folder = path.join(cache, 'validated-specs');
    await mkdir(folder, { recursive: true });
    const old = path.join(folder, 'old.json');
    const recent = path.join(folder, 'recent.json');
    await writeFile(old, '{}');
    await writeFile(recent, '{}');
    const longAgo = new Date(Date.now() - MAX_STORE_AGE_MS - 60_000);
    await utimes(old, longAgo, longAgo);
    const store = new ValidatedSpecStore(repo.root, 'build 1', cache);
    await loadSpecs(repo.root, undefined, store);
    store.save();
    const left = await readdir(folder);
    expect(left).not.toContain('old.json');
    expect(left).toContain('recent.json');
    expect(left).toHaveLength(2); // recent.json and this worktree's memory
  });
});
