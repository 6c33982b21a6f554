// A hostile repository against every reader and writer of the reconciliation side (issue 14), as a
// user meets it: a real worktree process (forked as the host forks it) serving a real repository,
// driven through the real MCP SDK client. Each hostile shape — a symlink to an outside file holding
// a secret, a symlink to an outside directory, a symlinked parent directory, a FIFO, a symlink to
// /dev/zero (and, as root, a character device inside), a file over the cap — is put where each
// reader or writer looks (spec discovery and loading, spec resources, get_spec_diff's spec_changes
// and binary sniffing, the state file, the hash cache and its SQLite companions, mark_reconciled's
// hashing). For every cell: the call returns promptly, with an error or warning naming the path and
// the reason; the secret appears nowhere (results, errors, warnings, resources, spec errors, the
// process's messages and logs, and not even as a hash in the state file); nothing outside the
// worktree is created, modified or deleted; and the server serves a normal call afterwards.
// Races (paths swapped while read) are in hostile-races.test.ts, the layer's own units in
// main/platform/confined-fs.test.ts.
import { mkdir, readFile, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { blake3 } from '@napi-rs/blake-hash';
import Database from 'better-sqlite3';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, withTimeout } from '../testing/mcp-clients.ts';
import { git, makeTempRepo, writeFiles, type TempRepo } from '../testing/temp-repo.ts';
import {
  CAN_MKNOD,
  SECRET,
  SECRET_SPEC,
  leaksSecret,
  makeSparse,
  messageOf,
  mkfifo,
  mknodZero,
  snapshotChanges,
  snapshotTree,
  startWorktreeProcess,
  type RunningWorktree,
  APP_SPEC,
} from '../testing/hostile-repository.ts';
import { specResourceUri } from '../tools/reconcile-mcp.ts';
import { loadSpecs } from './specs/spec-loader.ts';
import { MAX_SPEC_BYTES, readSpecText } from './specs/spec-paths.ts';
import { hasNulByte } from './floor/binary-files.ts';
import { NOTARAI_CREATE_TABLE } from './floor/hash-cache.ts';

/** A hostile input must not cost a call more than this (the tools' own deadlines are 60-120 s). */
const PROMPT_MS = 10_000;

const PLACEHOLDER_SPEC = `schema_version: '0.8'
intent: A placeholder the tests replace by hostile shapes.
tier: registered
artifacts:
  docs:
    - path: docs/**
`;

/** Over MAX_SPEC_BYTES, with the secret where a reader would meet it first. */
const OVERSIZED_SPEC_BYTES = Buffer.from(
  `schema_version: '0.8'\nintent: ${SECRET}\n#${'x'.repeat(MAX_SPEC_BYTES)}\n`,
);

let repo: TempRepo;
let root: string;
let outside: string;
let outsideBefore: Map<string, string>;
/** BLAKE3 of every file outside: none may ever be stored (that would leak its content's hash). */
let outsideHashes: string[];
let server: RunningWorktree;
let client: Client;
const undo: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  repo = await makeTempRepo({
    '.notarai/app.spec.yaml': APP_SPEC,
    '.notarai/evil.spec.yaml': PLACEHOLDER_SPEC,
    '.notarai/sub/evil.spec.yaml': PLACEHOLDER_SPEC,
    'src/a.ts': 'export const a = 1;\n',
    'src/tracked.dat': 'tracked\n',
    'src/dir/x.dat': 'inside x\n',
  });
  root = repo.root;
  await git(root, 'checkout', '-q', '-b', 'feature');
  await writeFiles(root, { 'src/a.ts': 'export const a = 2;\n' });
  outside = path.join(repo.dir, 'outside');
  const secretBytes = Buffer.concat([
    Buffer.from(`${SECRET}\n`),
    Buffer.alloc(64),
    Buffer.from(SECRET),
  ]);
  await writeFiles(outside, {
    'secret.spec.yaml': SECRET_SPEC,
    'secret.txt': secretBytes,
    'victim.json': `{"victim": "${SECRET}"}\n`,
    'specs/evil.spec.yaml': SECRET_SPEC,
    'specs/app.spec.yaml': SECRET_SPEC,
    'specs/x.dat': secretBytes,
    'dir/x.dat': secretBytes,
    'cache/notarai.db': `${SECRET} victim database\n`,
    'cache/notarai.db-journal': `${SECRET} victim journal\n`,
    'notarai-dir/app.spec.yaml': SECRET_SPEC,
    'notarai-dir/evil.spec.yaml': SECRET_SPEC,
    'notarai-dir/reconciliation_state.json': `{"victim": "${SECRET}"}\n`,
    'notarai-dir/.cache/notarai.db': `${SECRET} victim database\n`,
  });
  outsideBefore = await snapshotTree(outside);
  outsideHashes = [
    secretBytes,
    Buffer.from(SECRET_SPEC),
    Buffer.from(`{"victim": "${SECRET}"}\n`),
  ].map((bytes) => blake3(bytes).toString('hex'));
  server = await startWorktreeProcess(root);
  ({ client } = await connectClient(server.port, 'legacy-http', server.token));
}, 60_000);

afterAll(async () => {
  // After every hostile cell, the whole workflow still works on the same server.
  const diff = await tool('get_spec_diff', APP_DIFF);
  expect(diff.isError, diff.text).toBe(false);
  expect((diff.structured as { files: string[] }).files).toContain('src/a.ts');
  expect((await tool('list_affected_specs', { base_branch: 'main' })).isError).toBe(false);
  expect((await tool('mark_reconciled', { files: ['src/a.ts'] })).isError).toBe(false);
  expect((await tool('snapshot_state', {})).isError).toBe(false);
  await client?.close().catch(() => undefined);
  await server?.stop();
  // Nothing the process ever told its host, or logged, carries the secret.
  expect(server.messages.length).toBeGreaterThan(0);
  expect(leaksSecret(server.messages)).toBe(false);
  expect(leaksSecret(server.output())).toBe(false);
  await repo?.cleanup();
});

afterEach(async () => {
  for (const step of undo.splice(0).reverse()) await step();
  // Nothing outside the worktree was created, modified or deleted.
  expect(snapshotChanges(outsideBefore, await snapshotTree(outside))).toEqual([]);
  // The server keeps serving: normal calls work (get_spec_diff itself runs in most cells and
  // once more at the end).
  const cleared = await tool('clear_cache', {});
  expect(cleared.isError, cleared.text).toBe(false);
  const changed = await tool('get_changed_artifacts', { spec_path: '.notarai/app.spec.yaml' });
  expect(changed.isError, changed.text).toBe(false);
  expect((changed.structured as { changed_artifacts: string[] }).changed_artifacts).toContain(
    'src/a.ts',
  );
  const resource = await client.readResource({ uri: specResourceUri('.notarai/app.spec.yaml') });
  expect(resource.contents[0]).toMatchObject({ text: APP_SPEC });
});

const APP_DIFF = { spec_path: '.notarai/app.spec.yaml', base_branch: 'main' };

interface ToolOutcome {
  isError: boolean;
  text: string;
  structured: unknown;
  ms: number;
}

/** Calls a tool through the MCP client: promptly, and without the secret anywhere in the answer. */
async function tool(name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
  const started = performance.now();
  const result = (await withTimeout(
    client.callTool({ name, arguments: args }),
    PROMPT_MS * 2,
    name,
  )) as CallToolResult;
  const ms = performance.now() - started;
  expect(ms, `${name} took ${ms} ms`).toBeLessThan(PROMPT_MS);
  expect(leaksSecret(result), `${name} leaked the secret`).toBe(false);
  const first = result.content[0];
  return {
    isError: result.isError === true,
    text: first?.type === 'text' ? first.text : '',
    structured: result.structuredContent,
    ms,
  };
}

/** Reads a resource; returns its text, or the error's message. Never the secret, never slow. */
async function readResource(uri: string): Promise<{ ok: boolean; text: string }> {
  const started = performance.now();
  try {
    const result = await withTimeout(client.readResource({ uri }), PROMPT_MS * 2, uri);
    expect(leaksSecret(result)).toBe(false);
    const content = result.contents[0];
    return { ok: true, text: content && 'text' in content ? content.text : '' };
  } catch (error) {
    expect(leaksSecret(messageOf(error))).toBe(false);
    return { ok: false, text: messageOf(error) };
  } finally {
    expect(performance.now() - started).toBeLessThan(PROMPT_MS);
  }
}

// ---- Putting hostile shapes in place ----------------------------------------------------------

type ShapeId = 'link-file' | 'link-dir' | 'parent' | 'fifo' | 'dev-zero' | 'chrdev' | 'over-cap';

const SHAPES: { id: ShapeId; name: string }[] = [
  { id: 'link-file', name: 'a symlink to an outside file' },
  { id: 'link-dir', name: 'a symlink to an outside directory' },
  { id: 'parent', name: 'a symlinked parent directory' },
  { id: 'fifo', name: 'a FIFO' },
  { id: 'dev-zero', name: 'a symlink to /dev/zero' },
  { id: 'chrdev', name: 'a character device (root only)' },
  { id: 'over-cap', name: 'a file over the cap' },
];
const shapesHere = SHAPES.filter((shape) => shape.id !== 'chrdev' || CAN_MKNOD);

/** Replaces `relative` (a file or nothing) by `make`'s entry; undone after the test. */
async function replaceEntry(
  relative: string,
  make: (absolute: string) => Promise<void>,
): Promise<void> {
  const absolute = path.join(root, relative);
  const aside = path.join(repo.dir, `aside-${relative.replaceAll('/', '_')}`);
  let moved = false;
  try {
    await rename(absolute, aside);
    moved = true;
  } catch {
    // nothing there
  }
  await mkdir(path.dirname(absolute), { recursive: true });
  await make(absolute);
  undo.push(async () => {
    await rm(absolute, { recursive: true, force: true });
    if (moved) await rename(aside, absolute);
  });
}

const linkTo = (target: string) => (absolute: string) => symlink(target, absolute);

// ---- Spec discovery, loading, resources and spec_changes --------------------------------------

interface SpecCell {
  /** The spec path the hostile shape sits at (or under). */
  specPath: string;
  setup(): Promise<void>;
  /** The reason every reader must give for that path; null: the spec is not even discovered. */
  reason: RegExp | null;
  /** get_spec_diff on the app spec fails as a whole (the app spec itself is out of reach). */
  appUnreachable?: boolean;
}

function specCell(shape: ShapeId): SpecCell {
  const evil = '.notarai/evil.spec.yaml';
  const outsideLink = /resolves outside the worktree root through a symbolic link/;
  switch (shape) {
    case 'link-file':
      return {
        specPath: evil,
        setup: () => replaceEntry(evil, linkTo(path.join(outside, 'secret.spec.yaml'))),
        reason: outsideLink,
      };
    case 'link-dir':
      return {
        specPath: evil,
        setup: () => replaceEntry(evil, linkTo(path.join(outside, 'specs'))),
        reason: outsideLink,
      };
    case 'parent':
      return {
        specPath: '.notarai/sub/evil.spec.yaml',
        setup: () => replaceEntry('.notarai/sub', linkTo(path.join(outside, 'specs'))),
        reason: outsideLink,
      };
    case 'fifo':
      return { specPath: evil, setup: () => replaceEntry(evil, mkfifo), reason: /FIFO/ };
    case 'dev-zero':
      return {
        specPath: evil,
        setup: () => replaceEntry(evil, linkTo('/dev/zero')),
        reason: outsideLink,
      };
    case 'chrdev':
      return { specPath: evil, setup: () => replaceEntry(evil, mknodZero), reason: /device/ };
    case 'over-cap':
      return {
        specPath: evil,
        setup: () => replaceEntry(evil, (absolute) => writeFile(absolute, OVERSIZED_SPEC_BYTES)),
        reason: new RegExp(`larger than the ${MAX_SPEC_BYTES}-byte limit`),
      };
  }
}

/** The cache file holds NotarAI's table (and its key's index) alone, with exactly these paths. */
function expectOnlyNotaraiRows(file: string, paths: string[]): void {
  const db = new Database(file, { readonly: true });
  try {
    expect(db.prepare('SELECT type, name FROM sqlite_master ORDER BY name').all()).toEqual([
      { type: 'table', name: 'file_cache' },
      { type: 'index', name: 'sqlite_autoindex_file_cache_1' },
    ]);
    expect(db.prepare('SELECT path FROM file_cache').pluck().all()).toEqual(paths);
  } finally {
    db.close();
  }
}

describe('spec discovery and loading, spec resources, spec_changes', () => {
  for (const shape of shapesHere) {
    it(`× ${shape.name}`, async () => {
      const cell = specCell(shape.id);
      await cell.setup();

      // Discovery and loading (list_affected_specs): a spec error naming the path and the
      // reason (FIFOs and devices too), or (symlinked directories are not entered) not
      // discovered at all. Never loaded.
      const listed = await tool('list_affected_specs', { base_branch: 'main' });
      expect(listed.isError, listed.text).toBe(false);
      const { spec_errors: errors, affected_specs: affected } = listed.structured as {
        spec_errors: { file: string; message: string }[];
        affected_specs: { spec_path: string }[];
      };
      expect(affected.map((spec) => spec.spec_path)).not.toContain(cell.specPath);
      const discovered = shape.id !== 'parent';
      if (discovered) {
        expect(errors).toEqual([
          {
            file: cell.specPath,
            line: null,
            message: expect.stringMatching(cell.reason as RegExp),
          },
        ]);
      } else {
        expect(errors).toEqual([]);
      }

      // Spec resources: listed or not, reading it is an error naming the path and the reason.
      const { resources } = await client.listResources();
      expect(leaksSecret(resources)).toBe(false);
      expect(resources.map((resource) => resource.name)).toContain('.notarai/app.spec.yaml');
      const read = await readResource(specResourceUri(cell.specPath));
      expect(read.ok).toBe(false);
      expect(read.text).toMatch(cell.reason as RegExp);
      expect(read.text).toContain(cell.specPath);

      // get_spec_diff: the changed spec comes in spec_changes with empty content and a warning
      // naming it and why.
      const diff = await tool('get_spec_diff', APP_DIFF);
      expect(diff.isError, diff.text).toBe(false);
      const result = diff.structured as {
        spec_changes: { path: string; content: string }[];
        warnings?: string[];
      };
      if (shape.id === 'parent') {
        // Beyond a symlink, git sees the tracked spec as deleted: it is not a change to read.
        expect(result.spec_changes.map((change) => change.path)).not.toContain(cell.specPath);
        expect(result.warnings).toBeUndefined();
        return;
      }
      expect(result.spec_changes).toContainEqual({ path: cell.specPath, content: '' });
      expect(result.warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            `^cannot read spec ${cell.specPath.replaceAll('.', '\\.')}: .*${(cell.reason as RegExp).source}`,
          ),
        ),
      ]);
    });
  }

  it('× .notarai itself a symlink to an outside directory', async () => {
    await replaceEntry('.notarai', linkTo(path.join(outside, 'notarai-dir')));
    const listed = await tool('list_affected_specs', { base_branch: 'main' });
    expect(listed.isError, listed.text).toBe(false);
    // The specs behind the link are not loaded; the link itself is reported, and why.
    expect(listed.structured).toMatchObject({
      affected_specs: [],
      spec_errors: [
        {
          file: '.notarai',
          line: null,
          message: expect.stringMatching(/outside the worktree root through a symbolic link/),
        },
      ],
    });
    expect(leaksSecret(listed.structured)).toBe(false);
    const { resources } = await client.listResources();
    expect(resources).toEqual([]);
    const read = await readResource(specResourceUri('.notarai/app.spec.yaml'));
    expect(read).toMatchObject({ ok: false });
    expect(read.text).toMatch(
      /outside the worktree root through a symbolic link.*\.notarai\/app\.spec\.yaml/,
    );
    const diff = await tool('get_spec_diff', APP_DIFF);
    expect(diff.isError).toBe(true);
    expect(diff.text).toMatch(
      /outside the worktree root through a symbolic link.*\.notarai\/app\.spec\.yaml/,
    );
    const snapshot = await tool('snapshot_state', {});
    expect(snapshot.isError).toBe(true);
    expect(snapshot.text).toMatch(/\.notarai is a symbolic link/);
  });
});

// ---- get_spec_diff's binary sniffing (and the diff of what it let through) --------------------

describe("get_spec_diff's binary sniffing of changed governed files", () => {
  for (const shape of shapesHere) {
    it(`× ${shape.name}`, async () => {
      let file = 'src/evil.dat';
      switch (shape.id) {
        case 'link-file':
          await replaceEntry(file, linkTo(path.join(outside, 'secret.txt')));
          break;
        case 'link-dir':
          await replaceEntry(file, linkTo(path.join(outside, 'dir')));
          break;
        case 'parent':
          // src/dir/x.dat is tracked; its directory becomes a link to one holding another x.dat.
          file = 'src/dir/x.dat';
          await replaceEntry('src/dir', linkTo(path.join(outside, 'dir')));
          break;
        case 'fifo':
          file = 'src/tracked.dat';
          await replaceEntry(file, mkfifo);
          break;
        case 'dev-zero':
          await replaceEntry(file, linkTo('/dev/zero'));
          break;
        case 'chrdev':
          file = 'src/tracked.dat';
          await replaceEntry(file, mknodZero);
          break;
        case 'over-cap':
          await replaceEntry(file, (absolute) => makeSparse(absolute, '1G'));
          break;
      }
      // The sniffer itself: never true for what it may not read, never a hang.
      const sniffStarted = performance.now();
      const sniffed = await hasNulByte(root, file);
      expect(performance.now() - sniffStarted).toBeLessThan(1_000);
      expect(sniffed).toBe(shape.id === 'over-cap');

      const diff = await tool('get_spec_diff', APP_DIFF);
      if (shape.id === 'fifo' || shape.id === 'chrdev') {
        // git cannot hash a special file at a tracked path: the call fails, naming it.
        expect(diff.isError).toBe(true);
        expect(diff.text).toContain(`${file}: unsupported file type`);
        return;
      }
      expect(diff.isError, diff.text).toBe(false);
      const result = diff.structured as {
        diff: string;
        files: string[];
        binary_changes: string[];
        deleted_files: string[];
      };
      if (shape.id === 'over-cap') {
        expect(result.binary_changes).toEqual([file]);
        expect(result.diff).not.toContain(file);
      } else if (shape.id === 'parent') {
        // Beyond a symlink, git sees the tracked file as deleted, and the directory's name is now
        // a new symlink: the diff shows the deletion (base content) and the link's target path.
        // (A directory replaced by a file or link of the same name — committable, and common
        // enough without any hostility — must not fail the diff: the scratch index has to drop
        // src/dir/x.dat before it adds src/dir, e.g. `git update-index --replace`.)
        expect(result.deleted_files).toContain(file);
        expect(result.files).toContain('src/dir');
        expect(result.diff).toContain('-inside x');
        expect(result.diff).toMatch(/new file mode 120000/);
      } else {
        // A symlink is diffed as git stores it: its target path, never the content behind it.
        expect(result.files).toContain(file);
        expect(result.binary_changes).not.toContain(file);
        expect(result.diff).toMatch(/new file mode 120000/);
      }
    });
  }
});

// ---- snapshot_state's state file --------------------------------------------------------------

describe("snapshot_state's state file (.notarai/reconciliation_state.json)", () => {
  const STATE = '.notarai/reconciliation_state.json';
  for (const shape of shapesHere) {
    it(`× ${shape.name}`, async () => {
      let reason: RegExp;
      switch (shape.id) {
        case 'link-file':
          await replaceEntry(STATE, linkTo(path.join(outside, 'victim.json')));
          reason =
            /"\.notarai\/reconciliation_state\.json": it is a symbolic link, which Grove never writes through/;
          break;
        case 'link-dir':
          await replaceEntry(STATE, linkTo(path.join(outside, 'specs')));
          reason = /"\.notarai\/reconciliation_state\.json": it is a symbolic link/;
          break;
        case 'parent':
          await replaceEntry('.notarai', linkTo(path.join(outside, 'notarai-dir')));
          reason = /\.notarai is a symbolic link, which Grove never writes through/;
          break;
        case 'fifo':
          await replaceEntry(STATE, mkfifo);
          reason = /"\.notarai\/reconciliation_state\.json": it is a special file/;
          break;
        case 'dev-zero':
          await replaceEntry(STATE, linkTo('/dev/zero'));
          reason = /"\.notarai\/reconciliation_state\.json": it is a symbolic link/;
          break;
        case 'chrdev':
          await replaceEntry(STATE, mknodZero);
          reason = /"\.notarai\/reconciliation_state\.json": it is a special file/;
          break;
        case 'over-cap': {
          // Not read, only replaced: a 1 GB file there is replaced at once.
          await replaceEntry(STATE, (absolute) => makeSparse(absolute, '1G'));
          const snapshot = await tool('snapshot_state', {});
          expect(snapshot.isError, snapshot.text).toBe(false);
          const state = JSON.parse(await readFile(path.join(root, STATE), 'utf8')) as object;
          expect(state).toMatchObject({ schema_version: '1' });
          return;
        }
      }
      const snapshot = await tool('snapshot_state', {});
      expect(snapshot.isError).toBe(true);
      expect(snapshot.text).toMatch(reason);
    });
  }
});

// ---- The hash cache: .notarai/.cache/notarai.db and its companions ----------------------------

describe('the hash cache (.notarai/.cache/notarai.db, -journal, -wal, -shm)', () => {
  const DB = '.notarai/.cache/notarai.db';

  /** Every cache-touching tool refuses with `reason`; clear_cache then removes the entry itself. */
  async function expectCacheRefused(reason: RegExp, clearable = true): Promise<void> {
    const marked = await tool('mark_reconciled', { files: ['src/a.ts'] });
    expect(marked.isError).toBe(true);
    expect(marked.text).toMatch(reason);
    const diff = await tool('get_spec_diff', APP_DIFF);
    expect(diff.isError).toBe(true);
    expect(diff.text).toMatch(reason);
    const artifacts = await tool('get_changed_artifacts', { spec_path: '.notarai/app.spec.yaml' });
    expect(artifacts.isError).toBe(true);
    const snapshot = await tool('snapshot_state', {});
    expect(snapshot.isError).toBe(true);
    const cleared = await tool('clear_cache', {});
    if (clearable) {
      expect(cleared.isError, cleared.text).toBe(false);
      const again = await tool('mark_reconciled', { files: ['src/a.ts'] });
      expect(again.isError, again.text).toBe(false);
      expect(again.structured).toMatchObject({ updated: 1 });
    } else {
      expect(cleared.isError).toBe(true);
      expect(cleared.text).toMatch(reason);
    }
  }

  /** A cache with one row, so that companions and links are met by an existing database. */
  async function withDatabase(): Promise<void> {
    const marked = await tool('mark_reconciled', { files: ['src/a.ts'] });
    expect(marked.isError, marked.text).toBe(false);
  }

  for (const shape of shapesHere) {
    it(`× ${shape.name}`, async () => {
      const refused = (name: string, what: string) =>
        new RegExp(`hash cache's \\.notarai/\\.cache/${name.replaceAll('.', '\\.')} is ${what}`);
      switch (shape.id) {
        case 'link-file':
          // The database, and each file SQLite opens beside it (a hot journal would be replayed
          // into, and a WAL written through, whatever the link points at).
          for (const companion of [
            'notarai.db',
            'notarai.db-journal',
            'notarai.db-wal',
            'notarai.db-shm',
          ]) {
            await withDatabase();
            const victim = companion === 'notarai.db' ? 'notarai.db' : 'notarai.db-journal';
            await replaceEntry(
              `.notarai/.cache/${companion}`,
              linkTo(path.join(outside, 'cache', victim)),
            );
            await expectCacheRefused(refused(companion, 'a symlink'));
            for (const step of undo.splice(0).reverse()) await step();
          }
          return;
        case 'link-dir':
          await replaceEntry(DB, linkTo(path.join(outside, 'cache')));
          await expectCacheRefused(refused('notarai.db', 'a symlink'));
          return;
        case 'parent':
          // .notarai/.cache leads to a directory holding a victim notarai.db (that SQLite would
          // find "corrupt" and Grove would recreate): never opened, created, nor deleted there.
          await mkdir(path.join(root, '.notarai'), { recursive: true });
          await replaceEntry('.notarai/.cache', linkTo(path.join(outside, 'cache')));
          await expectCacheRefused(
            /\.notarai\/\.cache is a symbolic link, which Grove never writes through/,
            false,
          );
          return;
        case 'fifo':
          await replaceEntry(DB, mkfifo);
          await expectCacheRefused(refused('notarai.db', 'a special file'));
          await withDatabase();
          await replaceEntry('.notarai/.cache/notarai.db-wal', mkfifo);
          await expectCacheRefused(refused('notarai.db-wal', 'a special file'));
          return;
        case 'dev-zero':
          await replaceEntry(DB, linkTo('/dev/zero'));
          await expectCacheRefused(refused('notarai.db', 'a symlink'));
          return;
        case 'chrdev':
          await replaceEntry(DB, mknodZero);
          await expectCacheRefused(refused('notarai.db', 'a special file'));
          return;
        case 'over-cap': {
          // A 1 GB database of zeros: not SQLite's; recreated with a warning, at once.
          await mkdir(path.join(root, '.notarai', '.cache'), { recursive: true });
          await replaceEntry(DB, (absolute) => makeSparse(absolute, '1G'));
          const marked = await tool('mark_reconciled', { files: ['src/a.ts'] });
          expect(marked.isError, marked.text).toBe(false);
          // Whoever opens the cache first recreates it and says why: the mark, or the live
          // state's recompute that the planted file's own watcher event set off.
          expect(marked.structured).toMatchObject({ updated: 1 });
          for (const warning of (marked.structured as { warnings?: string[] }).warnings ?? []) {
            expect(warning).toMatch(/notarai\.db was unreadable .* recreated empty/);
          }
          return;
        }
      }
    });
  }

  it("× a database holding NotarAI's table and triggers on it (one recording each insert, one dropping every row)", async () => {
    // Committed: NotarAI's exact table (columns included), so only its other objects betray it. A
    // trigger would run inside mark_reconciled's write, on the worktree process's event loop.
    await mkdir(path.join(root, '.notarai', '.cache'), { recursive: true });
    await replaceEntry(DB, async (absolute) => {
      const planted = new Database(absolute);
      planted.exec(NOTARAI_CREATE_TABLE);
      planted.exec(
        'CREATE TABLE hits (n INTEGER); ' +
          'CREATE TRIGGER spy AFTER INSERT ON file_cache BEGIN INSERT INTO hits VALUES (1); END; ' +
          'CREATE TRIGGER drop_rows BEFORE INSERT ON file_cache BEGIN SELECT RAISE(IGNORE); END;',
      );
      planted.close();
    });
    const marked = await tool('mark_reconciled', { files: ['src/a.ts'] });
    expect(marked.isError, marked.text).toBe(false);
    expect(marked.structured).toMatchObject({ updated: 1 });
    // Whoever opens the cache first recreates it and says why: the mark, or the live state's
    // recompute that the planted file's own watcher event set off (its warning then goes with the
    // reconcile-state). Either way the warning names what the file held.
    const { warnings } = marked.structured as { warnings?: string[] };
    for (const warning of warnings ?? []) {
      expect(warning).toMatch(
        /notarai\.db was unreadable \(it holds table "hits", trigger "spy", trigger "drop_rows", which NotarAI never creates; Grove runs no trigger from a cache file\) and has been recreated empty/,
      );
    }
    // The row reported as updated is stored, and nothing of the planted schema is left.
    expectOnlyNotaraiRows(path.join(root, DB), ['src/a.ts']);
  });

  it('× a database whose schema holds 100,000 triggers (11 MB): recreated from its first page, never loaded', async () => {
    // SQLite loads a whole schema at once, on the thread that asks: loading this one held the
    // worktree process's event loop 7.0 s (hash-cache.test.ts measures the loop; this is the user's
    // view of it). The triggers are written as rows of sqlite_schema: CREATE TRIGGER, one after
    // another, takes minutes for that many.
    await mkdir(path.join(root, '.notarai', '.cache'), { recursive: true });
    await replaceEntry(DB, async (absolute) => {
      // Built aside and renamed into place, as a checkout brings it: the worktree process (its
      // watcher) may open the cache any time.
      const building = path.join(repo.dir, 'planted-notarai.db');
      const planted = new Database(building);
      planted.exec(NOTARAI_CREATE_TABLE);
      planted.unsafeMode(true);
      planted.pragma('writable_schema = ON');
      const insert = planted.prepare(
        "INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql) VALUES ('trigger', ?, 'file_cache', 0, ?)",
      );
      planted.transaction(() => {
        for (let n = 0; n < 100_000; n++) {
          insert.run(
            `t${n}`,
            `CREATE TRIGGER t${n} AFTER INSERT ON file_cache BEGIN SELECT ${n}; END`,
          );
        }
      })();
      planted.close();
      await rename(building, absolute);
    });
    const marked = await tool('mark_reconciled', { files: ['src/a.ts'] });
    expect(marked.isError, marked.text).toBe(false);
    expect(marked.structured).toMatchObject({ updated: 1 });
    // Whoever opens the cache first recreates it and says why (see the test above).
    for (const warning of (marked.structured as { warnings?: string[] }).warnings ?? []) {
      expect(warning).toMatch(
        /notarai\.db was unreadable \(its schema spans more than one page .*\) and has been recreated empty/,
      );
    }
    expectOnlyNotaraiRows(path.join(root, DB), ['src/a.ts']);
  });
});

// ---- mark_reconciled's hashing ----------------------------------------------------------------

describe("mark_reconciled's hashing of the files a client names", () => {
  for (const shape of shapesHere) {
    it(`× ${shape.name}`, async () => {
      let file = 'src/hostile';
      let reason: RegExp | null;
      const outsideLink = /resolves outside the worktree root through a symbolic link/;
      switch (shape.id) {
        case 'link-file':
          await replaceEntry(file, linkTo(path.join(outside, 'secret.txt')));
          reason = outsideLink;
          break;
        case 'link-dir':
          await replaceEntry(file, linkTo(path.join(outside, 'dir')));
          reason = outsideLink;
          break;
        case 'parent':
          file = 'src/dir/x.dat';
          await replaceEntry('src/dir', linkTo(path.join(outside, 'dir')));
          reason = outsideLink;
          break;
        case 'fifo':
          await replaceEntry(file, mkfifo);
          reason = /^not a regular file$/;
          break;
        case 'dev-zero':
          await replaceEntry(file, linkTo('/dev/zero'));
          reason = outsideLink;
          break;
        case 'chrdev':
          await replaceEntry(file, mknodZero);
          reason = /^not a regular file$/;
          break;
        case 'over-cap':
          // No cap on hashing: a file 16 times the size read in one call (READ_CHUNK_BYTES) is
          // hashed, streamed in a worker, promptly and in bounded memory.
          await replaceEntry(file, (absolute) => makeSparse(absolute, '128M'));
          reason = null;
          break;
      }
      const rssBefore = await server.rss();
      // Every spelling a client may use for the path.
      // (one for the 1 GB file: each spelling would hash it again).
      const spellings = reason === null ? [file] : [file, `./${file}`, path.join(root, file)];
      const marked = await tool('mark_reconciled', { files: [...spellings, 'src/a.ts'] });
      expect(marked.isError, marked.text).toBe(false);
      const result = marked.structured as {
        updated: number;
        rejected: { path: string; reason: string }[];
      };
      if (reason === null) {
        expect(result).toMatchObject({ updated: 2, rejected: [] });
        // Streamed: the process grows by less than the file (the worker that hashes it starts
        // here, ~20-30 MB with its isolate, so the bound is below the file's 128 MiB, not near 0).
        expect((await server.rss()) - rssBefore).toBeLessThan(96 * 2 ** 20);
      } else {
        expect(result.updated).toBe(1); // src/a.ts only
        expect(result.rejected.map((entry) => entry.path)).toEqual(spellings);
        for (const entry of result.rejected) expect(entry.reason).toMatch(reason);
      }
      // What was stored, as the user sees it in the state file: never an outside file's hash.
      const snapshot = await tool('snapshot_state', {});
      expect(snapshot.isError, snapshot.text).toBe(false);
      const state = await readFile(path.join(root, '.notarai/reconciliation_state.json'), 'utf8');
      for (const hash of outsideHashes) expect(state).not.toContain(hash);
      expect(JSON.parse(state)).toMatchObject({ file_fingerprints: { 'src/a.ts': {} } });
      await unlink(path.join(root, '.notarai/reconciliation_state.json'));
    });
  }
});

// ---- Memory: a hostile spec present while specs are loaded again and again --------------------

describe('memory stays bounded while hostile specs are present', () => {
  it('loads specs next to /dev/zero and a 1 GB sparse spec, repeatedly, in bounded memory and time', async () => {
    await replaceEntry('.notarai/zero.spec.yaml', linkTo('/dev/zero'));
    await replaceEntry('.notarai/huge.spec.yaml', (absolute) => makeSparse(absolute, '1G'));
    if (CAN_MKNOD) await replaceEntry('.notarai/chr.spec.yaml', mknodZero);
    const readAll = async (): Promise<void> => {
      const specs = await loadSpecs(root);
      expect(specs.errors.map((error) => error.file)).toEqual([
        ...(CAN_MKNOD ? ['.notarai/chr.spec.yaml'] : []),
        '.notarai/huge.spec.yaml',
        '.notarai/zero.spec.yaml',
      ]);
      for (const name of ['zero', 'huge', 'chr']) {
        await expect(readSpecText(root, `.notarai/${name}.spec.yaml`)).rejects.toThrow(
          /outside the worktree|larger than|not a regular file|no such file/,
        );
      }
    };
    for (let round = 0; round < 50; round++) await readAll(); // warm up
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    const started = performance.now();
    for (let round = 0; round < 200; round++) await readAll();
    const elapsed = performance.now() - started;
    const growth = process.memoryUsage().rss - before;
    console.info(
      `hostile specs: 200 loads in ${elapsed.toFixed(0)} ms, RSS growth ${(growth / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(growth).toBeLessThan(64 * 2 ** 20);
    expect(elapsed).toBeLessThan(PROMPT_MS);

    // And the worktree process serving them: its resident memory stays bounded too.
    const processBefore = await server.rss();
    for (let round = 0; round < 20; round++) {
      const listed = await tool('list_affected_specs', { base_branch: 'main' });
      expect(listed.isError).toBe(false);
      for (const name of ['zero', 'huge']) {
        const read = await readResource(specResourceUri(`.notarai/${name}.spec.yaml`));
        expect(read.ok).toBe(false);
      }
    }
    const processGrowth = (await server.rss()) - processBefore;
    console.info(
      `worktree process RSS growth over 20 rounds: ${(processGrowth / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(processGrowth).toBeLessThan(64 * 2 ** 20);
  });
});

// ---- The same shapes committed: a hostile repository cloned and opened -----------------------

describe('a cloned repository with committed symlinks leading outside', () => {
  /** Serves `clone` in its own worktree process; runs `body` with a client to it. */
  async function serveClone(
    clone: string,
    body: (call: typeof tool, read: typeof readResource) => Promise<void>,
  ): Promise<void> {
    const cloneServer = await startWorktreeProcess(clone);
    const { client: cloneClient } = await connectClient(
      cloneServer.port,
      'modern-http',
      cloneServer.token,
    );
    const call: typeof tool = async (name, args) => {
      const result = (await withTimeout(
        cloneClient.callTool({ name, arguments: args }),
        PROMPT_MS,
        name,
      )) as CallToolResult;
      expect(leaksSecret(result)).toBe(false);
      const first = result.content[0];
      return {
        isError: result.isError === true,
        text: first?.type === 'text' ? first.text : '',
        structured: result.structuredContent,
        ms: 0,
      };
    };
    const read: typeof readResource = async (uri) => {
      try {
        const result = await cloneClient.readResource({ uri });
        expect(leaksSecret(result)).toBe(false);
        return { ok: true, text: JSON.stringify(result) };
      } catch (error) {
        expect(leaksSecret(messageOf(error))).toBe(false);
        return { ok: false, text: messageOf(error) };
      }
    };
    try {
      await body(call, read);
    } finally {
      await cloneClient.close().catch(() => undefined);
      await cloneServer.stop();
      expect(leaksSecret(cloneServer.messages)).toBe(false);
      expect(leaksSecret(cloneServer.output())).toBe(false);
    }
  }

  it('serves the whole workflow, refusing each link by name, and writes nothing outside', async () => {
    // The hostile origin: links relative to the repository, so that any clone beside `outside/`
    // points there too.
    const origin = path.join(repo.dir, 'hostile-origin');
    await git(repo.dir, 'init', '-q', '-b', 'main', origin);
    await writeFiles(origin, { '.notarai/app.spec.yaml': APP_SPEC, 'src/a.ts': 'a\n' });
    await symlink('../../outside/secret.spec.yaml', path.join(origin, '.notarai/evil.spec.yaml'));
    await symlink('../../outside/specs', path.join(origin, '.notarai/sub'));
    await symlink(
      '../../outside/victim.json',
      path.join(origin, '.notarai/reconciliation_state.json'),
    );
    await symlink('../../outside/secret.txt', path.join(origin, 'src/link'));
    await symlink('/dev/zero', path.join(origin, 'src/zero'));
    await git(origin, 'add', '-A');
    await git(origin, 'commit', '-q', '-m', 'hostile');
    await git(origin, 'checkout', '-q', '-b', 'cache-link');
    await symlink('../../outside/cache', path.join(origin, '.notarai/.cache'));
    await git(origin, 'add', '-A');
    await git(origin, 'commit', '-q', '-m', 'hostile cache');
    await git(origin, 'checkout', '-q', 'main');

    const clone = path.join(repo.dir, 'hostile-clone');
    await git(repo.dir, 'clone', '-q', origin, clone);
    await serveClone(clone, async (call, read) => {
      const listed = await call('list_affected_specs', { base_branch: 'main' });
      expect(listed.structured).toMatchObject({
        spec_errors: [
          {
            file: '.notarai/evil.spec.yaml',
            message: expect.stringMatching(/outside the worktree root through a symbolic link/),
          },
        ],
      });
      expect((await read(specResourceUri('.notarai/evil.spec.yaml'))).text).toMatch(
        /outside the worktree root through a symbolic link.*evil\.spec\.yaml/,
      );
      const diff = await call('get_spec_diff', APP_DIFF);
      expect(diff.isError, diff.text).toBe(false);
      expect(diff.structured).toMatchObject({
        spec_changes: expect.arrayContaining([{ path: '.notarai/evil.spec.yaml', content: '' }]),
        warnings: [expect.stringMatching(/^cannot read spec \.notarai\/evil\.spec\.yaml: /)],
      });
      const marked = await call('mark_reconciled', {
        files: ['src/a.ts', 'src/link', 'src/zero', '.notarai/sub/evil.spec.yaml'],
      });
      expect(marked.structured).toMatchObject({
        updated: 1,
        rejected: [
          { path: 'src/link', reason: expect.stringMatching(/outside the worktree root/) },
          { path: 'src/zero', reason: expect.stringMatching(/outside the worktree root/) },
          {
            path: '.notarai/sub/evil.spec.yaml',
            reason: expect.stringMatching(/outside the worktree root/),
          },
        ],
      });
      const snapshot = await call('snapshot_state', {});
      expect(snapshot.isError).toBe(true);
      expect(snapshot.text).toMatch(
        /"\.notarai\/reconciliation_state\.json": it is a symbolic link, which Grove never writes through/,
      );
      expect((await call('clear_cache', {})).isError).toBe(false);
    });

    const cacheClone = path.join(repo.dir, 'hostile-clone-cache');
    await git(repo.dir, 'clone', '-q', '-b', 'cache-link', origin, cacheClone);
    await serveClone(cacheClone, async (call) => {
      for (const [name, args] of [
        ['mark_reconciled', { files: ['src/a.ts'] }],
        ['get_spec_diff', { ...APP_DIFF, base_branch: 'HEAD' }],
        ['clear_cache', {}],
      ] as const) {
        const result = await call(name, args);
        expect(result.isError, name).toBe(true);
        expect(result.text).toMatch(/\.notarai\/\.cache is a symbolic link/);
      }
    });
    // afterEach: nothing outside changed (the victim database and journal behind the cache link
    // included).
  });
});
