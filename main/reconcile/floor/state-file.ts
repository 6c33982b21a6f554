// The committed state file, `.notarai/reconciliation_state.json` (written by snapshot_state, or by
// NotarAI's CLI): what was reconciled at the last snapshot, file by file. A fresh clone has no hash
// cache but may have this file, so the window's reconciliation state reads both: the cache's rows
// where it has them, the snapshot's fingerprints for the rest. The file is repository content, so
// it is read through the confined layer with a size cap and validated; a broken one is a warning.
import type { z } from 'zod';
import { readFileInsideRoot } from '../../platform/confined-fs.ts';
import type { ReconciledRow } from './hash-cache.ts';
import { NOTARAI_DIR } from '../specs/spec-paths.ts';

export const STATE_FILE = `${NOTARAI_DIR}/reconciliation_state.json`;

/** A state file bigger than this is not read (200,000 fingerprints take about 20 MB). */
export const MAX_STATE_FILE_BYTES = 64 * 1024 * 1024;

/** The state file's schema, given the schema library (loaded only once a state file is read). */
function stateFileSchema(zod: typeof z) {
  const Blake3 = zod.string().regex(/^[0-9a-f]{64}$/);
  return zod.object({
    /** Anything: only a short string is used (cliVersionToWrite), never a reason to ignore the file. */
    cli_version: zod.unknown().optional(),
    last_reconciliation: zod
      .object({
        /** Unix seconds followed by `Z` (NotarAI's format). */
        timestamp: zod.string().regex(/^\d+Z$/),
        git_hash: zod.string().nullable().optional(),
        branch: zod.string().nullable().optional(),
      })
      .optional(),
    file_fingerprints: zod.record(zod.string(), zod.object({ blake3: Blake3 })).default({}),
    spec_fingerprints: zod.record(zod.string(), Blake3).default({}),
  });
}
let loadingSchema: Promise<ReturnType<typeof stateFileSchema>> | undefined;
const schema = () => (loadingSchema ??= import('zod').then(({ z: zod }) => stateFileSchema(zod)));

/** The last snapshot, as the window needs it. */
export interface CommittedSnapshot {
  /** Unix ms of the snapshot (null when the file does not say). */
  at: number | null;
  gitHash: string | null;
  branch: string | null;
  /** The version of the tool that wrote it (NotarAI's CLI or Grove), when it says. */
  cliVersion: string | null;
  /** Every file and spec fingerprinted, as cache rows dated at the snapshot. */
  rows: Map<string, ReconciledRow>;
}

/**
 * Reads the committed snapshot: undefined when there is none; a warning (never its content) when
 * it cannot be used.
 */
export async function readCommittedSnapshot(
  root: string,
): Promise<{ snapshot?: CommittedSnapshot; warning?: string }> {
  let text: string;
  try {
    text = (
      await readFileInsideRoot(root, STATE_FILE, { maxBytes: MAX_STATE_FILE_BYTES })
    ).toString('utf8');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message.startsWith('no such file or directory')) return {};
    return { warning: `the state file ${STATE_FILE} cannot be read: ${message}` };
  }
  const StateFileSchema = await schema();
  let parsed: z.infer<typeof StateFileSchema>;
  try {
    parsed = StateFileSchema.parse(JSON.parse(text));
  } catch {
    return { warning: `the state file ${STATE_FILE} is not a NotarAI state file; it is ignored` };
  }
  const seconds = parsed.last_reconciliation
    ? Number(parsed.last_reconciliation.timestamp.slice(0, -1))
    : null;
  const updatedAt = seconds ?? 0;
  const rows = new Map<string, ReconciledRow>();
  for (const [file, { blake3 }] of Object.entries(parsed.file_fingerprints)) {
    rows.set(file, { hash: blake3, updatedAt });
  }
  for (const [file, hash] of Object.entries(parsed.spec_fingerprints)) {
    rows.set(file, { hash, updatedAt });
  }
  return {
    snapshot: {
      at: seconds === null ? null : seconds * 1000,
      gitHash: parsed.last_reconciliation?.git_hash ?? null,
      branch: parsed.last_reconciliation?.branch ?? null,
      cliVersion:
        typeof parsed.cli_version === 'string' && parsed.cli_version.length <= 100
          ? parsed.cli_version
          : null,
      rows,
    },
  };
}

/**
 * What counts as reconciled for the window: the snapshot's fingerprints, overlaid by the hash
 * cache's rows (the cache is what this machine reconciled since).
 */
export function withSnapshot(
  cache: ReadonlyMap<string, ReconciledRow>,
  snapshot: CommittedSnapshot | undefined,
): ReadonlyMap<string, ReconciledRow> {
  if (!snapshot || snapshot.rows.size === 0) return cache;
  const merged = new Map(snapshot.rows);
  for (const [file, row] of cache) merged.set(file, row);
  return merged;
}

/**
 * The cli_version a snapshot writes: Grove's, unless the file holds a higher one (written by a
 * newer NotarAI CLI): a snapshot never lowers it. Dotted numbers compared part by part; a version
 * that is not dotted numbers is replaced.
 */
export function cliVersionToWrite(committed: string | null | undefined, grove: string): string {
  const parts = (version: string): number[] | null =>
    /^\d+(\.\d+)*/.test(version)
      ? /^[\d.]+/.exec(version)![0].split('.').filter(Boolean).map(Number)
      : null;
  const mine = parts(grove);
  const theirs = committed ? parts(committed) : null;
  if (!theirs || !mine) return grove;
  for (let index = 0; index < Math.max(mine.length, theirs.length); index++) {
    const a = theirs[index] ?? 0;
    const b = mine[index] ?? 0;
    if (a !== b) return a > b ? committed! : grove;
  }
  return grove;
}

/** What a snapshot changes in the state file (snapshot_state's dry run shows it first). */
export interface SnapshotChange {
  /** Top-level fields whose value changes (`cli_version`, `last_reconciliation.*`). */
  fields: { field: string; before: string | null; after: string | null }[];
  added: number;
  changed: number;
  removed: number;
  /** The first fingerprints changed, in path order. */
  sample: { path: string; change: 'added' | 'changed' | 'removed' }[];
}

/** Fingerprints named in SnapshotChange.sample. */
const CHANGE_SAMPLE = 20;

/** The change from the committed snapshot (none: everything is added) to `next`. */
export function snapshotChange(
  committed: CommittedSnapshot | undefined,
  next: {
    cliVersion: string;
    timestamp: string;
    gitHash: string | null;
    branch: string | null;
    rows: ReadonlyMap<string, { hash: string }>;
  },
): SnapshotChange {
  const fields: SnapshotChange['fields'] = [];
  const field = (name: string, before: string | null, after: string | null): void => {
    if (before !== after) fields.push({ field: name, before, after });
  };
  field('cli_version', committed?.cliVersion ?? null, next.cliVersion);
  field(
    'last_reconciliation.timestamp',
    committed?.at === null || committed?.at === undefined ? null : `${committed.at / 1000}Z`,
    next.timestamp,
  );
  field('last_reconciliation.git_hash', committed?.gitHash ?? null, next.gitHash);
  field('last_reconciliation.branch', committed?.branch ?? null, next.branch);
  const before = committed?.rows ?? new Map<string, ReconciledRow>();
  const changes: SnapshotChange['sample'] = [];
  let added = 0;
  let changed = 0;
  let removed = 0;
  for (const [file, row] of next.rows) {
    const old = before.get(file);
    if (!old) {
      added++;
      changes.push({ path: file, change: 'added' });
    } else if (old.hash !== row.hash) {
      changed++;
      changes.push({ path: file, change: 'changed' });
    }
  }
  for (const file of before.keys()) {
    if (!next.rows.has(file)) {
      removed++;
      changes.push({ path: file, change: 'removed' });
    }
  }
  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { fields, added, changed, removed, sample: changes.slice(0, CHANGE_SAMPLE) };
}
