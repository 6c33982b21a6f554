// The parse of one NotarAI project config (`.notarai/check.yaml`, `lint.yaml`, `scoring.yaml`,
// `decision-log.json`), bounded whatever the text: nesting deeper than MAX_CONFIG_DEPTH is refused
// by a linear scan before the parser sees it (the `yaml` parser recurses: 1 MiB of `[` took it
// 16 s and ~750 MB before it overflowed its stack), aliases are capped, and the value handed back
// keeps only the levels a config is read at (CONFIG_VALUE_DEPTH). Pure and synchronous: it runs on
// a worker thread for a big text (job kind `config-parse`, main/worktree/pool-worker.ts), on the
// main thread for a small one (notarai-configs.ts decides, and caches the outcome by content).
import { parse as parseYaml } from 'yaml';

export type ConfigFormat = 'yaml' | 'json';

/** Levels of nesting (block indentation, flow brackets, compact `- ` items) a config may use. */
export const MAX_CONFIG_DEPTH = 64;
/** Levels of the parsed value kept: `rules.L006.decision_age_days` is the deepest read. */
export const CONFIG_VALUE_DEPTH = 3;

export type ConfigOutcome = { ok: true; value: unknown } | { ok: false; message: string };

/** A config's text as the small value its reader needs, or why it is not valid. Never throws. */
export function parseConfigText(text: string, format: ConfigFormat): ConfigOutcome {
  try {
    if (format === 'yaml' && nestedDeeperThan(text, MAX_CONFIG_DEPTH)) {
      return { ok: false, message: `nested deeper than ${MAX_CONFIG_DEPTH} levels` };
    }
    const value: unknown =
      format === 'json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
    return { ok: true, value: prune(value, CONFIG_VALUE_DEPTH) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, message: message.split('\n')[0] ?? message };
  }
}

/** The value down to `depth` levels below it; collections deeper are null (no reader looks). */
function prune(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth === 0) return null;
  if (Array.isArray(value)) return value.map((item) => prune(item, depth - 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = prune(item, depth - 1);
  return out;
}

/**
 * True when YAML text nests deeper than `limit`, by a scan that never looks back: block levels
 * (an indentation stack), compact `- ` items on one line, and open flow brackets outside quotes
 * and comments. An over-estimate only for text no config holds (brackets inside a multi-line plain
 * scalar); a quote inside a plain scalar can hide brackets from it, which the parse's deadline and
 * the size cap still bound.
 */
export function nestedDeeperThan(text: string, limit: number): boolean {
  const indents: number[] = [];
  let flow = 0;
  let quote: '"' | "'" | null = null;
  for (const line of text.split('\n')) {
    let at = 0;
    if (quote === null && flow === 0) {
      while (line[at] === ' ') at++;
      const rest = line.slice(at).trimEnd();
      if (rest === '' || rest.startsWith('#')) continue;
      while (indents.length > 0 && (indents.at(-1) as number) > at) indents.pop();
      if (indents.length === 0 || (indents.at(-1) as number) < at) indents.push(at);
      // `- - - x`: each dash opens a level of its own.
      let compact = 0;
      while (
        (line[at] === '-' || line[at] === '?') &&
        (line[at + 1] === ' ' || at + 1 === line.length)
      ) {
        compact++;
        at += 2;
        while (line[at] === ' ') at++;
      }
      if (indents.length - 1 + compact > limit) return true;
    }
    for (; at < line.length; at++) {
      const char = line[at];
      if (quote !== null) {
        if (quote === '"' && char === '\\') at++;
        else if (char === quote) {
          if (quote === "'" && line[at + 1] === "'") at++;
          else quote = null;
        }
        continue;
      }
      const before = at === 0 ? ' ' : line[at - 1];
      const tokenStart =
        before === ' ' ||
        before === '\t' ||
        before === '[' ||
        before === '{' ||
        before === ',' ||
        before === ':';
      if (char === '#' && (before === ' ' || before === '\t' || at === 0)) break;
      if ((char === '"' || char === "'") && tokenStart) quote = char;
      else if (char === '[' || char === '{') {
        flow++;
        if (Math.max(0, indents.length - 1) + flow > limit) return true;
      } else if ((char === ']' || char === '}') && flow > 0) flow--;
    }
  }
  return false;
}
