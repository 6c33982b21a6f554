// The watcher against a real repository: the first state on start, a new one when a governed file
// changes, when git's refs move (a commit) and when the base changes; spec edits reported; a
// recomputation due while a client's call runs waits for the call. In a real process, watching
// leaves no zombie child behind, at start or when it subscribes again.
import { spawn } from 'node:child_process';
import { truncate } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, expect, it } from 'vitest';
import type { ReconcileState } from '../../shared/reconcile.ts';
import { zombieChildren } from '../testing/child-processes.ts';
import { waitUntil } from '../testing/mcp-clients.ts';
import { git, makeTempRepo, writeFiles } from '../testing/temp-repo.ts';
import { WorkerPool } from '../platform/worker-pool.ts';
import { ReconcileEngine } from './reconcile-engine.ts';
import { ReconcileWatcher, watcherBackend } from './reconcile-watcher.ts';
import type { SpecChanges } from './reconcile-watcher.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SPEC =
  "schema_version: '0.8'\nintent: App.\ntier: registered\nartifacts:\n  code:\n    - path: src/**\n";

it('keeps the state current as files, refs, specs and the base change', async () => {
  const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SPEC, 'src/a.ts': 'a\n' });
  cleanups.push(() => repo.cleanup());
  await git(repo.root, 'checkout', '-q', '-b', 'feature');
  const engine = new ReconcileEngine({ root: repo.root });
  cleanups.push(() => engine.close());
  const states: ReconcileState[] = [];
  const specChanges: SpecChanges[] = [];
  const watcher = new ReconcileWatcher({
    engine,
    base: 'main',
    debounceMs: 50,
    onState: (state) => states.push(state),
    onSpecsChanged: (changes) => specChanges.push(changes),
  });
  cleanups.push(() => watcher.close());
  await watcher.start();
  expect(states).toHaveLength(1);
  expect(states[0]?.specs[0]).toMatchObject({ path: '.notarai/app.spec.yaml', affected: false });

  const latest = (): ReconcileState | undefined => states.at(-1);
  await writeFiles(repo.root, { 'src/a.ts': 'edited\n' });
  await waitUntil(() => latest()?.specs[0]?.affected === true, 10_000, 'affected after an edit');

  await git(repo.root, 'commit', '-q', '-am', 'commit the edit');
  await git(repo.root, 'branch', '-f', 'main', 'HEAD');
  await waitUntil(
    () => latest()?.specs[0]?.affected === false,
    10_000,
    'not affected once main moved',
  );

  await writeFiles(repo.root, { '.notarai/app.spec.yaml': SPEC.replace('App.', 'App v2.') });
  await waitUntil(() => specChanges.length > 0, 10_000, 'spec change reported');
  expect(specChanges[0]?.updated.concat(specChanges[0].added)).toContain('.notarai/app.spec.yaml');
  await waitUntil(() => latest()?.specs[0]?.title === 'App v2.', 10_000, 'new title');

  watcher.setBase('HEAD~1');
  await waitUntil(() => latest()?.base === 'HEAD~1', 10_000, 'state for the new base');
  expect(latest()?.specs[0]?.affectedPaths).toContain('src/a.ts');
});

/**
 * A governed file is edited while a client's mark_reconciled hashes a 2 GB (sparse) file on the
 * worker pool, the event loop free meanwhile. When do the call end and the next state come?
 */
async function editDuringCall(callsFirstMaxWaitMs: number) {
  const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SPEC, 'src/a.ts': 'a\n' });
  cleanups.push(() => repo.cleanup());
  await git(repo.root, 'checkout', '-q', '-b', 'feature');
  await writeFiles(repo.root, { 'big.bin': '' });
  await truncate(path.join(repo.root, 'big.bin'), 2 * 1024 ** 3);
  const pool = new WorkerPool(new URL('../worktree/pool-worker.ts', import.meta.url), { size: 1 });
  cleanups.push(() => pool.close());
  const engine = new ReconcileEngine({ root: repo.root, pool });
  cleanups.push(() => engine.close());
  const stateTimes: number[] = [];
  const watcher = new ReconcileWatcher({
    engine,
    base: 'main',
    debounceMs: 20,
    callsFirstMaxWaitMs,
    onState: () => stateTimes.push(performance.now()),
  });
  cleanups.push(() => watcher.close());
  await watcher.start();
  const marking = engine.markReconciled(['big.bin']);
  const editedAt = performance.now();
  await writeFiles(repo.root, { 'src/a.ts': 'edited\n' });
  const result = await marking;
  const callEndedAt = performance.now();
  expect(result.updated).toBe(1);
  await waitUntil(() => stateTimes.length >= 2, 20_000, 'a state after the edit');
  return { callMs: callEndedAt - editedAt, stateAfterCallEnd: stateTimes[1]! - callEndedAt };
}

it("recomputes the window's state once a client's running call has ended", async () => {
  const { callMs, stateAfterCallEnd } = await editDuringCall(60_000);
  expect(callMs).toBeGreaterThan(300); // the call was running when the recomputation came due
  expect(stateAfterCallEnd).toBeGreaterThan(0);
});

it('waits for the call running when the recomputation came due, whatever the wait for later ones', async () => {
  const { callMs, stateAfterCallEnd } = await editDuringCall(0);
  expect(callMs).toBeGreaterThan(300);
  expect(stateAfterCallEnd).toBeGreaterThan(0);
});

it("computes the window's state beside a client's call only once the call has ended", async () => {
  const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SPEC, 'src/a.ts': 'a\n' });
  cleanups.push(() => repo.cleanup());
  await writeFiles(repo.root, { 'big.bin': '' });
  await truncate(path.join(repo.root, 'big.bin'), 2 * 1024 ** 3); // seconds of hashing
  const pool = new WorkerPool(new URL('../worktree/pool-worker.ts', import.meta.url), { size: 1 });
  cleanups.push(() => pool.close());
  const engine = new ReconcileEngine({ root: repo.root, pool });
  cleanups.push(() => engine.close());
  const order: string[] = [];
  const marking = engine.markReconciled(['big.bin']).then(() => order.push('mark'));
  // Background work (its loops' slices and its pool jobs) steps aside for the running call.
  const computing = engine.computeState('main').then(() => order.push('state'));
  await Promise.all([marking, computing]);
  expect(order).toEqual(['mark', 'state']);
});

/**
 * A process that watches `root` (GROVE_WATCH_ROOT), prints `watching` once the first state is
 * computed, and on each line from stdin stops watching and watches again (a re-subscribe: its
 * subscriptions all end, so the watcher's backend is created anew).
 */
const WATCHING_PROCESS = `
import { createInterface } from 'node:readline';
import { ReconcileEngine } from ${JSON.stringify(new URL('./reconcile-engine.ts', import.meta.url).href)};
import { ReconcileWatcher } from ${JSON.stringify(new URL('./reconcile-watcher.ts', import.meta.url).href)};
const engine = new ReconcileEngine({ root: process.env.GROVE_WATCH_ROOT });
const watch = async () => {
  const watcher = new ReconcileWatcher({ engine, base: 'main', onState: () => undefined });
  await watcher.start();
  console.log('watching');
  return watcher;
};
let watcher = await watch();
for await (const line of createInterface({ input: process.stdin })) {
  await watcher.close();
  watcher = await watch();
}
`;

it('pins the platform backend: inotify, FSEvents, Windows; the automatic choice elsewhere', () => {
  expect(watcherBackend('linux')).toBe('inotify');
  expect(watcherBackend('darwin')).toBe('fs-events');
  expect(watcherBackend('win32')).toBe('windows');
  expect(watcherBackend('freebsd')).toBeUndefined();
});

it.runIf(process.platform === 'linux')(
  'leaves no zombie child in its process, after start and after subscribing again',
  async () => {
    const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SPEC, 'src/a.ts': 'a\n' });
    cleanups.push(() => repo.cleanup());
    const child = spawn(process.execPath, ['--input-type=module', '-e', WATCHING_PROCESS], {
      env: { ...process.env, GROVE_WATCH_ROOT: repo.root },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    cleanups.push(() => void child.kill('SIGKILL'));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const watching = async (): Promise<void> => {
      const { value, done } = await lines.next();
      if (done) throw new Error('the watching process exited');
      expect(value).toBe('watching');
    };

    await watching();
    expect(await zombieChildren(child.pid!)).toEqual([]);
    for (let round = 0; round < 2; round++) {
      child.stdin.write('again\n');
      await watching();
    }
    expect(await zombieChildren(child.pid!)).toEqual([]);
  },
);
