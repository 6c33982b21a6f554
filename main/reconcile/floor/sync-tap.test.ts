// The sync's tap (sync-tap.ts) against a real repository, the real watcher and real inotify: every
// change made right before a call (edits, creations, deletions, renames, in subdirectories, a new
// directory and a file in it) is in the call's answer, which equals a fresh engine's; the tap
// answers syncs without waiting for parcel's batch when it can vouch, and falls back to parcel's
// report of the cookie for each reason it cannot (its walk not finished, a directory it did not
// watch yet, a burst that overflows inotify's queue, the watch limit); stopping it releases every
// inotify watch.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../testing/mcp-clients.ts';
import {
  inotifyWatches,
  liveAnswers,
  scannedAnswers,
  TAP_FILES,
  watchedWithTap,
} from '../../testing/sync-tap-fixtures.ts';
import { cleanupsAfterEach } from '../../testing/cleanups.ts';
import { seededRandom } from '../../testing/seeded-random.ts';
import { makeTempRepo, writeFiles } from '../../testing/temp-repo.ts';
import { SyncTap } from './sync-tap.ts';

const SPEC = `schema_version: '0.8'
intent: App.
tier: registered
artifacts:
  code:
    - path: src/**
`;

const cleanups = cleanupsAfterEach();

const TREE = { '.notarai/app.spec.yaml': SPEC, ...TAP_FILES };

describe.runIf(process.platform === 'linux')('the sync tap', () => {
  it('puts every change made right before a call in its answer, mostly without parcel', async () => {
    const repo = await makeTempRepo(TREE);
    cleanups.push(() => repo.cleanup());
    const { engine, index } = await watchedWithTap(repo, cleanups);
    await engine.markReconciled(Object.keys(TREE));
    expect(await liveAnswers(engine)).toEqual(await scannedAnswers(repo.root));

    const next = seededRandom(35);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const files = new Set(Object.keys(TREE).filter((file) => file !== '.notarai/app.spec.yaml'));
    const dirs = ['src', 'src/sub', 'src/sub/deep', 'lib'];
    const file = (name: string) => path.join(repo.root, name);
    let made = 0;
    for (let step = 0; step < 60; step++) {
      const kind = pick(['edit', 'edit', 'create', 'delete', 'rename', 'directory'] as const);
      const some = pick([...files]);
      let what: string;
      if (kind === 'edit' || (files.size < 3 && kind !== 'directory')) {
        await writeFile(file(some), `edited ${step}\n`);
        what = `edit ${some}`;
      } else if (kind === 'create') {
        const created = `${pick(dirs)}/new${++made}.ts`;
        await writeFile(file(created), `new ${step}\n`);
        files.add(created);
        what = `create ${created}`;
      } else if (kind === 'delete') {
        await rm(file(some));
        files.delete(some);
        what = `delete ${some}`;
      } else if (kind === 'rename') {
        const renamed = `${pick(dirs)}/moved${++made}.ts`;
        await rename(file(some), file(renamed));
        files.delete(some);
        files.add(renamed);
        what = `rename ${some} -> ${renamed}`;
      } else {
        const directory = `${pick(dirs)}/dir${++made}`;
        await mkdir(file(directory));
        await writeFile(file(`${directory}/f.ts`), `in a new directory ${step}\n`);
        dirs.push(directory);
        files.add(`${directory}/f.ts`);
        what = `new directory ${directory}`;
      }
      const answer = await liveAnswers(engine); // at once: no wait for any watcher
      expect(answer, `step ${step}: ${what}`).toEqual(await scannedAnswers(repo.root));
    }
    // The point of it: some of those syncs did not wait for parcel's batch.
    expect(index.syncs.tap).toBeGreaterThan(0);
  }, 120_000);

  it('vouches only once parcel certified it, and again after a directory it had not watched', async () => {
    const repo = await makeTempRepo(TREE);
    cleanups.push(() => repo.cleanup());
    const { index, tap } = await watchedWithTap(repo, cleanups);
    // Certified by a cookie parcel reported, written once the walk was done: the next sync is the
    // tap's.
    await index.sync();
    const certified = { ...index.syncs };
    expect(await index.sync()).toBeDefined();
    expect(index.syncs).toEqual({ ...certified, tap: certified.tap + 1 });

    // A new directory with a file in it: the tap saw the directory only once it was made, so it
    // cannot vouch for the file; parcel's report of the cookie answers this sync.
    await mkdir(path.join(repo.root, 'src/fresh'));
    await writeFile(path.join(repo.root, 'src/fresh/f.ts'), 'fresh\n');
    const before = { ...index.syncs };
    const refusals = (tap.refusals.get('walking') ?? 0) + (tap.refusals.get('not certified') ?? 0);
    expect(await index.sync()).toBeDefined();
    expect(index.syncs).toEqual({ ...before, watcher: before.watcher + 1 });
    expect((tap.refusals.get('walking') ?? 0) + (tap.refusals.get('not certified') ?? 0)).toBe(
      refusals + 1,
    );
    // Once its walk is done and parcel certified it again, the tap answers again.
    await tap.ready;
    await index.sync();
    const again = { ...index.syncs };
    await index.sync();
    expect(index.syncs).toEqual({ ...again, tap: again.tap + 1 });
  });

  it('does not vouch before its first walk is done', async () => {
    const repo = await makeTempRepo(TREE);
    cleanups.push(() => repo.cleanup());
    const { watcher, tap } = await watchedWithTap(repo, cleanups);
    expect(tap.mark()).toBeDefined();
    // A second tap on the same worktree, just started: its walk has begun, not ended.
    const second = new SyncTap({
      trees: [{ dir: repo.root, ignore: [path.join(repo.root, '.git')] }],
      onPaths: () => undefined,
      isCookie: () => true,
    });
    cleanups.push(() => second.stop());
    second.start();
    expect(second.mark()).toBeUndefined();
    expect(second.refusal()).toBe('walking');
    await second.ready;
    expect(second.mark()).toBeDefined();
    expect(second.refusal()).toBe('not certified');
    expect(watcher.syncTap).toBe(tap);
  });

  it('does not vouch after a burst that overflowed inotify’s queue, and answers right', async () => {
    const repo = await makeTempRepo({ ...TREE, 'src/burst/keep.ts': 'keep\n' });
    cleanups.push(() => repo.cleanup());
    const { engine, index, tap } = await watchedWithTap(repo, cleanups);
    await engine.markReconciled(Object.keys(TREE));
    expect(await liveAnswers(engine)).toEqual(await scannedAnswers(repo.root));
    await index.sync();
    const certified = index.syncs.tap;
    await index.sync();
    expect(index.syncs.tap).toBe(certified + 1);

    const queue = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
    const burst = (files: number, from: number) => {
      // The event loop blocked meanwhile: the events (2 a file) wait in the kernel's queue.
      for (let n = from; n < from + files; n++) {
        writeFileSync(path.join(repo.root, `src/burst/f${n}.ts`), `${n}\n`);
      }
      writeFileSync(path.join(repo.root, 'src/a.ts'), `written after ${files} files\n`);
    };
    /** Syncs until the tap vouches again (parcel certifies it anew in at most two syncs). */
    const resumes = async () => {
      const tapped = index.syncs.tap;
      for (let n = 0; n < 5 && index.syncs.tap === tapped; n++) await index.sync();
      return index.syncs.tap > tapped;
    };

    // More events than the tap trusts (half the queue), fewer than the queue holds: the tap sees
    // the cookie, and refuses.
    burst(Math.floor(queue / 4) + 200, 0);
    let before = { ...index.syncs };
    const refused = tap.refusals.get('many events') ?? 0;
    expect(await index.sync()).toBeDefined();
    expect(index.syncs).toEqual({ ...before, watcher: before.watcher + 1 });
    expect(tap.refusals.get('many events')).toBe(refused + 1);
    expect(await liveAnswers(engine)).toEqual(await scannedAnswers(repo.root));
    expect(await resumes()).toBe(true);

    // More than the queue holds: events are lost (libuv drops the overflow notice; the cookie's
    // own event may be lost too). The tap never vouches for this sync; parcel answers it.
    const delivered = tap.delivered;
    const files = Math.ceil(queue / 2) + 2_000;
    burst(files, queue);
    before = { ...index.syncs };
    await index.sync();
    expect(index.syncs.tap).toBe(before.tap);
    expect(tap.delivered - delivered).toBeLessThan(2 * files); // some were lost indeed
    expect(await liveAnswers(engine)).toEqual(await scannedAnswers(repo.root));
    expect(await resumes()).toBe(true);
  }, 60_000);

  it('stays out of the way past its watch limit, and closing releases every watch', async () => {
    const baseline = inotifyWatches();
    const repo = await makeTempRepo(TREE);
    cleanups.push(() => repo.cleanup());
    for (let n = 0; n < 10; n++)
      mkdirSync(path.join(repo.root, `src/many/d${n}`), { recursive: true });
    const { engine, watcher, index, tap } = await watchedWithTap(repo, cleanups, {
      tapMaxDirectories: 8,
    });
    expect(tap.failure).toBe('over 8 directories');
    expect(tap.watchedCount).toBe(0);
    await writeFiles(repo.root, { 'src/a.ts': 'after the limit\n' });
    expect(await liveAnswers(engine)).toEqual(await scannedAnswers(repo.root));
    await index.sync();
    expect(index.syncs.tap).toBe(0);
    expect(tap.mark()).toBeUndefined();
    expect(tap.refusal()).toBe('failed');
    await watcher.close();
    expect(inotifyWatches()).toBe(baseline);
  });

  it('follows directories renamed and removed, and closing releases every watch', async () => {
    const baseline = inotifyWatches();
    const repo = await makeTempRepo(TREE);
    cleanups.push(() => repo.cleanup());
    const { engine, watcher, tap } = await watchedWithTap(repo, cleanups);
    const watching = tap.watchedCount;
    expect(inotifyWatches()).toBeGreaterThan(baseline + watching); // parcel's, and the tap's
    await rename(path.join(repo.root, 'src/sub'), path.join(repo.root, 'src/moved'));
    await writeFile(path.join(repo.root, 'src/moved/deep/d.ts'), 'edited after the move\n');
    expect(await liveAnswers(engine)).toEqual(await scannedAnswers(repo.root));
    // Two watches closed (src/sub, src/sub/deep), two added (src/moved, src/moved/deep).
    await waitUntil(() => tap.refusals.size >= 0 && tap.mark() !== undefined, 10_000, 'walked');
    expect(tap.watchedCount).toBe(watching);
    await rm(path.join(repo.root, 'src/moved'), { recursive: true });
    expect(await liveAnswers(engine)).toEqual(await scannedAnswers(repo.root));
    await waitUntil(() => tap.watchedCount === watching - 2, 10_000, 'watches of removed closed');
    await watcher.close();
    expect(tap.watchedCount).toBe(0);
    expect(inotifyWatches()).toBe(baseline);
  });
});
