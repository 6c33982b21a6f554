// Another process writing the decision log (or the spec) while Grove writes its own: NotarAI's CLI
// takes no lock, so Grove proves, right before its rename, that the file it replaces is still what
// it read. The other process's write lands here while Grove flushes its new text (fsync), which
// is the widest part of the window: it used to be checked before the write and then lost to the
// rename. The other writer is simulated inside fsyncSync because a real process cannot be made to
// land there on cue; everything else (repository, files, rename) is real.
import * as fs from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeTempRepo } from '../../testing/temp-repo.ts';

/** Runs once, at the next flush of a file (then the flush goes on). */
const duringFlush: { run?: () => void } = {};
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return {
    ...real,
    fsyncSync: (fd: number) => {
      const run = duringFlush.run;
      duringFlush.run = undefined;
      run?.();
      real.fsyncSync(fd);
    },
  };
});

const { acceptDecision, DECISION_LOG_PATH, proposeDecision, rejectDecision } =
  await import('./decisions.ts');

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  duringFlush.run = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const SPEC_PATH = '.notarai/app.spec.yaml';
const SPEC = `schema_version: '0.8'
intent: 'App'
tier: registered
artifacts:
  code:
    - path: 'src/*.rs'
`;
const entry = (choice: string) => ({
  spec_path: SPEC_PATH,
  date: '2026-04-13',
  choice,
  rationale: 'r',
  origin: 'human',
  status: 'proposed',
});
const logWith = (...choices: string[]) =>
  JSON.stringify({ proposals: choices.map(entry) }, null, 2);

async function repo(log: string) {
  const made = await makeTempRepo({ 'src/main.rs': 'x', [SPEC_PATH]: SPEC });
  cleanups.push(() => made.cleanup());
  await writeFile(path.join(made.root, DECISION_LOG_PATH), log);
  return made.root;
}

/** The other process's write: the whole file replaced by `text`, as NotarAI's save does. */
function otherProcessWrites(root: string, relative: string, text: string): void {
  duringFlush.run = () => {
    const target = path.join(root, relative);
    fs.writeFileSync(`${target}.other`, text);
    fs.renameSync(`${target}.other`, target);
  };
}

const leftovers = async (root: string) =>
  (await readdir(path.join(root, '.notarai'))).filter((name) => name.endsWith('.tmp'));

describe("another process's write while Grove writes the decision log is never lost", () => {
  it('propose: refused as busy, the other write kept, no temp file left', async () => {
    const root = await repo(logWith('first'));
    const theirs = logWith('first', 'theirs');
    otherProcessWrites(root, DECISION_LOG_PATH, theirs);
    await expect(
      proposeDecision(root, { spec_path: SPEC_PATH, choice: 'ours', rationale: 'r' }),
    ).rejects.toThrow(/decision-log\.json changed while the decision was being recorded/);
    expect(await readFile(path.join(root, DECISION_LOG_PATH), 'utf8')).toBe(theirs);
    expect(await leftovers(root)).toEqual([]);
    // Asked again, it lands beside theirs.
    await proposeDecision(root, { spec_path: SPEC_PATH, choice: 'ours', rationale: 'r' });
    const log = JSON.parse(await readFile(path.join(root, DECISION_LOG_PATH), 'utf8'));
    expect(log.proposals.map((proposal: { choice: string }) => proposal.choice)).toEqual([
      'first',
      'theirs',
      'ours',
    ]);
  });

  it('reject: refused, the other write kept', async () => {
    const root = await repo(logWith('first'));
    const theirs = logWith('first', 'theirs');
    otherProcessWrites(root, DECISION_LOG_PATH, theirs);
    await expect(rejectDecision(root, SPEC_PATH, 0, 'no')).rejects.toThrow(/changed while/);
    expect(await readFile(path.join(root, DECISION_LOG_PATH), 'utf8')).toBe(theirs);
  });

  it('accept: the log changing while the spec is flushed leaves both files as they were', async () => {
    const root = await repo(logWith('first'));
    const theirs = logWith('first', 'theirs');
    otherProcessWrites(root, DECISION_LOG_PATH, theirs);
    await expect(acceptDecision(root, SPEC_PATH, 0)).rejects.toThrow(/changed while/);
    expect(await readFile(path.join(root, DECISION_LOG_PATH), 'utf8')).toBe(theirs);
    expect(await readFile(path.join(root, SPEC_PATH), 'utf8')).toBe(SPEC);
    expect(await leftovers(root)).toEqual([]);
  });

  it('accept: the spec edited while it is flushed keeps the edit; the log is untouched', async () => {
    const log = logWith('first');
    const root = await repo(log);
    const edited = `${SPEC}# edited by a person meanwhile\n`;
    otherProcessWrites(root, SPEC_PATH, edited);
    await expect(acceptDecision(root, SPEC_PATH, 0)).rejects.toThrow(/changed while/);
    expect(await readFile(path.join(root, SPEC_PATH), 'utf8')).toBe(edited);
    expect(await readFile(path.join(root, DECISION_LOG_PATH), 'utf8')).toBe(log);
  });
});
