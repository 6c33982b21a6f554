// The flags of `grove check`, `grove score` and `grove export-context` (NotarAI 0.7's, with
// Grove's additions), as node:util parseArgs takes them: one definition for the commands
// (notarai-commands.ts) and for the pool's warm-up before they load (pool-warm-up.ts).
import type { ParseArgsOptionsConfig } from 'node:util';

export const CHECK_OPTIONS = {
  format: { type: 'string', default: 'human' },
  strict: { type: 'boolean', default: false },
  'with-snapshot': { type: 'boolean', default: false },
  // NotarAI accepts --base-branch for check and does not use it; so does Grove.
  'base-branch': { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

export const SCORE_OPTIONS = {
  format: { type: 'string', default: 'human' },
  spec: { type: 'string' },
  'with-snapshot': { type: 'boolean', default: false },
} as const satisfies ParseArgsOptionsConfig;

export const EXPORT_OPTIONS = {
  spec: { type: 'string' },
  all: { type: 'boolean', default: false },
  bootstrap: { type: 'boolean', default: false },
  'base-branch': { type: 'string', default: 'main' },
  format: { type: 'string', default: 'markdown' },
} as const satisfies ParseArgsOptionsConfig;
