// Deterministic JSON for tool results: object keys sorted by their UTF-8 bytes (NotarAI's order)
// at every level, no whitespace. The text a model reads is then stable across runs and engines.
import { compareUtf8 } from '../platform/path-order.ts';

/** Like JSON.stringify(value), but with every object's keys in sorted order. */
export function stableStringify(value: unknown): string {
  return serialize(value, new Set()) ?? 'null';
}

function serialize(input: unknown, ancestors: Set<object>): string | undefined {
  let value = input;
  if (value !== null && typeof value === 'object' && hasToJson(value)) value = value.toJSON();
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (ancestors.has(object)) throw new TypeError('Converting circular structure to JSON');
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      // Lists of paths (20,000 `skipped` entries) have no keys to sort: the native writer is ~5x
      // faster than one call per item.
      if (object.every((item: unknown) => typeof item === 'string')) return JSON.stringify(object);
      return `[${object.map((item: unknown) => serialize(item, ancestors) ?? 'null').join(',')}]`;
    }
    const record = object as Record<string, unknown>;
    const parts: string[] = [];
    // Keys in UTF-8 byte order, as NotarAI's serde_json writes its maps.
    for (const key of Object.keys(record).sort(compareUtf8)) {
      const item = serialize(record[key], ancestors);
      if (item !== undefined) parts.push(`${JSON.stringify(key)}:${item}`);
    }
    return `{${parts.join(',')}}`;
  } finally {
    ancestors.delete(object);
  }
}

function hasToJson(value: object): value is { toJSON(): unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}
