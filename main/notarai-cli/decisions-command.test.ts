// `grove decisions` against NotarAI 0.7's `notarai decisions`, on a repository with proposals on
// two specs (api: a `decisions:` section with a comment; app: none): list, list --status, accept,
// accept on the wrong spec, of a rejected or out-of-range index, reject with a reason — stdout,
// stderr, exit codes, the log's bytes and the specs' decisions.
//
// The NOTARAI_* expectations were recorded by running NotarAI 0.7.0 (the binary built from
// shared/notarai-0.7-source, see shared/notarai-0.7-bin/README) on exactly these files, in the
// same order of commands, in a copy of this repository: `notarai decisions list`, ... from its
// root. The suite does not run NotarAI (CI has no binary nor python3-jsonschema, which its
// `accept` needs), so they are kept here as text. Where Grove differs on purpose (the spec's
// layout and a rationale's line breaks, validation before writing, no panic on a multi-byte
// cut), the test says so; docs/notarai-compatibility.md lists each difference. NotarAI's own
// decisions_test.rs cases (not initialised, empty log, list, --status, accept appends, reject
// marks, wrong spec, out of range) are all among these.
import { execFile } from 'node:child_process';
import { chmod, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { git, makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { validateSpecText } from '../reconcile/specs/spec-validate.ts';
import { choicePreview, runDecisionsCommand } from './decisions-command.ts';
import type { CommandOutput } from './notarai-commands.ts';
import { API_SPEC, APP_SPEC, decisionLog } from '../testing/decision-fixtures.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const GROVE = fileURLToPath(new URL('../../bin/grove.js', import.meta.url));

const cleanups = cleanupsAfterEach();

const LOG = decisionLog(
  '{"spec_path":".notarai/app.spec.yaml","date":"2026-04-16","choice":"Keep the session store in SQLite, it\'s durable across restarts","rationale":"Sessions survived the crash test","origin":"reconciliation","status":"proposed"}',
);

// ---- NotarAI 0.7.0's answers (recorded, see the top) -------------------------------------------

const HEADER =
  'Index Status     Spec                                     Choice\n' + `${'-'.repeat(80)}\n`;
const NOTARAI_LIST =
  HEADER +
  '0     proposed   .notarai/api.spec.yaml                   Retry idempotent requests\n' +
  '1     proposed   .notarai/app.spec.yaml                   Drop the legacy endpoint\n' +
  '2     rejected   .notarai/api.spec.yaml                   Switch to XML\n' +
  "3     proposed   .notarai/app.spec.yaml                   Keep the session store in SQLite, it'...\n" +
  '\n4 decision(s) shown.\n';
const NOTARAI_LIST_PROPOSED =
  HEADER +
  '0     proposed   .notarai/api.spec.yaml                   Retry idempotent requests\n' +
  '1     proposed   .notarai/app.spec.yaml                   Drop the legacy endpoint\n' +
  "3     proposed   .notarai/app.spec.yaml                   Keep the session store in SQLite, it'...\n" +
  '\n3 decision(s) shown.\n';
const NOTARAI_LIST_REJECTED =
  HEADER +
  '2     rejected   .notarai/api.spec.yaml                   Switch to XML\n' +
  '\n1 decision(s) shown.\n';
const NOTARAI_LIST_ACCEPTED = "No decisions with status 'accepted' found.\n";
/** `list` after accept api 0, accept app 0 and reject app 1. */
const NOTARAI_LIST_AFTER =
  HEADER +
  '0     rejected   .notarai/api.spec.yaml                   Switch to XML\n' +
  "1     rejected   .notarai/app.spec.yaml                   Keep the session store in SQLite, it'...\n" +
  '\n2 decision(s) shown.\n';
/** `.notarai/decision-log.json` after the same three commands (no final newline). */
const NOTARAI_LOG_AFTER = `{
  "proposals": [
    {
      "spec_path": ".notarai/api.spec.yaml",
      "date": "2026-04-15",
      "choice": "Switch to XML",
      "rationale": "Older clients",
      "origin": "human",
      "status": "rejected",
      "reject_reason": "No"
    },
    {
      "spec_path": ".notarai/app.spec.yaml",
      "date": "2026-04-16",
      "choice": "Keep the session store in SQLite, it's durable across restarts",
      "rationale": "Sessions survived the crash test",
      "origin": "reconciliation",
      "status": "rejected",
      "reject_reason": "Not now: SQLite is fine"
    }
  ]
}`;
/** The specs NotarAI wrote (its text splice: see where Grove's layout differs below). */
const NOTARAI_API_AFTER =
  "# The HTTP API: owned by the platform team.\nschema_version: '0.8'\nintent: 'The HTTP API'\nbehaviors:\n  - name: retries\n    given: a failed request\n    then: it is retried\n\ndecisions:\n  # The first one, kept for history.\n  - date: '2026-01-10'\n    choice: 'Use JSON'\n    rationale: 'Everyone reads it'\n\n  - date: '2026-04-13'\n    choice: 'Retry idempotent requests'\n    rationale: >\n      The client now retries.\n      See src/api/http.ts for the policy.\nartifacts:\n  code:\n    - path: 'src/api/**' # every API file\n";
const NOTARAI_APP_AFTER =
  "schema_version: '0.8'\nintent: 'The app'\ntier: registered\nconstraints:\n  - 'No globals'\n# What the app spec governs.\n\ndecisions:\n  - date: '2026-04-14'\n    choice: 'Drop the legacy endpoint'\n    rationale: >\n      Nobody calls it\n\nartifacts:\n  code:\n    - path: 'src/*.ts'\n";

// ---- Grove -------------------------------------------------------------------------------------

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function grove(root: string, ...args: string[]): Promise<Run> {
  const run: Run = { code: 0, stdout: '', stderr: '' };
  const out: CommandOutput = {
    stdout: (text) => (run.stdout += text),
    stderr: (text) => (run.stderr += text),
    colours: false,
  };
  run.code = await runDecisionsCommand([...args, '--worktree', root], out);
  return run;
}

/** The real `grove` command, run as a process in `cwd`. */
function groveProcess(cwd: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [GROVE, ...args], { cwd }, (error, stdout, stderr) => {
      const code = error ? (error as { code?: number }).code : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

async function project(log = LOG): Promise<string> {
  const repo = await makeTempRepo({
    '.notarai/api.spec.yaml': API_SPEC,
    '.notarai/app.spec.yaml': APP_SPEC,
    '.notarai/decision-log.json': log,
    'src/api/http.ts': 'x\n',
    'src/main.ts': 'y\n',
  });
  cleanups.push(() => repo.cleanup());
  return repo.root;
}

const read = (root: string, file: string) => readFile(path.join(root, file), 'utf8');
const decisionsOf = (text: string) => (parse(text) as { decisions: unknown[] }).decisions;
const ok = (stdout: string): Run => ({ code: 0, stdout, stderr: '' });
const refused = (message: string): Run => ({ code: 1, stdout: '', stderr: `Error: ${message}\n` });

describe('grove decisions matches notarai decisions 0.7', () => {
  it('list, list --status: the same table, indexes and counts', async () => {
    const root = await project();
    expect(await grove(root, 'list')).toEqual(ok(NOTARAI_LIST));
    expect(await grove(root, 'list', '--status', 'proposed')).toEqual(ok(NOTARAI_LIST_PROPOSED));
    expect(await grove(root, 'list', '--status', 'rejected')).toEqual(ok(NOTARAI_LIST_REJECTED));
    expect(await grove(root, 'list', '--status', 'accepted')).toEqual(ok(NOTARAI_LIST_ACCEPTED));
  });

  it('refuses as NotarAI: another spec, a rejected proposal, an index out of range; nothing written', async () => {
    const root = await project();
    expect(await grove(root, 'accept', '.notarai/app.spec.yaml', '0')).toEqual(
      refused(
        "proposal at index 0 belongs to '.notarai/api.spec.yaml', not '.notarai/app.spec.yaml'",
      ),
    );
    expect(await grove(root, 'accept', '.notarai/api.spec.yaml', '2')).toEqual(
      refused("Cannot accept: decision is already 'rejected'"),
    );
    expect(await grove(root, 'accept', '.notarai/api.spec.yaml', '9')).toEqual(
      refused('Index 9 out of range (log has 4 entries)'),
    );
    expect(await grove(root, 'reject', '.notarai/api.spec.yaml', '2', '--reason', 'again')).toEqual(
      refused("Cannot reject: decision is already 'rejected'"),
    );
    expect(await git(root, 'status', '--porcelain')).toBe('');
  });

  it('accept, accept (indexes shifted), reject --reason: output, log and specs', async () => {
    const root = await project();
    expect(await grove(root, 'accept', '.notarai/api.spec.yaml', '0')).toEqual(
      ok('Accepted decision for .notarai/api.spec.yaml: Retry idempotent requests\n'),
    );
    // Index 1 was app's first proposal; accepting index 0 removed it from the log.
    expect(await grove(root, 'accept', '.notarai/app.spec.yaml', '0')).toEqual(
      ok('Accepted decision for .notarai/app.spec.yaml: Drop the legacy endpoint\n'),
    );
    expect(
      await grove(
        root,
        'reject',
        '.notarai/app.spec.yaml',
        '1',
        '--reason',
        'Not now: SQLite is fine',
      ),
    ).toEqual(
      ok(
        "Rejected decision for .notarai/app.spec.yaml: Keep the session store in SQLite, it's durable across restarts\n",
      ),
    );
    expect(await grove(root, 'list')).toEqual(ok(NOTARAI_LIST_AFTER));
    // The log: byte for byte what NotarAI writes.
    expect(await read(root, '.notarai/decision-log.json')).toBe(NOTARAI_LOG_AFTER);

    // The specs' decisions: NotarAI's, except that the rationale's line break survives (NotarAI's
    // folded block turns it into a space).
    const api = await read(root, '.notarai/api.spec.yaml');
    const app = await read(root, '.notarai/app.spec.yaml');
    const notaraiApi = decisionsOf(NOTARAI_API_AFTER) as { rationale: string }[];
    expect(notaraiApi[1]!.rationale).toBe(
      'The client now retries. See src/api/http.ts for the policy.\n',
    );
    expect(decisionsOf(api)).toEqual([
      notaraiApi[0],
      {
        ...notaraiApi[1],
        rationale: 'The client now retries.\nSee src/api/http.ts for the policy.\n',
      },
    ]);
    expect(decisionsOf(app)).toEqual(decisionsOf(NOTARAI_APP_AFTER));
    // Everything else as NotarAI has it, and both specs still valid.
    const rest = (text: string) => ({ ...(parse(text) as object), decisions: null });
    expect(rest(api)).toEqual(rest(NOTARAI_API_AFTER));
    expect(rest(app)).toEqual(rest(NOTARAI_APP_AFTER));
    expect(validateSpecText('.notarai/api.spec.yaml', api).ok).toBe(true);
    expect(validateSpecText('.notarai/app.spec.yaml', app).ok).toBe(true);

    // Grove's layout: the entry right after the last one (NotarAI leaves a blank line between and
    // none before artifacts:), and a new section above the comment that belongs to artifacts:
    // (NotarAI puts it between them). Every other byte of the file is kept.
    expect(api).toBe(
      API_SPEC.replace(
        "    rationale: 'Everyone reads it'\n",
        "    rationale: 'Everyone reads it'\n" +
          "  - date: '2026-04-13'\n" +
          "    choice: 'Retry idempotent requests'\n" +
          '    rationale: |\n' +
          '      The client now retries.\n' +
          '      See src/api/http.ts for the policy.\n',
      ),
    );
    expect(app).toBe(
      APP_SPEC.replace(
        '# What the app spec governs.\n',
        '\ndecisions:\n' +
          "  - date: '2026-04-14'\n" +
          "    choice: 'Drop the legacy endpoint'\n" +
          '    rationale: >\n' +
          '      Nobody calls it\n' +
          '\n# What the app spec governs.\n',
      ),
    );
  });

  it('a spec that would not validate is left byte for byte unchanged, and a retry adds nothing', async () => {
    // NotarAI writes the entry, then fails validation, leaves the spec modified, keeps the
    // proposal; a retry appends it a second time (recorded: two entries dated 13/04/2026).
    const log = JSON.stringify({
      proposals: [
        {
          spec_path: '.notarai/app.spec.yaml',
          date: '13/04/2026',
          choice: 'Bad date',
          rationale: 'r',
          origin: 'human',
          status: 'proposed',
        },
      ],
    });
    const root = await project(log);
    await chmod(path.join(root, '.notarai/app.spec.yaml'), 0o640);
    for (let attempt = 0; attempt < 2; attempt++) {
      const run = await grove(root, 'accept', '.notarai/app.spec.yaml', '0');
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      // NotarAI's words first, then Grove's: what is wrong, and that nothing was written.
      expect(run.stderr).toMatch(
        /^Error: Spec validation failed after accepting decision: \.notarai\/app\.spec\.yaml:\d+: .*13\/04\/2026.*\(nothing was written/,
      );
      expect(await read(root, '.notarai/app.spec.yaml')).toBe(APP_SPEC);
      expect(await read(root, '.notarai/decision-log.json')).toBe(log);
    }
    expect((await stat(path.join(root, '.notarai/app.spec.yaml'))).mode & 0o777).toBe(0o640);
  });

  it('keeps the spec file mode when it writes it', async () => {
    const root = await project();
    await chmod(path.join(root, '.notarai/api.spec.yaml'), 0o600);
    expect((await grove(root, 'accept', '.notarai/api.spec.yaml', '0')).code).toBe(0);
    expect((await stat(path.join(root, '.notarai/api.spec.yaml'))).mode & 0o777).toBe(0o600);
  });

  it('list cuts a long choice at a character boundary where NotarAI panics (exit 101)', async () => {
    // NotarAI: "end byte index 37 is not a char boundary; it is inside 'é' (bytes 36..38)".
    const choice = `${'x'.repeat(36)}é and more text`;
    const log = JSON.stringify({
      proposals: [
        {
          spec_path: '.notarai/app.spec.yaml',
          date: '2026-04-13',
          choice,
          rationale: 'r',
          origin: 'human',
          status: 'proposed',
        },
      ],
    });
    const root = await project(log);
    expect(await grove(root, 'list')).toEqual(
      ok(
        `${HEADER}0     proposed   .notarai/app.spec.yaml                   ${'x'.repeat(36)}...\n` +
          '\n1 decision(s) shown.\n',
      ),
    );
    // Where the cut falls between characters, NotarAI's 37 bytes (recorded: "Café au lait, ...").
    expect(choicePreview('Café au lait, très bien, avec du sucre é')).toBe(
      'Café au lait, très bien, avec du su...',
    );
    expect(choicePreview('x'.repeat(40))).toBe('x'.repeat(40));
    expect(choicePreview('🙂'.repeat(11))).toBe(`${'🙂'.repeat(9)}...`);
  });

  it('list writes bidi, zero-width and control characters of the log as \\u escapes', async () => {
    // U+202E shows the rest of the line backwards; U+200B and U+2066 show nothing; ESC colours.
    const log = JSON.stringify({
      proposals: [
        {
          spec_path: '.notarai/app\u2066.spec.yaml',
          date: '2026-04-13',
          choice: 'Use \u202eLMX\u202c\u200b\u001b[2J',
          rationale: 'r',
          origin: 'human',
          status: 'proposed\u2028',
        },
      ],
    });
    const run = await grove(await project(log), 'list');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('.notarai/app\\u2066.spec.yaml');
    expect(run.stdout).toContain('Use \\u202eLMX\\u202c\\u200b\\u001b[2J');
    expect(run.stdout).toContain('proposed\\u2028');
    // eslint-disable-next-line no-control-regex
    expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u2028\u200b\u202c\u202e\u2066]/);
  });

  it('no log, or an empty one: no decisions, and every index out of range (as NotarAI)', async () => {
    for (const log of [undefined, '{"proposals":[]}']) {
      const repo = await makeTempRepo({
        '.notarai/app.spec.yaml': APP_SPEC,
        ...(log === undefined ? {} : { '.notarai/decision-log.json': log }),
      });
      cleanups.push(() => repo.cleanup());
      expect(await grove(repo.root, 'list')).toEqual(ok('No decisions found.\n'));
      expect(await grove(repo.root, 'accept', '.notarai/app.spec.yaml', '0')).toEqual(
        refused('Index 0 out of range (log has 0 entries)'),
      );
      expect(await grove(repo.root, 'reject', '.notarai/app.spec.yaml', '0')).toEqual(
        refused('Index 0 out of range (log has 0 entries)'),
      );
      expect(await git(repo.root, 'status', '--porcelain')).toBe('');
    }
  });

  it('exit 2 without .notarai/ or with a command line it cannot run, as NotarAI', async () => {
    const bare = await makeTempDir();
    cleanups.push(async () => (await import('node:fs/promises')).rm(bare, { recursive: true }));
    expect(await grove(bare, 'list')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'Error: .notarai/ directory not found. Run `notarai init` first.\n',
    });
    const root = await project();
    for (const args of [
      [],
      ['approve'],
      ['accept'],
      ['accept', '.notarai/api.spec.yaml'],
      ['accept', '.notarai/api.spec.yaml', 'x'],
      ['accept', '.notarai/api.spec.yaml', '-1'],
      ['list', '--status'],
      ['list', '--reason', 'r'],
    ]) {
      const run = await grove(root, ...args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toContain('Usage: grove decisions list');
    }
    expect(await git(root, 'status', '--porcelain')).toBe('');
  });

  it('reject without --reason; accept and reject never need the other spec', async () => {
    const root = await project();
    expect((await grove(root, 'reject', '.notarai/api.spec.yaml', '0')).code).toBe(0);
    const log = JSON.parse(await read(root, '.notarai/decision-log.json')) as {
      proposals: Record<string, unknown>[];
    };
    expect(log.proposals[0]).toEqual({
      spec_path: '.notarai/api.spec.yaml',
      date: '2026-04-13',
      choice: 'Retry idempotent requests',
      rationale: 'The client now retries.\nSee src/api/http.ts for the policy.',
      origin: 'reconciliation',
      status: 'rejected',
      related_files: ['src/api/http.ts'],
    });
    expect(await read(root, '.notarai/api.spec.yaml')).toBe(API_SPEC);
  });

  it('runs as `grove decisions` from the current directory (the real command)', async () => {
    const root = await project();
    const help = await groveProcess(root, '--help');
    expect(help.stdout).toContain('grove decisions (list [--status S] | accept <spec> <index>');
    expect(await groveProcess(root, 'decisions', 'list', '--status', 'proposed')).toEqual(
      ok(NOTARAI_LIST_PROPOSED),
    );
    const accepted = await groveProcess(root, 'decisions', 'accept', '.notarai/api.spec.yaml', '0');
    expect(accepted).toEqual(
      ok('Accepted decision for .notarai/api.spec.yaml: Retry idempotent requests\n'),
    );
    const wrong = await groveProcess(root, 'decisions', 'accept', '.notarai/api.spec.yaml', '0');
    expect(wrong).toEqual(
      refused(
        "proposal at index 0 belongs to '.notarai/app.spec.yaml', not '.notarai/api.spec.yaml'",
      ),
    );
  });
});
