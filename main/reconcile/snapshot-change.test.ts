// snapshot_state's dry run as the window's Snapshot dialog shows it: the counts add up (this
// machine's rows plus the committed ones kept = files plus specs), the change to the JSON file is
// said before anything is written, and cli_version is never lowered (a newer NotarAI wrote it).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempRepo } from '../testing/temp-repo.ts';
import { GROVE_VERSION } from '../platform/version.ts';
import { ReconcileEngine, STATE_FILE } from './reconcile-engine.ts';
import { cliVersionToWrite } from './floor/state-file.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const HASH = 'a'.repeat(64);

async function setup(cliVersion: string): Promise<{ root: string; engine: ReconcileEngine }> {
  const repo = await makeTempRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', '.notarai/.keep': '' });
  cleanups.push(() => repo.cleanup());
  const state = {
    schema_version: '1',
    cli_version: cliVersion,
    last_reconciliation: { timestamp: '1700000000Z', git_hash: null, branch: 'main' },
    file_fingerprints: { 'b.txt': { blake3: HASH }, 'old.txt': { blake3: HASH } },
    spec_fingerprints: {},
  };
  await writeFile(path.join(repo.root, STATE_FILE), JSON.stringify(state));
  const engine = new ReconcileEngine({ root: repo.root, now: () => 1_800_000_000_000 });
  cleanups.push(() => engine.close());
  return { root: repo.root, engine };
}

describe('snapshot_state dry run', () => {
  it('says what the write changes, with counts that add up, and keeps a higher cli_version', async () => {
    const { root, engine } = await setup('99.0.0');
    await engine.markReconciled(['a.txt', 'b.txt']);
    const before = await readFile(path.join(root, STATE_FILE), 'utf8');
    const keep = await engine.snapshotState({ keepCommitted: true, dryRun: true });
    expect(await readFile(path.join(root, STATE_FILE), 'utf8')).toBe(before); // nothing written
    expect(keep.files + keep.specs).toBe(
      (keep.cache_fingerprints ?? 0) + (keep.kept_committed ?? 0),
    );
    expect(keep).toMatchObject({ files: 3, cache_fingerprints: 2, kept_committed: 1 });
    expect(keep.cli_version).toBe('99.0.0');
    expect(keep.change?.fields.map((field) => field.field)).toEqual([
      'last_reconciliation.timestamp',
      'last_reconciliation.git_hash',
    ]);
    // a.txt is new; b.txt's hash differs from the committed one; old.txt is kept.
    expect(keep.change).toMatchObject({ added: 1, changed: 1, removed: 0 });
    expect(keep.change?.sample).toEqual([
      { path: 'a.txt', change: 'added' },
      { path: 'b.txt', change: 'changed' },
    ]);
    const cacheOnly = await engine.snapshotState({ keepCommitted: false, dryRun: true });
    expect(cacheOnly.change).toMatchObject({ added: 1, changed: 1, removed: 1 });

    await engine.snapshotState();
    const written = JSON.parse(await readFile(path.join(root, STATE_FILE), 'utf8')) as {
      cli_version: string;
    };
    expect(written.cli_version).toBe('99.0.0');
  });

  it('writes Grove’s version over a lower one', async () => {
    const { root, engine } = await setup('0.0.1');
    await engine.snapshotState();
    const written = JSON.parse(await readFile(path.join(root, STATE_FILE), 'utf8')) as {
      cli_version: string;
    };
    expect(written.cli_version).toBe(GROVE_VERSION);
  });

  it('compares versions part by part', () => {
    expect(cliVersionToWrite('0.10.0', '0.9.9')).toBe('0.10.0');
    expect(cliVersionToWrite('0.7.2', '0.7.2')).toBe('0.7.2');
    expect(cliVersionToWrite('0.7', '0.7.1')).toBe('0.7.1');
    expect(cliVersionToWrite('not a version', '0.1.0')).toBe('0.1.0');
    expect(cliVersionToWrite(null, '0.1.0')).toBe('0.1.0');
  });
});
