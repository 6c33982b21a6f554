// NotarAI 0.7's project configs for check, lint and score: `.notarai/check.yaml`, `lint.yaml`,
// `scoring.yaml` and `decision-log.json`, read through the confined layer (a symlink out of the
// worktree, a FIFO, a device or a file over MAX_CONFIG_BYTES is refused without opening its
// target or blocking). As in NotarAI, a missing file gives the defaults; unlike NotarAI, an
// unreadable or invalid one also gives a warning naming it (NotarAI falls back silently).
// Each text is parsed once (its outcome cached by content: a worktree's state is worked out again
// at every change, and reads them each time), a big one on a worker thread with a deadline, and
// the parse itself is bounded (config-text.ts: nesting refused before parsing, value pruned).
import type { CheckTier, LintRule } from '../../../shared/notarai-check.ts';
import { CHECK_TIERS, LINT_RULES } from '../../../shared/notarai-check-constants.ts';
import { nodeCrypto } from '../../platform/builtins.ts';
import { readFileInsideRoot } from '../../platform/confined-fs.ts';
import { UserError } from '../../platform/errors.ts';
import { nextSlice } from '../../platform/time-slices.ts';
import { WorkersUnavailableError, workerPool } from '../../platform/worker-pool.ts';
import type { ConfigFormat, ConfigOutcome } from '../specs/config-text.ts';
import { NOTARAI_DIR } from '../specs/spec-paths.ts';

/** Configs are a few lines; anything bigger is refused (and the defaults used). */
export const MAX_CONFIG_BYTES = 1024 * 1024;
/** Configs up to this size are parsed on the main thread (well under a millisecond); others on a worker. */
export const MAIN_THREAD_CONFIG_BYTES = 8 * 1024;
/** A config whose parse takes longer than this on a worker is reported invalid (and cached so). */
export const CONFIG_PARSE_DEADLINE_MS = 5_000;
/** Outcomes kept, by content (four configs per worktree, a few versions each). */
export const CONFIG_CACHE_ENTRIES = 64;

export type LintSeverity = 'error' | 'warning' | 'info';

export interface CheckConfig {
  /** Findings of tiers less severe than this are dropped before anything is counted. */
  warnOn: CheckTier;
  /** Exit 1 iff a finding is at this tier or more severe; null: iff a finding is an error. */
  failOn: CheckTier | null;
}

export interface LintRuleConfig {
  enabled: boolean;
  severity: LintSeverity | null;
  decisionAgeDays: number | null;
}

export type LintConfig = ReadonlyMap<LintRule, LintRuleConfig>;

export interface ScoringConfig {
  files_changed: number;
  days_since_reconciliation: number;
  unresolved_decisions: number;
  orphaned_globs: number;
  open_questions: number;
  unspecced_files: number;
}

export const DEFAULT_SCORING: ScoringConfig = {
  files_changed: 0.3,
  days_since_reconciliation: 0.2,
  unresolved_decisions: 0.15,
  orphaned_globs: 0.15,
  open_questions: 0.1,
  unspecced_files: 0.1,
};

export interface DecisionProposal {
  spec_path: string;
  status: string;
}

/** Parse outcomes by format and text (SHA-256 of a big one), least recently used first. */
const outcomes = new Map<string, Promise<ConfigOutcome>>();
let parsesRun = 0;

/** How many config texts were parsed (not found in the cache) since the process started. */
export function configParsesRun(): number {
  return parsesRun;
}

/** The outcome of parsing `text`: from the cache, else on the main thread or a worker. */
function parsedOnce(text: string, format: ConfigFormat): Promise<ConfigOutcome> {
  // A small text is its own key (no hashing: node:crypto stays unloaded until a client calls).
  const small = Buffer.byteLength(text) <= MAIN_THREAD_CONFIG_BYTES;
  const key = `${format}:${small ? `=${text}` : nodeCrypto().createHash('sha256').update(text).digest('hex')}`;
  const known = outcomes.get(key);
  if (known) {
    outcomes.delete(key);
    outcomes.set(key, known);
    return known;
  }
  parsesRun++;
  const outcome = parseOffTheLoop(text, format, small);
  outcomes.set(key, outcome);
  while (outcomes.size > CONFIG_CACHE_ENTRIES)
    outcomes.delete(outcomes.keys().next().value as string);
  return outcome;
}

async function parseOffTheLoop(
  text: string,
  format: ConfigFormat,
  small: boolean,
): Promise<ConfigOutcome> {
  // The parser (the `yaml` package) loads only when a config is there to parse.
  const parseHere = async () =>
    (await import('../specs/config-text.ts')).parseConfigText(text, format);
  if (small) return parseHere();
  try {
    return await workerPool().run<ConfigOutcome>(
      'config-parse',
      { text, format },
      { deadlineMs: CONFIG_PARSE_DEADLINE_MS },
    );
  } catch (error) {
    if (error instanceof WorkersUnavailableError) {
      await nextSlice();
      return parseHere();
    }
    return {
      ok: false,
      message:
        error instanceof UserError && error.code === 'timed-out'
          ? `parsing it took longer than ${CONFIG_PARSE_DEADLINE_MS / 1000} s; Grove tries ` +
            'again once it changes'
          : error instanceof Error
            ? error.message
            : String(error),
    };
  }
}

/** A config read: its parsed value (undefined: missing or unusable) and its text (null: none). */
interface ConfigRead {
  value: unknown;
  text: string | null;
  /** Why it is unusable (cannot be read, not valid); null when fine or missing. */
  problem: string | null;
}

async function readConfigFile(
  root: string,
  name: string,
  format: ConfigFormat,
): Promise<ConfigRead> {
  const relative = `${NOTARAI_DIR}/${name}`;
  let text: string;
  try {
    text = (await readFileInsideRoot(root, relative, { maxBytes: MAX_CONFIG_BYTES })).toString(
      'utf8',
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const missing = message.startsWith('no such file or directory');
    return {
      value: undefined,
      text: null,
      problem: missing ? null : `${relative} cannot be read (${message})`,
    };
  }
  const outcome = await parsedOnce(text, format);
  if (outcome.ok) return { value: outcome.value, text, problem: null };
  return { value: undefined, text, problem: `${relative} is not valid (${outcome.message})` };
}

/** A config's parsed value (undefined: missing or unusable) and the warning why unusable. */
async function readConfig(
  root: string,
  name: string,
  format: ConfigFormat,
  warnings: string[],
): Promise<unknown> {
  const read = await readConfigFile(root, name, format);
  if (read.problem !== null) warnings.push(`${read.problem}; the defaults are used`);
  return read.value;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function tier(value: unknown): CheckTier | null {
  return typeof value === 'string' && (CHECK_TIERS as readonly string[]).includes(value)
    ? (value as CheckTier)
    : null;
}

/** `.notarai/check.yaml`: `warn_on` (default housekeeping) and `fail_on` (default none). */
export async function loadCheckConfig(root: string, warnings: string[]): Promise<CheckConfig> {
  const value = record(await readConfig(root, 'check.yaml', 'yaml', warnings));
  const config: CheckConfig = { warnOn: 'housekeeping', failOn: null };
  if (!value) return config;
  for (const key of ['warn_on', 'fail_on'] as const) {
    if (value[key] === undefined || value[key] === null) continue;
    const parsed = tier(value[key]);
    if (parsed === null) {
      warnings.push(
        `${NOTARAI_DIR}/check.yaml: ${key} must be one of ${CHECK_TIERS.join(', ')}, got ` +
          `${JSON.stringify(value[key])}; ignored`,
      );
    } else if (key === 'warn_on') config.warnOn = parsed;
    else config.failOn = parsed;
  }
  return config;
}

/** `.notarai/lint.yaml`: `rules: {L00x: {enabled, severity, decision_age_days}}`. */
export async function loadLintConfig(root: string, warnings: string[]): Promise<LintConfig> {
  const rules = new Map<LintRule, LintRuleConfig>();
  const value = record(record(await readConfig(root, 'lint.yaml', 'yaml', warnings))?.['rules']);
  if (!value) return rules;
  for (const [key, raw] of Object.entries(value)) {
    if (!(LINT_RULES as readonly string[]).includes(key)) continue;
    const entry = record(raw) ?? {};
    const severity = entry['severity'];
    const days = entry['decision_age_days'];
    rules.set(key as LintRule, {
      enabled: typeof entry['enabled'] === 'boolean' ? entry['enabled'] : true,
      severity:
        severity === 'error' || severity === 'warning' || severity === 'info' ? severity : null,
      decisionAgeDays:
        typeof days === 'number' && Number.isInteger(days) && days >= 0 ? days : null,
    });
  }
  return rules;
}

/** `.notarai/scoring.yaml`: the six weights (numbers; others keep their default). */
export async function loadScoringConfig(root: string, warnings: string[]): Promise<ScoringConfig> {
  const value = record(await readConfig(root, 'scoring.yaml', 'yaml', warnings));
  const config = { ...DEFAULT_SCORING };
  if (!value) return config;
  for (const key of Object.keys(config) as (keyof ScoringConfig)[]) {
    const weight = value[key];
    if (typeof weight === 'number' && Number.isFinite(weight)) config[key] = weight;
  }
  return config;
}

/** `.notarai/decision-log.json`'s proposals (spec_path and status of each). */
export async function loadDecisionLog(
  root: string,
  warnings: string[],
): Promise<DecisionProposal[]> {
  return decisionProposals(await readConfig(root, 'decision-log.json', 'json', warnings));
}

/** The decision log as the window's state counts it: what score counts, and a revision. */
export interface DecisionLogRead {
  proposals: DecisionProposal[];
  /** Changes whenever the log's text does; null when there is no log. */
  revision: string | null;
  problem: string | null;
}

/** `.notarai/decision-log.json` for the reconciliation state (parsed once per text, as score's). */
export async function readDecisionLogForState(root: string): Promise<DecisionLogRead> {
  const read = await readConfigFile(root, 'decision-log.json', 'json');
  return {
    proposals: decisionProposals(read.value),
    revision: read.text === null ? null : textRevision(read.text),
    problem: read.problem,
  };
}

/** A short fingerprint of a text: FNV-1a of a small one (no node:crypto), SHA-256 of a big one. */
function textRevision(text: string): string {
  if (text.length > MAIN_THREAD_CONFIG_BYTES) {
    return nodeCrypto().createHash('sha256').update(text).digest('hex');
  }
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${text.length}:${hash.toString(16)}`;
}

function decisionProposals(parsed: unknown): DecisionProposal[] {
  const value = record(parsed);
  const proposals = value?.['proposals'];
  if (!Array.isArray(proposals)) return [];
  const out: DecisionProposal[] = [];
  for (const item of proposals) {
    const entry = record(item);
    if (typeof entry?.['spec_path'] === 'string' && typeof entry['status'] === 'string') {
      out.push({ spec_path: entry['spec_path'], status: entry['status'] });
    }
  }
  return out;
}
