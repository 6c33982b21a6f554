// The decisions core on real files: where an accepted decision goes in a spec (every other byte
// kept, whatever the spec's layout), the log written as NotarAI writes it, proposals checked and
// bounded, accept planned without writing, and mutations of one log never losing each other's
// entries.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { makeTempRepo } from '../../testing/temp-repo.ts';
import { appendDecisionToSpecText } from './decisions-spec-edit.ts';
import {
  acceptDecision,
  DECISION_LOG_PATH,
  listDecisions,
  MAX_DECISION_LOG_BYTES,
  parseDecisionLog,
  planAcceptDecision,
  proposeDecision,
  rejectDecision,
  serializeDecisionLog,
} from './decisions.ts';
import { validateSpecText } from '../specs/spec-validate.ts';
import { cleanupsAfterEach } from '../../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

const HEAD = "schema_version: '0.8'\nintent: x\ntier: registered\n";
const ARTIFACTS = "artifacts:\n  code:\n    - path: 'src/*'\n";
const DECISION = { date: '2026-04-13', choice: 'Retry', rationale: 'Because' };
const ENTRY = { date: '2026-04-13', choice: 'Retry', rationale: 'Because\n' };

const decisionsOf = (text: string) => (parse(text) as { decisions: unknown[] }).decisions;

describe('appendDecisionToSpecText: the entry added, every other byte kept', () => {
  const cases: [string, string, string][] = [
    [
      'after the last entry, comments and blank lines kept',
      `${HEAD}decisions:\n  # first\n  - date: '2020-01-01' # old\n    choice: a\n  # trailing comment\n\n${ARTIFACTS}`,
      `${HEAD}decisions:\n  # first\n  - date: '2020-01-01' # old\n    choice: a\n` +
        "  - date: '2026-04-13'\n    choice: 'Retry'\n    rationale: >\n      Because\n" +
        `  # trailing comment\n\n${ARTIFACTS}`,
    ],
    [
      'a list at column 0 gets its entry at column 0 (NotarAI: two spaces, which does not parse)',
      `${HEAD}decisions:\n- date: '2020-01-01'\n  choice: a\n${ARTIFACTS}`,
      `${HEAD}decisions:\n- date: '2020-01-01'\n  choice: a\n` +
        "- date: '2026-04-13'\n  choice: 'Retry'\n  rationale: >\n    Because\n" +
        ARTIFACTS,
    ],
    [
      'a list four spaces in',
      `${HEAD}decisions:\n    - date: '2020-01-01'\n      choice: a\n`,
      `${HEAD}decisions:\n    - date: '2020-01-01'\n      choice: a\n` +
        "    - date: '2026-04-13'\n      choice: 'Retry'\n      rationale: >\n        Because\n",
    ],
    [
      '`decisions: []` becomes a block list (NotarAI appends block items after it: no YAML)',
      `${HEAD}decisions: []\n${ARTIFACTS}`,
      `${HEAD}decisions:\n  - date: '2026-04-13'\n    choice: 'Retry'\n    rationale: >\n      Because\n${ARTIFACTS}`,
    ],
    [
      'no section: before artifacts: and the comment above it, a blank line each side',
      `${HEAD}# the files\n${ARTIFACTS}`,
      `${HEAD}\ndecisions:\n  - date: '2026-04-13'\n    choice: 'Retry'\n    rationale: >\n      Because\n\n# the files\n${ARTIFACTS}`,
    ],
    [
      'no section: before artifacts: even when constraints: comes first (NotarAI looks for artifacts first)',
      `${HEAD}constraints:\n  - c\n\n${ARTIFACTS}`,
      `${HEAD}constraints:\n  - c\n\ndecisions:\n  - date: '2026-04-13'\n    choice: 'Retry'\n    rationale: >\n      Because\n\n${ARTIFACTS}`,
    ],
    [
      'no section and no anchor: at the end, after a blank line; a missing final newline added',
      `${HEAD}behaviors:\n- name: n\n  given: g\n  then: t`,
      `${HEAD}behaviors:\n- name: n\n  given: g\n  then: t\n\ndecisions:\n- date: '2026-04-13'\n  choice: 'Retry'\n  rationale: >\n    Because\n`,
    ],
  ];
  for (const [name, before, after] of cases) {
    it(name, () => {
      const edited = appendDecisionToSpecText(before, DECISION);
      expect(edited).toBe(after);
      const old = (decisionsOf(before) ?? []) as unknown[];
      expect(decisionsOf(edited)).toEqual([...old, ENTRY]);
    });
  }

  it('keeps CRLF line endings', () => {
    const before = `${HEAD}decisions:\n  - date: '2020-01-01'\n    choice: a\n${ARTIFACTS}`.replace(
      /\n/g,
      '\r\n',
    );
    const edited = appendDecisionToSpecText(before, DECISION);
    expect(edited.replace(/\r\n/g, '')).not.toContain('\n');
    expect(decisionsOf(edited)).toEqual([{ date: '2020-01-01', choice: 'a' }, ENTRY]);
  });

  it("keeps a rationale's line breaks, blank lines, leading spaces; quotes and unicode", () => {
    const rationale =
      '  Indented first line.\nSecond: "quoted" and \'single\'.\n\n# not a comment — ünï';
    const choice = "Don't #split: here 🙂";
    const edited = appendDecisionToSpecText(`${HEAD}${ARTIFACTS}`, {
      ...DECISION,
      choice,
      rationale,
    });
    expect(decisionsOf(edited)).toEqual([
      { date: '2026-04-13', choice, rationale: `${rationale}\n` },
    ]);
    expect(edited).toContain('rationale: |');
    expect(validateSpecText('.notarai/a.spec.yaml', edited).ok).toBe(true);
  });

  it('a long one-line rationale stays one line (NotarAI does not fold it either)', () => {
    const rationale = 'word '.repeat(60).trim();
    const edited = appendDecisionToSpecText(`${HEAD}${ARTIFACTS}`, { ...DECISION, rationale });
    expect(edited).toContain(`\n      ${rationale}\n`);
  });

  it('a flow-style spec is edited on the document (comments kept)', () => {
    const before =
      "{schema_version: '0.8', intent: x, artifacts: {code: [{path: 'src/*'}]}} # keep\n";
    const edited = appendDecisionToSpecText(before, DECISION);
    expect(edited).toContain('# keep');
    expect(decisionsOf(edited)).toEqual([ENTRY]);
  });

  it('refuses YAML that does not parse, and a spec that is not a mapping', () => {
    expect(() => appendDecisionToSpecText('a: [\n', DECISION)).toThrow(/not valid YAML/);
    expect(() => appendDecisionToSpecText('- a\n', DECISION)).toThrow(/not a YAML mapping/);
  });
});

// ---- the log -----------------------------------------------------------------------------------

const SPEC = `${HEAD}${ARTIFACTS}`;

async function project(files: Record<string, string> = {}) {
  const repo = await makeTempRepo({ '.notarai/a.spec.yaml': SPEC, 'src/x': 'x', ...files });
  cleanups.push(() => repo.cleanup());
  return repo.root;
}

const entry = (spec_path: string, choice: string, status = 'proposed') => ({
  spec_path,
  date: '2026-04-13',
  choice,
  rationale: 'r',
  origin: 'human',
  status,
});

const readLog = async (root: string) => readFile(path.join(root, DECISION_LOG_PATH), 'utf8');

describe('the decision log', () => {
  it("is written as NotarAI's serde_json: its key order, empty and null optionals left out, unknown keys kept", () => {
    const log = parseDecisionLog(
      JSON.stringify({
        proposals: [
          {
            note: 'kept',
            status: 'proposed',
            reject_reason: null,
            related_files: [],
            origin: 'o',
            rationale: 'r',
            choice: 'c',
            date: 'd',
            spec_path: 's',
          },
        ],
        version: 2,
      }),
    );
    expect(serializeDecisionLog(log)).toBe(
      '{\n  "proposals": [\n    {\n      "spec_path": "s",\n      "date": "d",\n      "choice": "c",\n' +
        '      "rationale": "r",\n      "origin": "o",\n      "status": "proposed",\n' +
        '      "note": "kept"\n    }\n  ],\n  "version": 2\n}',
    );
  });

  it('names what is wrong with an entry (NotarAI takes such a log for an empty one)', () => {
    expect(() =>
      parseDecisionLog(JSON.stringify({ proposals: [entry('s', 'c'), { spec_path: 's' }] })),
    ).toThrow(/^\.notarai\/decision-log\.json is not valid: proposals\[1\]\.date: /);
    expect(() => parseDecisionLog('[]')).toThrow(/is not valid/);
  });

  it('list filters by status and spec, with indexes in the log', async () => {
    const root = await project({
      [DECISION_LOG_PATH]: JSON.stringify({
        proposals: [
          entry('.notarai/a.spec.yaml', 'A'),
          entry('.notarai/b.spec.yaml', 'B', 'rejected'),
          entry('.notarai/a.spec.yaml', 'C'),
        ],
      }),
    });
    const all = await listDecisions(root);
    expect(all).toMatchObject({ total: 3, proposed: 2, log_path: DECISION_LOG_PATH });
    expect(all.decisions.map((d) => [d.index, d.choice])).toEqual([
      [0, 'A'],
      [1, 'B'],
      [2, 'C'],
    ]);
    const mine = await listDecisions(root, {
      specPath: '.notarai/a.spec.yaml',
      status: 'proposed',
    });
    expect(mine.decisions.map((d) => d.index)).toEqual([0, 2]);
    expect((await listDecisions(await project())).decisions).toEqual([]);
  });

  it('planAcceptDecision shows both files after, and writes nothing', async () => {
    const log = JSON.stringify({ proposals: [entry('.notarai/a.spec.yaml', 'A')] });
    const root = await project({ [DECISION_LOG_PATH]: log });
    const plan = await planAcceptDecision(root, '.notarai/a.spec.yaml', 0);
    expect(plan.specBefore).toBe(SPEC);
    expect(decisionsOf(plan.specAfter)).toEqual([
      { date: '2026-04-13', choice: 'A', rationale: 'r\n' },
    ]);
    expect(plan.logAfter).toBe('{\n  "proposals": []\n}');
    expect(await readLog(root)).toBe(log);
    expect(await readFile(path.join(root, '.notarai/a.spec.yaml'), 'utf8')).toBe(SPEC);
  });

  it('accept keeps a byte-order mark, reads a log that has one, and refuses a spec that is not UTF-8', async () => {
    const log = `\uFEFF${JSON.stringify({ proposals: [entry('.notarai/a.spec.yaml', 'A')] })}`;
    const root = await project({
      [DECISION_LOG_PATH]: log,
      '.notarai/a.spec.yaml': `\uFEFF${SPEC}`,
    });
    await acceptDecision(root, '.notarai/a.spec.yaml', 0);
    const spec = await readFile(path.join(root, '.notarai/a.spec.yaml'), 'utf8');
    expect(spec.startsWith(`\uFEFF${HEAD}\ndecisions:\n`)).toBe(true);
    expect(decisionsOf(spec.slice(1))).toHaveLength(1);

    const latin1 = Buffer.from(`${SPEC}# caf\xe9\n`, 'latin1');
    const other = await project({ [DECISION_LOG_PATH]: log });
    await (
      await import('node:fs/promises')
    ).writeFile(path.join(other, '.notarai/a.spec.yaml'), latin1);
    await expect(acceptDecision(other, '.notarai/a.spec.yaml', 0)).rejects.toThrow(
      /is not UTF-8 text, so Grove does not rewrite it/,
    );
    expect(await readFile(path.join(other, '.notarai/a.spec.yaml'))).toEqual(latin1);
    expect(await readLog(other)).toBe(log);
  });

  it('accept refuses a spec path outside .notarai/ that the log names', async () => {
    for (const spec of ['../outside.spec.yaml', '.notarai/../x.spec.yaml', 'src/x']) {
      const root = await project({
        [DECISION_LOG_PATH]: JSON.stringify({ proposals: [entry(spec, 'A')] }),
      });
      await expect(acceptDecision(root, spec, 0)).rejects.toThrow(
        /not a spec file under \.notarai\//,
      );
    }
  });
});

describe('propose_decision', () => {
  it('appends a proposal, status proposed, dated today by default', async () => {
    const root = await project();
    const now = new Date(2026, 3, 13, 23, 59);
    const result = await proposeDecision(
      root,
      {
        spec_path: '.notarai/a.spec.yaml',
        choice: 'Retry',
        rationale: 'Line one.\nLine two.',
        related_files: ['src/x'],
      },
      now,
    );
    expect(result).toEqual({
      decision: {
        index: 0,
        spec_path: '.notarai/a.spec.yaml',
        date: '2026-04-13',
        choice: 'Retry',
        rationale: 'Line one.\nLine two.',
        origin: 'reconciliation',
        status: 'proposed',
        related_files: ['src/x'],
        reject_reason: null,
      },
      total: 1,
      log_path: DECISION_LOG_PATH,
    });
    // A person accepts it as NotarAI would: the line break survives into the spec.
    await acceptDecision(root, '.notarai/a.spec.yaml', 0);
    const spec = await readFile(path.join(root, '.notarai/a.spec.yaml'), 'utf8');
    expect(decisionsOf(spec)).toEqual([
      { date: '2026-04-13', choice: 'Retry', rationale: 'Line one.\nLine two.\n' },
    ]);
    expect(await readLog(root)).toBe('{\n  "proposals": []\n}');
  });

  it('refuses what could not be accepted or reviewed, naming the problem; nothing written', async () => {
    const root = await project();
    const base = { spec_path: '.notarai/a.spec.yaml', choice: 'c', rationale: 'r' };
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ spec_path: 'src/x' }, /spec_path must name a spec file under \.notarai\//],
      [{ spec_path: '.notarai/nope.spec.yaml' }, /no such spec: \.notarai\/nope\.spec\.yaml/],
      [{ spec_path: '.notarai/../.notarai/a.spec.yaml' }, /spec_path must name/],
      [{ choice: 'two\nlines' }, /choice must be one line/],
      [{ choice: '  ' }, /choice must not be empty/],
      [{ choice: 'x'.repeat(501) }, /choice is 501 characters long; the limit is 500/],
      [{ rationale: 'x'.repeat(20_001) }, /the limit is 20000/],
      [{ rationale: 'bell\u0007' }, /control characters/],
      [{ date: '2026-02-30' }, /date must be a date written YYYY-MM-DD/],
      [{ date: '13/04/2026' }, /date must be a date/],
      [{ related_files: ['../etc/passwd'] }, /related_files: "\.\.\/etc\/passwd" is not a path/],
      [{ related_files: ['/etc/passwd'] }, /is not a path relative/],
      [{ related_files: Array.from({ length: 201 }, (_, i) => `f${i}`) }, /limit is 200/],
      // Lone surrogates: written as "\ud800" escapes, which NotarAI's serde_json refuses (and so
      // takes the whole log for an empty one).
      [{ choice: 'x\ud800y' }, /choice is not valid Unicode text \(a lone surrogate\)/],
      [{ rationale: 'why\udfff' }, /rationale is not valid Unicode text/],
      [{ related_files: ['src/\ud83d'] }, /related_files: .* is not a path/],
    ];
    for (const [change, message] of refusals) {
      await expect(
        proposeDecision(root, { ...base, ...change } as never),
        JSON.stringify(change).slice(0, 80),
      ).rejects.toThrow(message);
    }
    await expect(readLog(root)).rejects.toThrow(/ENOENT/);
  });

  it('never lets the log grow past the cap score reads (1 MiB)', async () => {
    const big = Array.from({ length: 60 }, (_, i) => ({
      ...entry('.notarai/a.spec.yaml', `c${i}`),
      rationale: 'x'.repeat(17_000),
    }));
    const text = JSON.stringify({ proposals: big });
    expect(text.length).toBeLessThan(MAX_DECISION_LOG_BYTES);
    const root = await project({ [DECISION_LOG_PATH]: text });
    await expect(
      proposeDecision(root, {
        spec_path: '.notarai/a.spec.yaml',
        choice: 'c',
        rationale: 'x'.repeat(20_000),
      }),
    ).rejects.toThrow(/would be larger than 1048576 bytes/);
    expect(await readLog(root)).toBe(text);
  });

  it('concurrent proposals, rejects and accepts in one process lose nothing', async () => {
    const root = await project({
      [DECISION_LOG_PATH]: JSON.stringify({ proposals: [entry('.notarai/a.spec.yaml', 'first')] }),
    });
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) =>
        proposeDecision(root, {
          spec_path: '.notarai/a.spec.yaml',
          choice: `p${i}`,
          rationale: 'r',
        }),
      ),
      rejectDecision(root, '.notarai/a.spec.yaml', 0, 'no'),
    ]);
    const { decisions } = await listDecisions(root);
    expect(decisions).toHaveLength(21);
    expect(decisions[0]).toMatchObject({
      choice: 'first',
      status: 'rejected',
      reject_reason: 'no',
    });
    expect(new Set(decisions.slice(1).map((d) => d.choice))).toEqual(
      new Set(Array.from({ length: 20 }, (_, i) => `p${i}`)),
    );
    await Promise.all([
      acceptDecision(root, '.notarai/a.spec.yaml', 1),
      proposeDecision(root, { spec_path: '.notarai/a.spec.yaml', choice: 'late', rationale: 'r' }),
    ]);
    expect((await listDecisions(root)).total).toBe(21);
  });
});
