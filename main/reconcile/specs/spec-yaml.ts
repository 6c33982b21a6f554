// A spec's YAML parsed once, for the loader (spec-loader.ts) and the decision edit
// (decisions-spec-edit.ts), with the `yaml` package's duplicate-key check done in linear time.
// The package's own check (`uniqueKeys: true`) compares each key with every earlier key of its
// mapping: a 692 KiB spec of one 60,000-key mapping took over the loader's 20 s worker deadline
// (reported as a spec that does not parse, tried again at every load) and `grove decisions accept`
// on a 477 KB one 148 s. Here the same rule — a key equal to an earlier one of its mapping: both
// scalars with the same value — is checked with one Set per mapping, and a duplicate is the
// package's error (code DUPLICATE_KEY, same words and position).
import { isScalar, LineCounter, parseDocument, visit, YAMLParseError } from 'yaml';
import type { Document, ParseOptions, DocumentOptions, SchemaOptions } from 'yaml';

type Options = ParseOptions & DocumentOptions & SchemaOptions;

/** `parseDocument(text, { ...options, uniqueKeys: true })`, in time linear in the keys. */
export function parseSpecYaml(text: string, options: Options = {}): Document {
  const lineCounter = options.lineCounter ?? new LineCounter();
  const doc = parseDocument(text, { ...options, lineCounter, uniqueKeys: false });
  const duplicates: YAMLParseError[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = pair.key;
        if (!isScalar(key)) continue; // the package compares scalars by value, others never equal
        const value = key.value;
        if (typeof value === 'number' && Number.isNaN(value)) continue; // NaN !== NaN
        if (!seen.has(value)) {
          seen.add(value);
          continue;
        }
        const offset = key.range?.[0] ?? 0;
        const error = new YAMLParseError([offset, offset + 1], 'DUPLICATE_KEY', '');
        const at = lineCounter.linePos(offset);
        error.linePos = [at, lineCounter.linePos(offset + 1)];
        error.message =
          options.prettyErrors === false
            ? 'Map keys must be unique'
            : `Map keys must be unique at line ${at.line}, column ${at.col}:`;
        duplicates.push(error);
      }
    },
  });
  if (duplicates.length > 0) {
    doc.errors.push(...duplicates);
    doc.errors.sort((a, b) => a.pos[0] - b.pos[0]);
  }
  return doc;
}
