// The order NotarAI's lists and maps are in: Rust compares strings by their UTF-8 bytes (a
// `BTreeMap<String, _>`, `Vec<String>::sort`, serde_json's sorted object keys), which is Unicode
// code point order. JavaScript's default sort compares UTF-16 code units instead, and the two
// disagree when a character beyond the Basic Multilingual Plane (an emoji, U+1F600, stored as a
// surrogate pair starting 0xD83D) meets one between U+E000 and U+FFFF (U+FF01, a full-width "!"):
// JavaScript puts the emoji first, Rust (and git, which also sorts paths by bytes) puts it last.

/**
 * Compares two strings in UTF-8 byte order (= code point order), as Rust and git do. Equal
 * prefixes are skipped code unit by code unit; at the first difference, surrogates (0xD800-0xDFFF,
 * halves of code points >= 0x10000) must sort after every other unit above them (0xE000-0xFFFF).
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const left = a.charCodeAt(index);
    const right = b.charCodeAt(index);
    if (left !== right) return codePointRank(left) - codePointRank(right);
  }
  return a.length - b.length;
}

/** Code units from which JavaScript's order of strings may differ from UTF-8 byte order. */
const MAY_ORDER_OTHERWISE = /[\ud800-\uffff]/;

/**
 * True if no code unit of `text` is at or above U+D800: then, for any two strings cut from it,
 * JavaScript's own comparison (`<`, native code) gives UTF-8 byte order, and compareCodeUnits may
 * stand in for compareUtf8 (a listing of 20,000 paths is tested once, in native code).
 */
export function ordersAsUtf8(text: string): boolean {
  return !MAY_ORDER_OTHERWISE.test(text);
}

/** JavaScript's order of strings (UTF-16 code units): UTF-8 order for text ordersAsUtf8 accepts. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A UTF-16 code unit moved so that plain numeric order becomes code point order. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

/** A new array of `items` sorted by UTF-8 bytes (see compareUtf8). */
export function sortedUtf8(items: Iterable<string>): string[] {
  return [...items].sort(compareUtf8);
}

/** Index of the first item of `sorted` (UTF-8 byte order) not below `item`: a binary search. */
export function lowerBoundUtf8(sorted: readonly string[], item: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareUtf8(sorted[middle] as string, item) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** True if `sorted` (UTF-8 byte order) holds `item`. */
export function hasSortedUtf8(sorted: readonly string[], item: string): boolean {
  return sorted[lowerBoundUtf8(sorted, item)] === item;
}
