// The lines of a spec's nodes that findings point to, taken from the one parse that loads the spec
// (spec-loader.ts: on a worker thread for a big spec, in a slice of the event loop for a small
// one) and kept as a small table, so that no finding ever parses a spec again and no YAML document
// outlives its parse. The table holds the line of each node a check, lint or score finding may name
// (ANCHORS below): top-level keys, artifact globs, `$ref`s, behaviors and their `tested_by` paths,
// decisions. lineAt() answers like a lookup in the document: the node's line, or its closest
// ancestor's that is in the table.
import { isMap, isScalar, isSeq } from 'yaml';
import type { Document, LineCounter } from 'yaml';

/** Path of a node (map keys, sequence indexes) -> its 1-based line. Plain data (crosses threads). */
export type SpecLineTable = ReadonlyMap<string, number>;

type Key = string | number;

/** Which nodes get a line: map keys (`*`: any key), `#`: every item of a sequence. */
interface Anchor {
  readonly [key: string]: Anchor | true;
}
const REF_ITEMS: Anchor = { '#': { $ref: true } };
const ANCHORS: Anchor = {
  '*': true,
  artifacts: { '*': { '#': { path: true } } },
  subsystems: REF_ITEMS,
  applies: REF_ITEMS,
  dependencies: REF_ITEMS,
  behaviors: { '#': { tested_by: { '#': { path: true } } } },
  decisions: { '#': true },
};

const tableKey = (keys: readonly Key[]): string => keys.join('\0');

/** The table of a parsed spec (its `lineCounter` was given to the parse). */
export function specLineTable(doc: Document, lineCounter: LineCounter): Map<string, number> {
  const table = new Map<string, number>();
  const visit = (node: unknown, keys: Key[], anchor: Anchor | true): void => {
    const offset = (node as { range?: number[] } | null)?.range?.[0];
    if (keys.length > 0 && typeof offset === 'number') {
      const key = tableKey(keys);
      // The first of duplicate keys, as Document.getIn finds it.
      if (!table.has(key)) table.set(key, lineCounter.linePos(offset).line);
    }
    if (anchor === true) return;
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isScalar(pair.key) || typeof pair.key.value !== 'string') continue;
        const name = pair.key.value;
        const next = Object.hasOwn(anchor, name) ? anchor[name] : anchor['*'];
        if (next !== undefined) visit(pair.value, [...keys, name], next);
      }
    } else if (isSeq(node)) {
      const next = anchor['#'];
      if (next !== undefined)
        node.items.forEach((item, index) => visit(item, [...keys, index], next));
    }
  };
  visit(doc.contents, [], ANCHORS);
  return table;
}

/** The line of the node at `keys`, or of its closest ancestor in the table; null: none. */
export function lineAt(table: SpecLineTable | null, keys: readonly Key[]): number | null {
  if (table === null) return null;
  for (let depth = keys.length; depth > 0; depth--) {
    const line = table.get(tableKey(keys.slice(0, depth)));
    if (line !== undefined) return line;
  }
  return null;
}
