// The lines of a spec's nodes that findings point to, taken from the one parse that loads the spec
// (spec-validate.ts, specLineTable: on a worker thread for a big spec, in a slice of the event loop
// for a small one; the CLI may take it from the last run's, validated-spec-store.ts) and kept as a
// small table, so that no finding ever parses a spec again and no YAML document
// outlives its parse. The table holds the line of each node a check, lint or score finding may name
// (ANCHORS in spec-validate.ts): top-level keys, artifact globs, `$ref`s, behaviors and their `tested_by` paths,
// decisions. lineAt() answers like a lookup in the document: the node's line, or its closest
// ancestor's that is in the table.

/** Path of a node (map keys, sequence indexes) -> its 1-based line. Plain data (crosses threads). */
export type SpecLineTable = ReadonlyMap<string, number>;

type Key = string | number;

/** A node's path as the table's key. */
export const tableKey = (keys: readonly Key[]): string => keys.join('\0');

/** The line of the node at `keys`, or of its closest ancestor in the table; null: none. */
export function lineAt(table: SpecLineTable | null, keys: readonly Key[]): number | null {
  if (table === null) return null;
  for (let depth = keys.length; depth > 0; depth--) {
    const line = table.get(tableKey(keys.slice(0, depth)));
    if (line !== undefined) return line;
  }
  return null;
}
