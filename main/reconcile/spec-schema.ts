// The NotarAI spec format (schema versions 0.5 to 0.8) as a zod schema: what a
// `.notarai/**/*.spec.yaml` file may contain. Top level is closed (unknown keys are errors),
// `schema_version` must be a quoted string, `behaviors` is required unless `tier` is `registered`
// or `derived`. Nested blocks of the non-software domains are checked for their type only, so a
// spec written for a newer minor keeps loading. Issues carry the YAML path of the offending node;
// spec-loader.ts turns that into a line number.
import { z } from 'zod';

export const SCHEMA_VERSIONS = ['0.5', '0.6', '0.7', '0.8'] as const;

const text = z.string();
const textList = z.array(z.string());

const artifactRef = z.strictObject({
  path: z.string().min(1, 'artifact path (a glob) must not be empty'),
  role: text.optional(),
  source: text.optional(),
  tier: z.union([z.number().int(), z.string()]).optional(),
});

const specRef = z.strictObject({ $ref: z.string() });
const dependencyRef = z.looseObject({ $ref: z.string(), relationship: text.optional() });

const behavior = z.strictObject({
  name: text,
  given: text,
  then: text,
  interaction: z.record(z.string(), z.unknown()).optional(),
  state_transition: z.record(z.string(), z.unknown()).optional(),
  tested_by: z.union([text, textList]).optional(),
});

const decision = z.looseObject({
  date: text,
  choice: text,
  rationale: text.optional(),
});

const block = z.record(z.string(), z.unknown());

export const SpecSchema = z
  .strictObject({
    schema_version: z.enum(SCHEMA_VERSIONS, {
      error: (issue) =>
        typeof issue.input === 'number'
          ? `schema_version must be a quoted string ('${String(issue.input)}'), not a number`
          : `schema_version must be one of ${SCHEMA_VERSIONS.map((v) => `'${v}'`).join(', ')}`,
    }),
    intent: text,
    artifacts: z.record(z.string(), z.array(artifactRef)),
    domain: text.optional(),
    tier: z.enum(['full', 'registered', 'derived']).optional(),
    behaviors: z.array(behavior).min(1, 'behaviors needs at least one item').optional(),
    constraints: textList.optional(),
    invariants: textList.optional(),
    decisions: z.array(decision).optional(),
    open_questions: z.array(z.unknown()).optional(),
    subsystems: z.array(specRef).optional(),
    applies: z.array(specRef).optional(),
    dependencies: z.array(dependencyRef).optional(),
    exclude: textList.optional(),
    coverage: block.optional(),
    notes: text.optional(),
    output: block.optional(),
    content: block.optional(),
    states: block.optional(),
    design: block.optional(),
    audience: block.optional(),
    variants: z.array(z.unknown()).optional(),
    pipeline: block.optional(),
    feedback: block.optional(),
    compliance: block.optional(),
  })
  .superRefine((spec, ctx) => {
    const light = spec.tier === 'registered' || spec.tier === 'derived';
    if (!light && spec.behaviors === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `behaviors is required unless tier is 'registered' or 'derived' (tier is ${
          spec.tier === undefined ? 'not set, so full' : `'${spec.tier}'`
        })`,
      });
    }
  });

export type Spec = z.infer<typeof SpecSchema>;
