// The confined file layer's readers and writers, one by one, against the shapes a hostile worktree
// can hold: symlinks to files and directories outside, symlinked parent directories (also ones
// that stay inside, which writers refuse too), FIFOs, devices, files over the cap. The attack suite
// of the file tools (path spellings through every tool) is main/tools/file-tools-confinement.test.ts;
// the readers and writers of the reconciliation engine are attacked in
// main/reconcile/hostile-repository.test.ts and hostile-races.test.ts.
import {
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { closeSync, fstatSync, readdirSync, readSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CAN_MKNOD,
  SECRET,
  leaksSecret,
  makeSparse,
  messageOf,
  mkfifo,
  mknodZero,
  snapshotChanges,
  snapshotTree,
} from '../testing/hostile-repository.ts';
import { makeTempDir } from '../testing/temp-repo.ts';
import {
  VerifiedDirectories,
  ensureDirectoryInsideRoot,
  entryKind,
  entryKindInsideRoot,
  lstatEntriesInsideRoot,
  lstatNoFollowInsideRoot,
  readFileInsideRoot,
  readHeadInsideRoot,
  removeFileInsideRoot,
  writeFileAtomicInsideRoot,
} from './confined-fs.ts';
import { UserError } from './errors.ts';

let dir: string;
/** The worktree root (a real path). */
let root: string;
/** Beside the root: what must never be read, written or deleted. */
let outside: string;
let outsideBefore: Map<string, string>;

beforeEach(async () => {
  dir = await makeTempDir('grove-confined-');
  root = path.join(dir, 'root');
  outside = path.join(dir, 'outside');
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await mkdir(path.join(outside, 'dir'), { recursive: true });
  await writeFile(path.join(outside, 'secret.txt'), `${SECRET}\n`);
  await writeFile(path.join(outside, 'dir', 'secret.txt'), `${SECRET}\n`);
  await writeFile(path.join(root, 'inside.txt'), 'inside\n');
  await writeFile(path.join(root, 'sub', 'file.txt'), 'sub file\n');
  outsideBefore = await snapshotTree(outside);
});

afterEach(async () => {
  // Whatever a test did, nothing outside the root changed.
  expect(snapshotChanges(outsideBefore, await snapshotTree(outside))).toEqual([]);
  await rm(dir, { recursive: true, force: true });
});

/** Runs `action` expecting a UserError; returns its message (checked for the secret). */
async function refusal(action: () => unknown): Promise<string> {
  const started = Date.now();
  let caught: unknown;
  try {
    await action();
  } catch (error) {
    caught = error;
  }
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(caught).toBeInstanceOf(UserError);
  const message = messageOf(caught);
  expect(leaksSecret(message)).toBe(false);
  return message;
}

/** The hostile shapes readers meet at `relative` (inside the root). */
const readerShapes: {
  name: string;
  make: (target: string) => Promise<void>;
  reason: RegExp;
  rootOnly?: boolean;
}[] = [
  {
    name: 'a symlink to an outside file',
    make: (target) => symlink(path.join(outside, 'secret.txt'), target),
    reason: /outside the worktree root through a symbolic link/,
  },
  {
    name: 'a relative symlink to an outside file',
    make: (target) => symlink('../outside/secret.txt', target),
    reason: /outside the worktree root through a symbolic link/,
  },
  {
    name: 'a symlink to an outside directory',
    make: (target) => symlink(path.join(outside, 'dir'), target),
    reason: /outside the worktree root through a symbolic link/,
  },
  {
    name: 'a FIFO',
    make: mkfifo,
    reason: /not a regular file \(a FIFO, socket or device\)/,
  },
  {
    name: 'a symlink to /dev/zero',
    make: (target) => symlink('/dev/zero', target),
    reason: /outside the worktree root through a symbolic link/,
  },
  {
    name: 'a character device inside the root',
    make: mknodZero,
    reason: /not a regular file \(a FIFO, socket or device\)/,
    rootOnly: true,
  },
  {
    name: 'a directory',
    make: (target) => mkdir(target),
    reason: /is a directory, not a file/,
  },
];

describe('readFileInsideRoot', () => {
  it('reads a file up to the cap, the cap itself included', async () => {
    await writeFile(path.join(root, 'exact.txt'), 'x'.repeat(100));
    const bytes = await readFileInsideRoot(root, 'exact.txt', { maxBytes: 100 });
    expect(bytes.toString()).toBe('x'.repeat(100));
    expect((await readFileInsideRoot(root, 'inside.txt', { maxBytes: 100 })).toString()).toBe(
      'inside\n',
    );
  });

  it('refuses a file one byte over the cap, naming the cap and the path, not the content', async () => {
    await writeFile(path.join(root, 'big.txt'), `${SECRET}${'x'.repeat(100 - SECRET.length + 1)}`);
    const message = await refusal(() => readFileInsideRoot(root, 'big.txt', { maxBytes: 100 }));
    expect(message).toBe('file is larger than the 100-byte limit: "big.txt"');
  });

  it('refuses a 1 GB sparse file at once, without reading it', async () => {
    await makeSparse(path.join(root, 'huge.bin'), '1G');
    const started = performance.now();
    const message = await refusal(() =>
      readFileInsideRoot(root, 'huge.bin', { maxBytes: 2 * 1024 * 1024 }),
    );
    expect(message).toContain('larger than the 2097152-byte limit: "huge.bin"');
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('follows a symlink that stays inside the root', async () => {
    await symlink('sub/file.txt', path.join(root, 'link-in'));
    await symlink(path.join(root, 'sub'), path.join(root, 'dir-link-in'));
    expect((await readFileInsideRoot(root, 'link-in', { maxBytes: 100 })).toString()).toBe(
      'sub file\n',
    );
    expect(
      (await readFileInsideRoot(root, 'dir-link-in/file.txt', { maxBytes: 100 })).toString(),
    ).toBe('sub file\n');
  });

  it('refuses a file under a symlinked parent directory leading outside', async () => {
    await symlink(path.join(outside, 'dir'), path.join(root, 'linked'));
    const message = await refusal(() =>
      readFileInsideRoot(root, 'linked/secret.txt', { maxBytes: 1000 }),
    );
    expect(message).toMatch(/outside the worktree root through a symbolic link/);
    expect(message).toContain('"linked/secret.txt"');
  });

  for (const shape of readerShapes) {
    it.runIf(!shape.rootOnly || CAN_MKNOD)(`refuses ${shape.name}, naming it`, async () => {
      await shape.make(path.join(root, 'hostile'));
      const message = await refusal(() => readFileInsideRoot(root, 'hostile', { maxBytes: 1000 }));
      expect(message).toMatch(shape.reason);
      expect(message).toContain('"hostile"');
    });
  }
});

describe('readHeadInsideRoot', () => {
  it('reads the first bytes, or the whole file when it is shorter', async () => {
    await writeFile(path.join(root, 'abc.txt'), 'abcdefghij');
    expect((await readHeadInsideRoot(root, 'abc.txt', 4)).toString()).toBe('abcd');
    expect((await readHeadInsideRoot(root, 'abc.txt', 100)).toString()).toBe('abcdefghij');
    expect(await readHeadInsideRoot(root, 'abc.txt', 0)).toHaveLength(0);
  });

  it('reads the head of a 1 GB sparse file at once', async () => {
    await makeSparse(path.join(root, 'huge.bin'), '1G');
    const started = performance.now();
    const head = await readHeadInsideRoot(root, 'huge.bin', 8192);
    expect(head).toHaveLength(8192);
    expect(head.every((byte) => byte === 0)).toBe(true);
    expect(performance.now() - started).toBeLessThan(500);
  });

  for (const shape of readerShapes) {
    it.runIf(!shape.rootOnly || CAN_MKNOD)(`refuses ${shape.name}`, async () => {
      await shape.make(path.join(root, 'hostile'));
      expect(await refusal(() => readHeadInsideRoot(root, 'hostile', 8192))).toMatch(shape.reason);
    });
  }
});

describe('writeFileAtomicInsideRoot', () => {
  it('creates the missing directories and the file, and returns its real path', async () => {
    const written = await writeFileAtomicInsideRoot(root, 'a/b/c/state.json', '{"ok":true}\n');
    expect(written).toBe(path.join(root, 'a', 'b', 'c', 'state.json'));
    expect(await readFile(written, 'utf8')).toBe('{"ok":true}\n');
    expect((await stat(path.join(root, 'a', 'b'))).mode & 0o777).toBe(0o755);
    expect((await stat(written)).mode & 0o777).toBe(0o644);
    const secret = await writeFileAtomicInsideRoot(root, 'private.txt', Buffer.from('p'), {
      mode: 0o600,
    });
    expect((await stat(secret)).mode & 0o777).toBe(0o600);
  });

  it('replaces a file by renaming a complete temp file over it (never in place)', async () => {
    const target = path.join(root, 'state.json');
    await writeFile(target, 'old version\n');
    await link(target, path.join(root, 'old-link')); // a second name for the old inode
    const before = await stat(target);
    await writeFileAtomicInsideRoot(root, 'state.json', 'new version\n');
    const after = await stat(target);
    expect(after.ino).not.toBe(before.ino);
    expect(await readFile(target, 'utf8')).toBe('new version\n');
    // Written in place, the old inode would hold the new content.
    expect(await readFile(path.join(root, 'old-link'), 'utf8')).toBe('old version\n');
    expect((await readdir(root)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('never shows a reader a partly written file', async () => {
    const size = 512 * 1024;
    const versions = ['a', 'b', 'c', 'd'].map((letter) => Buffer.alloc(size, letter));
    await writeFileAtomicInsideRoot(root, 'big.bin', versions[0] as Buffer);
    let writing = true;
    let reads = 0;
    const torn: string[] = [];
    const reader = (async () => {
      while (writing) {
        const bytes = await readFile(path.join(root, 'big.bin'));
        reads++;
        const first = bytes[0];
        if (bytes.length !== size || !bytes.every((byte) => byte === first)) {
          torn.push(`length ${bytes.length}`);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    for (let round = 0; round < 40; round++) {
      await writeFileAtomicInsideRoot(root, 'big.bin', versions[round % 4] as Buffer);
    }
    writing = false;
    await reader;
    expect(torn).toEqual([]);
    expect(reads).toBeGreaterThan(0);
  });

  const targetShapes: { name: string; make: (target: string) => Promise<void>; reason: RegExp }[] =
    [
      {
        name: 'a symlink to an outside file',
        make: (target) => symlink(path.join(outside, 'secret.txt'), target),
        reason: /is a symbolic link, which Grove never writes through/,
      },
      {
        name: 'a symlink to an outside directory',
        make: (target) => symlink(path.join(outside, 'dir'), target),
        reason: /is a symbolic link, which Grove never writes through/,
      },
      {
        name: 'a symlink to a file inside the root',
        make: (target) => symlink(path.join(root, 'inside.txt'), target),
        reason: /is a symbolic link, which Grove never writes through/,
      },
      {
        name: 'a dangling symlink to an outside path',
        make: (target) => symlink(path.join(outside, 'created-by-grove.txt'), target),
        reason: /is a symbolic link, which Grove never writes through/,
      },
      {
        name: 'a symlink to /dev/zero',
        make: (target) => symlink('/dev/zero', target),
        reason: /is a symbolic link/,
      },
      { name: 'a directory', make: (target) => mkdir(target), reason: /is a directory/ },
      { name: 'a FIFO', make: mkfifo, reason: /is a special file \(FIFO, socket or device\)/ },
    ];
  if (CAN_MKNOD) {
    targetShapes.push({
      name: 'a character device',
      make: mknodZero,
      reason: /is a special file/,
    });
  }

  for (const shape of targetShapes) {
    it(`refuses ${shape.name} at the target, writing nothing`, async () => {
      await shape.make(path.join(root, 'sub', 'state.json'));
      const before = await snapshotTree(root);
      const message = await refusal(() =>
        writeFileAtomicInsideRoot(root, 'sub/state.json', `${SECRET}-written`),
      );
      expect(message).toMatch(shape.reason);
      expect(message).toContain('"sub/state.json"');
      expect(snapshotChanges(before, await snapshotTree(root))).toEqual([]);
      expect(await readFile(path.join(root, 'inside.txt'), 'utf8')).toBe('inside\n');
    });
  }

  for (const [name, linkTarget] of [
    ['leading outside', () => path.join(outside, 'dir')],
    ['staying inside', () => path.join(root, 'sub')],
  ] as const) {
    it(`refuses a symlinked directory on the way (${name}), creating nothing through it`, async () => {
      await symlink(linkTarget(), path.join(root, 'linked'));
      const before = await snapshotTree(root);
      const message = await refusal(() =>
        writeFileAtomicInsideRoot(root, 'linked/state.json', 'x'),
      );
      expect(message).toBe(
        'cannot write "linked/state.json": linked is a symbolic link, which Grove never writes through',
      );
      // Also deeper, where a missing directory would be created under the link.
      await refusal(() => writeFileAtomicInsideRoot(root, 'linked/new/deeper/state.json', 'x'));
      expect(snapshotChanges(before, await snapshotTree(root))).toEqual([]);
    });
  }

  it('refuses a file or a FIFO where a directory should be', async () => {
    expect(await refusal(() => writeFileAtomicInsideRoot(root, 'inside.txt/x.json', 'x'))).toBe(
      'cannot write "inside.txt/x.json": inside.txt is a file, not a directory',
    );
    await mkfifo(path.join(root, 'pipe'));
    expect(await refusal(() => writeFileAtomicInsideRoot(root, 'pipe/x.json', 'x'))).toMatch(
      /pipe is a special file/,
    );
  });

  it('refuses paths that are not plain relative paths inside the root', async () => {
    await refusal(() => writeFileAtomicInsideRoot(root, '../outside/x.txt', 'x'));
    await refusal(() => writeFileAtomicInsideRoot(root, path.join(outside, 'x.txt'), 'x'));
    await refusal(() => writeFileAtomicInsideRoot(root, '.git/config', 'x'));
    await refusal(() => writeFileAtomicInsideRoot(root, 'sub/', 'x'));
    await refusal(() => writeFileAtomicInsideRoot(root, 'a\0b', 'x'));
  });
});

describe('removeFileInsideRoot', () => {
  it('removes a file, and says whether something was there', async () => {
    expect(removeFileInsideRoot(root, 'inside.txt')).toBe(true);
    expect(removeFileInsideRoot(root, 'inside.txt')).toBe(false);
    expect(removeFileInsideRoot(root, 'no/such/dir/file')).toBe(false);
    await mkfifo(path.join(root, 'pipe'));
    expect(removeFileInsideRoot(root, 'pipe')).toBe(true);
    expect(await readdir(root)).toEqual(['sub']);
  });

  it('removes a symlink itself, never its target', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'out-file'));
    await symlink(path.join(outside, 'dir'), path.join(root, 'out-dir'));
    await symlink('sub/file.txt', path.join(root, 'in-file'));
    await symlink(path.join(outside, 'missing'), path.join(root, 'dangling'));
    for (const name of ['out-file', 'out-dir', 'in-file', 'dangling']) {
      expect(removeFileInsideRoot(root, name)).toBe(true);
    }
    expect((await readdir(root)).sort()).toEqual(['inside.txt', 'sub']);
    expect(await readFile(path.join(root, 'sub', 'file.txt'), 'utf8')).toBe('sub file\n');
    // afterEach: the outside targets are untouched.
  });

  it('refuses a directory, and a symlinked directory on the way', async () => {
    expect(await refusal(() => removeFileInsideRoot(root, 'sub'))).toBe(
      'cannot remove "sub": it is a directory',
    );
    await symlink(path.join(outside, 'dir'), path.join(root, 'linked'));
    expect(await refusal(() => removeFileInsideRoot(root, 'linked/secret.txt'))).toBe(
      'cannot write "linked/secret.txt": linked is a symbolic link, which Grove never writes through',
    );
    await symlink(path.join(root, 'sub'), path.join(root, 'linked-in'));
    await refusal(() => removeFileInsideRoot(root, 'linked-in/file.txt'));
    expect(await readFile(path.join(root, 'sub', 'file.txt'), 'utf8')).toBe('sub file\n');
  });
});

describe('lstatEntriesInsideRoot', () => {
  it('lstats names in a directory without following them', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'sub', 'link'));
    await mkfifo(path.join(root, 'sub', 'pipe'));
    const entries = lstatEntriesInsideRoot(root, 'sub', ['file.txt', 'link', 'pipe', 'missing']);
    expect(entries?.map(entryKind)).toEqual(['file', 'symlink', 'special', 'missing']);
    expect(lstatEntriesInsideRoot(root, 'no-such-dir', ['x'])).toBeUndefined();
    expect(lstatEntriesInsideRoot(root, 'sub/deeper/still', ['x'])).toBeUndefined();
  });

  it('refuses a symlinked directory (even one staying inside) or a file on the way', async () => {
    await symlink(path.join(outside, 'dir'), path.join(root, 'out'));
    await symlink(path.join(root, 'sub'), path.join(root, 'in'));
    expect(await refusal(() => lstatEntriesInsideRoot(root, 'out', ['secret.txt']))).toMatch(
      /out is a symbolic link/,
    );
    expect(await refusal(() => lstatEntriesInsideRoot(root, 'in', ['file.txt']))).toMatch(
      /in is a symbolic link/,
    );
    expect(await refusal(() => lstatEntriesInsideRoot(root, 'inside.txt', ['x']))).toMatch(
      /inside.txt is a file, not a directory/,
    );
  });
});

describe('directories and kinds at Grove-chosen paths', () => {
  it('ensureDirectoryInsideRoot creates directories, never through a symlink', async () => {
    expect(ensureDirectoryInsideRoot(root, 'x/y')).toBe(path.join(root, 'x', 'y'));
    expect((await lstat(path.join(root, 'x', 'y'))).isDirectory()).toBe(true);
    await symlink(path.join(outside, 'dir'), path.join(root, 'out'));
    expect(await refusal(() => ensureDirectoryInsideRoot(root, 'out/cache'))).toMatch(
      /out is a symbolic link/,
    );
  });

  it('entryKindInsideRoot and lstatNoFollowInsideRoot never follow a link', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link'));
    await mkfifo(path.join(root, 'pipe'));
    expect(entryKindInsideRoot(root, 'link')).toBe('symlink');
    expect(entryKindInsideRoot(root, 'pipe')).toBe('special');
    expect(entryKindInsideRoot(root, 'sub')).toBe('directory');
    expect(entryKindInsideRoot(root, 'inside.txt')).toBe('file');
    expect(entryKindInsideRoot(root, 'nothing')).toBe('missing');
    expect(lstatNoFollowInsideRoot(root, 'missing-dir/x')).toBeUndefined();
    await symlink(path.join(outside, 'dir'), path.join(root, 'out'));
    await refusal(() => lstatNoFollowInsideRoot(root, 'out/secret.txt'));
  });
});

describe('VerifiedDirectories', () => {
  const bytes = (text: string): Buffer => Buffer.from(text);
  const readFd = (fd: number): string => {
    try {
      const buffer = Buffer.alloc(1024);
      return buffer.subarray(0, readSync(fd, buffer, 0, 1024, 0)).toString();
    } finally {
      closeSync(fd);
    }
  };

  it('follows a directory symlink staying inside only when not strict', async () => {
    await symlink(path.join(root, 'sub'), path.join(root, 'in'));
    const loose = new VerifiedDirectories(root, { strict: false });
    const strict = new VerifiedDirectories(root, { strict: true });
    try {
      expect(loose.prefix(bytes('in'))).not.toBeNull();
      expect(readFd(loose.openFile(bytes('in'), bytes('file.txt')) as number)).toBe('sub file\n');
      expect(strict.prefix(bytes('in'))).toBeNull();
      expect(strict.openFile(bytes('in'), bytes('file.txt'))).toBeNull();
      // The real directory itself and the root are fine for both.
      expect(readFd(strict.openFile(bytes('sub'), bytes('file.txt')) as number)).toBe('sub file\n');
      expect(readFd(strict.openFile(bytes(''), bytes('inside.txt')) as number)).toBe('inside\n');
    } finally {
      loose.close();
      strict.close();
    }
  });

  it('never verifies a directory outside the root, in .git, or missing', async () => {
    await symlink(path.join(outside, 'dir'), path.join(root, 'out'));
    await symlink('/', path.join(root, 'slash'));
    await mkdir(path.join(root, '.git'));
    await writeFile(path.join(root, '.git', 'config'), SECRET);
    for (const strict of [true, false]) {
      const directories = new VerifiedDirectories(root, { strict });
      try {
        // `..` after a directory inside (its parent known, the child looked up by name) still
        // resolves to where it leads: the root's parent is outside.
        const climbing = [
          'sub/../..',
          'sub/../../outside',
          'sub/..//..',
          'sub/./../..',
          'sub/.git',
        ];
        directories.lstatText('sub', 'file.txt'); // the parent known first
        for (const name of [
          'out',
          'slash',
          'slash/tmp',
          '.git',
          'missing',
          'out/..',
          ...climbing,
        ]) {
          expect(directories.prefix(bytes(name)), name).toBeNull();
          expect(directories.openFile(bytes(name), bytes('secret.txt'))).toBeNull();
          expect(directories.lstat(bytes(name), bytes('secret.txt'))).toBeNull();
        }
      } finally {
        directories.close();
      }
    }
  });

  it('opens no final symlink, and a FIFO without waiting for a writer', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'sub', 'link'));
    await symlink('file.txt', path.join(root, 'sub', 'link-in'));
    await mkfifo(path.join(root, 'sub', 'pipe'));
    const directories = new VerifiedDirectories(root, { strict: false });
    try {
      expect(() => directories.openFile(bytes('sub'), bytes('link'))).toThrow(/ELOOP/);
      expect(() => directories.openFile(bytes('sub'), bytes('link-in'))).toThrow(/ELOOP/);
      const started = performance.now();
      const fd = directories.openFile(bytes('sub'), bytes('pipe')) as number;
      expect(performance.now() - started).toBeLessThan(500);
      expect(fstatSync(fd).isFIFO()).toBe(true); // callers check the handle's type
      closeSync(fd);
      expect(directories.lstat(bytes('sub'), bytes('link'))?.isSymbolicLink()).toBe(true);
      expect(directories.lstat(bytes('sub'), bytes('nothing'))).toBeUndefined();
    } finally {
      directories.close();
    }
  });

  it('keeps opening in the directory it verified after the path is swapped for a symlink', async () => {
    const directories = new VerifiedDirectories(root, { strict: true });
    try {
      expect(directories.prefix(bytes('sub'))).not.toBeNull();
      // The verified directory moves away and a symlink to the outside takes its name.
      await mkdir(path.join(root, 'aside'));
      await rename(path.join(root, 'sub'), path.join(root, 'aside', 'sub'));
      await symlink(path.join(outside, 'dir'), path.join(root, 'sub'));
      // secret.txt exists only outside; file.txt only in the directory that was verified.
      expect(() => directories.openFile(bytes('sub'), bytes('secret.txt'))).toThrow(/ENOENT/);
      expect(readFd(directories.openFile(bytes('sub'), bytes('file.txt')) as number)).toBe(
        'sub file\n',
      );
    } finally {
      directories.close();
    }
  });

  it('holds at most maxOpen descriptors and closes them all', async () => {
    for (let index = 0; index < 6; index++) {
      await mkdir(path.join(root, `d${index}`));
      await writeFile(path.join(root, `d${index}`, 'f'), `file ${index}`);
    }
    const openDescriptors = (): number => readdirSync('/proc/self/fd').length;
    const baseline = openDescriptors();
    const directories = new VerifiedDirectories(root, { strict: true, maxOpen: 2 });
    for (let round = 0; round < 2; round++) {
      for (let index = 0; index < 6; index++) {
        const fd = directories.openFile(bytes(`d${index}`), bytes('f'));
        expect(readFd(fd as number)).toBe(`file ${index}`);
        expect(openDescriptors() - baseline).toBeLessThanOrEqual(2);
      }
    }
    directories.close();
    expect(openDescriptors()).toBe(baseline);
  });
});
