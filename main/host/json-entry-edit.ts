// Sets `<key>.<name>` in the text of a JSON config file while keeping every other byte: the other
// entries keep their own formatting (one-line objects, odd spacing, key order), and only the span of
// Grove's own entry — or the place it is inserted — changes. The file is located with jsonc-parser's
// syntax tree (a well-kept parser that reports offsets); the new text is indented like the file
// (its indentation unit and line ending are detected). Pure: no I/O.
import { findNodeAtLocation, parseTree, type Node } from 'jsonc-parser';

export interface JsonEntryEdit {
  /** The whole new text. */
  text: string;
  /** True when the file already held exactly this entry (nothing to write). */
  unchanged: boolean;
}

/** How many times an object node holds the property `name` (JSON.parse keeps the last). */
function propertyCount(object: Node | undefined, name: string): number {
  if (object?.type !== 'object') return 0;
  return (object.children ?? []).filter((property) => property.children?.[0]?.value === name)
    .length;
}

/**
 * The first of `key` (at the top) or `<key>.<name>` that the text holds more than once, or
 * undefined. With duplicates, the edit would land on the first while JSON.parse (and so every
 * client) reads the last: a committed file could keep its own entry in force behind Grove's.
 */
export function duplicateOnEntryPath(text: string, key: string, name: string): string | undefined {
  const root = parseTree(text);
  if (propertyCount(root, key) > 1) return key;
  const servers = root ? findNodeAtLocation(root, [key]) : undefined;
  if (propertyCount(servers, name) > 1) return `${key}.${name}`;
  return undefined;
}

/**
 * The text with `<key>.<name>` set to `entry`. `text` must be a JSON object (the caller validated
 * it with JSON.parse, BOM removed); an empty text becomes a new file.
 */
export function setJsonEntry(
  text: string,
  key: string,
  name: string,
  entry: Record<string, unknown>,
): JsonEntryEdit {
  if (text.trim() === '') {
    return { text: `${JSON.stringify({ [key]: { [name]: entry } }, null, 2)}\n`, unchanged: false };
  }
  const root = parseTree(text);
  if (!root || root.type !== 'object') throw new Error('setJsonEntry needs a JSON object');
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const unit = indentUnit(text);

  const servers = findNodeAtLocation(root, [key]);
  if (servers) {
    const existing = findNodeAtLocation(servers, [name]);
    if (existing) {
      const property = existing.parent!;
      const indent = lineIndent(text, property.offset);
      const value = stringify(entry, unit, indent, eol);
      const current = text.slice(existing.offset, existing.offset + existing.length);
      if (sameJson(current, entry)) return { text, unchanged: true };
      return { text: splice(text, existing.offset, existing.length, value), unchanged: false };
    }
    return { text: insertProperty(text, servers, name, entry, unit, eol), unchanged: false };
  }
  return { text: insertProperty(text, root, key, { [name]: entry }, unit, eol), unchanged: false };
}

/** Inserts `"name": value` as the last property of `object`, on a line of its own. */
function insertProperty(
  text: string,
  object: Node,
  name: string,
  value: unknown,
  unit: string,
  eol: string,
): string {
  const objectIndent = lineIndent(text, object.offset);
  const properties = object.children ?? [];
  const last = properties.at(-1);
  if (!last) {
    // `{}` (with anything between the braces but no property): replaced whole.
    const inner = objectIndent + unit;
    const body = `"${escapeKey(name)}": ${stringify(value, unit, inner, eol)}`;
    return splice(
      text,
      object.offset,
      object.length,
      `{${eol}${inner}${body}${eol}${objectIndent}}`,
    );
  }
  // Indented like the last property when it starts its own line, else one unit deeper than the
  // object's line.
  const lastStartsLine = /^\s*$/.test(text.slice(lineStart(text, last.offset), last.offset));
  const indent = lastStartsLine ? lineIndent(text, last.offset) : objectIndent + unit;
  const body = `"${escapeKey(name)}": ${stringify(value, unit, indent, eol)}`;
  const end = last.offset + last.length;
  return splice(text, end, 0, `,${eol}${indent}${body}`);
}

/** JSON.stringify with the file's unit, every line after the first indented by `indent`. */
function stringify(value: unknown, unit: string, indent: string, eol: string): string {
  return JSON.stringify(value, null, unit).split('\n').join(`${eol}${indent}`);
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** The file's indentation unit: the leading whitespace of its first indented line (2 spaces). */
function indentUnit(text: string): string {
  const match = /\r?\n([ \t]+)\S/.exec(text);
  return match ? match[1]! : '  ';
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function lineIndent(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset)))![0];
}

function splice(text: string, offset: number, length: number, content: string): string {
  return text.slice(0, offset) + content + text.slice(offset + length);
}

function escapeKey(key: string): string {
  return JSON.stringify(key).slice(1, -1);
}
