// JSON as NotarAI's CLI prints it (serde_json's `to_string_pretty` of a `json!` value): two-space
// indentation, object keys in alphabetical order at every level, and numbers that are floats in
// Rust (scores) written with a fraction (`1.0`, `0.0`), so a script comparing `notarai score
// --format json` with `grove score --format json` sees the same text.

import { compareUtf8 } from '../platform/path-order.ts';

/** Marks a number NotarAI prints as an f64 (always with a fraction). */
export class Float {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

export type NotaraiJson =
  | string
  | number
  | boolean
  | null
  | Float
  | readonly NotaraiJson[]
  | { readonly [key: string]: NotaraiJson };

function floatText(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  const text = JSON.stringify(value);
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

/** Key lists already sorted, by the keys in their own order (a report's objects share a few). */
const sortedByShape = new Map<string, readonly string[]>();
const MAX_SHAPES = 256;

/** serde_json's map is a BTreeMap<String, _>: keys in UTF-8 byte order. */
function sortedKeys(record: object): readonly string[] {
  const keys = Object.keys(record);
  const shape = JSON.stringify(keys); // unambiguous, whatever the keys hold
  let sorted = sortedByShape.get(shape);
  if (sorted === undefined) {
    sorted = keys.sort(compareUtf8);
    if (sortedByShape.size < MAX_SHAPES) sortedByShape.set(shape, sorted);
  }
  return sorted;
}

/** serde_json's pretty printer on a BTreeMap-backed value. */
export function notaraiJson(value: NotaraiJson, indent = ''): string {
  if (value instanceof Float) return floatText(value.value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    const items = value as readonly NotaraiJson[];
    if (items.length === 0) return '[]';
    return `[\n${items.map((item) => inner + notaraiJson(item, inner)).join(',\n')}\n${indent}]`;
  }
  const record = value as { readonly [key: string]: NotaraiJson };
  const keys = sortedKeys(record);
  if (keys.length === 0) return '{}';
  return `{\n${keys
    .map(
      (key) => `${inner}${JSON.stringify(key)}: ${notaraiJson(record[key] as NotaraiJson, inner)}`,
    )
    .join(',\n')}\n${indent}}`;
}
