// Hostile input to NotarAI 0.7's check and score (issue 25, item 5): every config NotarAI reads —
// check.yaml, lint.yaml, scoring.yaml, decision-log.json — as a symlink out of the worktree, a FIFO,
// a device, a huge (sparse) file and invalid text gives a warning naming it and the defaults,
// never a stall and never the content it refused; `$ref`s that leave the worktree are findings
// naming them and their targets are never opened; a `$ref` chain through 10,000 specs and a cycle
// through 1,000 finish (bounded: iterative, no recursion).
import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CAN_MKNOD,
  leaksSecret,
  makeSparse,
  mkfifo,
  mknodZero,
  SECRET,
  outsideFile,
  RUST_APP_SPEC,
  rustAppRepo,
} from '../../testing/hostile-repository.ts';
import { runCheck } from './notarai-check.ts';
import { scoreSpecs } from './notarai-score.ts';
import { cleanupsAfterEach } from '../../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

const SPEC = RUST_APP_SPEC;

const CONFIGS = {
  'check.yaml': `warn_on: critical\nfail_on: housekeeping\n# ${SECRET}\n`,
  'lint.yaml': `rules:\n  L007:\n    enabled: false\n# ${SECRET}\n`,
  'scoring.yaml': `files_changed: 0\ndays_since_reconciliation: 0\n# ${SECRET}\n`,
  'decision-log.json': JSON.stringify({
    proposals: Array.from({ length: 5 }, () => ({
      spec_path: '.notarai/app.spec.yaml',
      status: 'proposed',
      note: SECRET,
    })),
  }),
} as const;
type ConfigName = keyof typeof CONFIGS;

const HOSTILE: { name: string; make: (root: string, config: ConfigName) => Promise<void> }[] = [
  {
    name: 'a symlink out of the worktree',
    make: async (root, config) =>
      symlink(
        await outsideFile(cleanups, config, CONFIGS[config]),
        path.join(root, '.notarai', config),
      ),
  },
  { name: 'a FIFO', make: (root, config) => mkfifo(path.join(root, '.notarai', config)) },
  {
    name: 'a symlink to /dev/zero',
    make: (root, config) => symlink('/dev/zero', path.join(root, '.notarai', config)),
  },
  ...(CAN_MKNOD
    ? [
        {
          name: 'a character device',
          make: (root: string, config: ConfigName) =>
            mknodZero(path.join(root, '.notarai', config)),
        },
      ]
    : []),
  {
    name: 'a huge file (64 MiB, sparse)',
    make: (root, config) => makeSparse(path.join(root, '.notarai', config), '64M'),
  },
  {
    name: 'invalid text',
    make: (root, config) =>
      writeFile(
        path.join(root, '.notarai', config),
        config.endsWith('.json') ? '{"proposals": [' : 'rules: [unclosed\n  : :\n',
      ),
  },
];

/** Check and score of a repository with no configs: the defaults. */
async function defaults() {
  const root = await rustAppRepo(cleanups, {
    '.notarai/open.spec.yaml': `${SPEC}open_questions:\n  - q\n`,
  });
  return { check: await runCheck(root), score: await scoreSpecs(root) };
}

describe('configs that cannot be used give a warning naming them and the defaults', () => {
  for (const config of Object.keys(CONFIGS) as ConfigName[]) {
    it(`${config}: symlink out, FIFO, device, huge, invalid`, async () => {
      const expected = await defaults();
      for (const hostile of HOSTILE) {
        const root = await rustAppRepo(cleanups, {
          '.notarai/open.spec.yaml': `${SPEC}open_questions:\n  - q\n`,
        });
        await hostile.make(root, config);
        const check = await runCheck(root);
        const score = await scoreSpecs(root);
        const warnings = [...check.warnings, ...score.warnings].join('\n');
        expect(warnings, hostile.name).toContain(`.notarai/${config}`);
        expect(warnings, hostile.name).toMatch(/defaults are used/);
        // The defaults: the same findings, verdict and scores as with no config at all.
        expect(check.findings, hostile.name).toEqual(expected.check.findings);
        expect(check.exit_code, hostile.name).toBe(expected.check.exit_code);
        expect(score.specs, hostile.name).toEqual(expected.score.specs);
        expect(leaksSecret([check, score]), hostile.name).toBe(false);
      }
    }, 120_000);
  }

  it('the same configs, readable, do change the answers (the fixtures above are not inert)', async () => {
    const expected = await defaults();
    const root = await rustAppRepo(cleanups, {
      '.notarai/open.spec.yaml': `${SPEC}open_questions:\n  - q\n`,
      ...Object.fromEntries(
        Object.entries(CONFIGS).map(([name, text]) => [`.notarai/${name}`, text]),
      ),
    });
    const check = await runCheck(root);
    const score = await scoreSpecs(root);
    expect(check.warnings).toEqual([]);
    expect(check.findings).not.toEqual(expected.check.findings);
    expect(score.specs).not.toEqual(expected.score.specs);
  });
});

describe('$ref hostile input', () => {
  it('a $ref leaving the worktree (../.., absolute, through a symlink) names it; its target is never opened', async () => {
    const target = await outsideFile(cleanups, 'x.spec.yaml', `intent: ${SECRET}\n`);
    const root = await rustAppRepo(cleanups);
    await symlink(path.dirname(target), path.join(root, 'out'));
    await writeFile(
      path.join(root, '.notarai/app.spec.yaml'),
      `${SPEC}subsystems:
  - $ref: '../../x.spec.yaml'
  - $ref: '${target}'
  - $ref: 'out/x.spec.yaml'
`,
    );
    const before = await readFile(target, 'utf8');
    const report = await runCheck(root);
    const outside = report.findings.filter((item) => item.type === 'ref_outside_worktree');
    expect(outside.map((item) => item.message)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('../../x.spec.yaml'),
        expect.stringContaining(target),
        expect.stringContaining('out/x.spec.yaml'),
      ]),
    );
    expect(outside).toHaveLength(3);
    for (const item of outside) expect(item.line).toBeGreaterThan(0);
    expect(leaksSecret(report)).toBe(false);
    expect(await readFile(target, 'utf8')).toBe(before);
  });

  it('a $ref chain through 10,000 specs and a cycle through 1,000 finish, one finding per cycle', async () => {
    // Registered specs with one glob each, written untracked (no commit: quick to make).
    const spec = (next: string) =>
      `schema_version: '0.8'\nintent: c\ntier: registered\nartifacts:\n  code:\n    - path: src/main.rs\nsubsystems:\n  - $ref: './${next}'\n`;
    const files: Record<string, string> = {};
    for (let i = 0; i < 10_000; i++)
      files[`.notarai/c/${i}.spec.yaml`] = spec(`${i + 1}.spec.yaml`);
    for (let i = 0; i < 1_000; i++)
      files[`.notarai/r/${i}.spec.yaml`] = spec(`${(i + 1) % 1000}.spec.yaml`);
    const root = await rustAppRepo(cleanups, files);
    const report = await runCheck(root);
    const cycles = report.findings.filter((item) => item.type === 'circular_ref');
    expect(cycles).toHaveLength(1);
    expect(cycles[0]?.message.split(' -> ')).toHaveLength(1001);
    // The chain's end names a spec that does not exist: one L004.
    const missing = report.findings.filter((item) => item.type === 'lint_l004');
    expect(missing.map((item) => item.spec_path)).toEqual(['.notarai/c/9999.spec.yaml']);
  }, 600_000);
});
