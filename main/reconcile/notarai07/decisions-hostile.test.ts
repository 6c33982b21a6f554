// Hostile decision logs and specs, as every other confined file (notarai-hostile.test.ts): a log
// that is a symlink out of the worktree, a FIFO, a symlink to /dev/zero, a device, a huge (sparse)
// file, invalid JSON, not UTF-8 or the wrong shape gives a clear error naming it — never a stall,
// never the content it refused — for list, propose, accept and reject alike, and nothing is
// written: the hostile entry is still what it was, and whatever it points at is untouched. A spec
// that is a symlink out is never read nor written through.
import { lstat, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CAN_MKNOD,
  leaksSecret,
  makeSparse,
  messageOf,
  mkfifo,
  mknodZero,
  SECRET,
  outsideFile,
  RUST_APP_SPEC,
  rustAppRepo,
} from '../../testing/hostile-repository.ts';
import { git, makeTempRepo, writeFiles } from '../../testing/temp-repo.ts';
import {
  acceptDecision,
  DECISION_LOG_PATH,
  listDecisions,
  proposeDecision,
  rejectDecision,
} from './decisions.ts';
import { cleanupsAfterEach } from '../../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

const SPEC = RUST_APP_SPEC;
const SPEC_PATH = '.notarai/app.spec.yaml';

/** A valid log with one proposal whose rationale is the secret: it must never be shown. */
const SECRET_LOG = JSON.stringify({
  proposals: [
    {
      spec_path: SPEC_PATH,
      date: '2026-04-13',
      choice: 'c',
      rationale: SECRET,
      origin: 'human',
      status: 'proposed',
    },
  ],
});

/** What the entry at `target` is now: kind, link target, content of a small regular file. */
async function describeEntry(target: string): Promise<string> {
  const info = await lstat(target);
  if (info.isSymbolicLink()) return `link -> ${await readlink(target)}`;
  if (info.isFile() && info.size < 4096) return `file ${await readFile(target, 'utf8')}`;
  return `${info.isFile() ? 'file' : 'other'} size=${info.size} mode=${info.mode}`;
}

const HOSTILE: { name: string; make: (target: string) => Promise<string | undefined> }[] = [
  {
    name: 'a symlink out of the worktree',
    make: async (target) => {
      const outside = await outsideFile(cleanups, 'decision-log.json', SECRET_LOG);
      await symlink(outside, target);
      return outside;
    },
  },
  { name: 'a FIFO', make: async (target) => void (await mkfifo(target)) },
  {
    name: 'a symlink to /dev/zero',
    make: async (target) => void (await symlink('/dev/zero', target)),
  },
  ...(CAN_MKNOD
    ? [
        {
          name: 'a character device',
          make: async (target: string) => void (await mknodZero(target)),
        },
      ]
    : []),
  {
    name: 'a huge file (64 MiB, sparse)',
    make: async (target) => void (await makeSparse(target, '64M')),
  },
  {
    name: 'invalid JSON',
    make: async (target) => void (await writeFile(target, `{"proposals": [ ${SECRET}`)),
  },
  {
    name: 'not UTF-8',
    make: async (target) => void (await writeFile(target, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))),
  },
  {
    name: 'the wrong shape',
    make: async (target) =>
      void (await writeFile(target, JSON.stringify({ proposals: [{ spec_path: SECRET }] }))),
  },
];

/** Every operation on the log, each expected to refuse. */
const OPERATIONS: { name: string; run: (root: string) => Promise<unknown> }[] = [
  { name: 'list', run: (root) => listDecisions(root) },
  {
    name: 'propose',
    run: (root) => proposeDecision(root, { spec_path: SPEC_PATH, choice: 'c', rationale: 'r' }),
  },
  { name: 'accept', run: (root) => acceptDecision(root, SPEC_PATH, 0) },
  { name: 'reject', run: (root) => rejectDecision(root, SPEC_PATH, 0, 'no') },
];

describe('a decision log that cannot be used is an error naming it; nothing written', () => {
  for (const hostile of HOSTILE) {
    it(hostile.name, async () => {
      for (const operation of OPERATIONS) {
        const root = await rustAppRepo(cleanups);
        const target = path.join(root, DECISION_LOG_PATH);
        const outside = await hostile.make(target);
        const before = await describeEntry(target);
        const outsideBefore = outside ? await readFile(outside, 'utf8') : undefined;
        const label = `${hostile.name}: ${operation.name}`;
        const error = await operation.run(root).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error, label).toBeDefined();
        const message = messageOf(error);
        expect(message, label).toContain('.notarai/decision-log.json');
        expect(leaksSecret(message), label).toBe(false);
        expect(await describeEntry(target), label).toBe(before);
        if (outside) expect(await readFile(outside, 'utf8'), label).toBe(outsideBefore);
        expect(await readFile(path.join(root, SPEC_PATH), 'utf8'), label).toBe(SPEC);
        expect(await git(root, 'status', '--porcelain', '--', SPEC_PATH), label).toBe('');
      }
    });
  }
});

describe('a spec that cannot be used is never read nor written through', () => {
  it('accept into a spec that is a symlink out of the worktree refuses; its target untouched', async () => {
    const root = await rustAppRepo(cleanups);
    const outside = await outsideFile(cleanups, 'app.spec.yaml', `${SPEC}# ${SECRET}\n`);
    await (await import('node:fs/promises')).rm(path.join(root, SPEC_PATH));
    await symlink(outside, path.join(root, SPEC_PATH));
    await writeFile(path.join(root, DECISION_LOG_PATH), SECRET_LOG.replace(SECRET, 'r'));
    const error = await acceptDecision(root, SPEC_PATH, 0).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(messageOf(error)).toMatch(/^cannot read \.notarai\/app\.spec\.yaml: /);
    expect(leaksSecret(messageOf(error))).toBe(false);
    expect(await readFile(outside, 'utf8')).toBe(`${SPEC}# ${SECRET}\n`);
    expect(await readlink(path.join(root, SPEC_PATH))).toBe(outside);
    expect(await readFile(path.join(root, DECISION_LOG_PATH), 'utf8')).toBe(
      SECRET_LOG.replace(SECRET, 'r'),
    );
  });

  it('accept into a spec that is a FIFO or huge refuses without waiting', async () => {
    for (const make of [
      (target: string) => mkfifo(target),
      (target: string) => makeSparse(target, '64M'),
    ]) {
      const root = await rustAppRepo(cleanups);
      await (await import('node:fs/promises')).rm(path.join(root, SPEC_PATH));
      await make(path.join(root, SPEC_PATH));
      await writeFile(path.join(root, DECISION_LOG_PATH), SECRET_LOG.replace(SECRET, 'r'));
      await expect(acceptDecision(root, SPEC_PATH, 0)).rejects.toThrow(
        /^cannot read \.notarai\/app\.spec\.yaml: /,
      );
    }
  });

  it('propose for a spec that is a symlink out of the worktree refuses', async () => {
    const root = await rustAppRepo(cleanups);
    const outside = await outsideFile(cleanups, 'x.spec.yaml', SPEC);
    await symlink(outside, path.join(root, '.notarai/out.spec.yaml'));
    await expect(
      proposeDecision(root, { spec_path: '.notarai/out.spec.yaml', choice: 'c', rationale: 'r' }),
    ).rejects.toThrow(/no such spec: \.notarai\/out\.spec\.yaml \(.*outside/);
    await expect(readFile(path.join(root, DECISION_LOG_PATH))).rejects.toThrow(/ENOENT/);
  });

  it('a .notarai directory that is a symlink out: the log is neither read nor written', async () => {
    const made = await makeTempRepo({ 'src/main.rs': 'x' });
    cleanups.push(() => made.cleanup());
    const elsewhere = path.dirname(await outsideFile(cleanups, 'decision-log.json', SECRET_LOG));
    await writeFiles(elsewhere, { 'app.spec.yaml': SPEC });
    await symlink(elsewhere, path.join(made.root, '.notarai'));
    for (const operation of OPERATIONS) {
      const error = await operation.run(made.root).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, operation.name).toBeDefined();
      expect(leaksSecret(messageOf(error)), operation.name).toBe(false);
    }
    expect(await readFile(path.join(elsewhere, 'decision-log.json'), 'utf8')).toBe(SECRET_LOG);
    expect(await readFile(path.join(elsewhere, 'app.spec.yaml'), 'utf8')).toBe(SPEC);
  });
});
