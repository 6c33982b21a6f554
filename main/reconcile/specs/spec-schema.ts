// The NotarAI spec format as zod schemas: what a `.notarai/**/*.spec.yaml` file may contain, checked
// the way NotarAI's own CLI checks it. NotarAI validates every spec against the one JSON Schema it
// bundles (src/core/validator.rs + schema.rs: `include_str!("../../notarai.spec.json")`), whose
// `schema_version` enum lists the versions that schema still reads: NotarAI 0.7.0 bundles schema
// 0.8 and accepts '0.5' to '0.8' with it (each minor only added optional keys). So does Grove:
// `Spec08Schema` is NotarAI's 0.8 schema, key for key and nested block for block.
//
// Schema 0.4 (NotarAI v0.1.x) is the one NotarAI released and later dropped: from v0.2.0 on
// `notarai validate` rejects `schema_version: '0.4'`, while `notarai mcp` (which never validates)
// keeps working on such specs. Grove accepts them, checked against NotarAI's 0.4 schema
// (`Spec04Schema`, which still has `sync_policy`), and reports the deprecation as a warning
// (spec-loader.ts). Every object NotarAI's schemas close (`additionalProperties: false`) is closed
// here, `format: date` is checked (NotarAI's validator checks formats for draft-07 schemas), and
// issues carry the YAML path of the offending node; spec-loader.ts turns that into a line number.
import { z } from 'zod';

/** Every schema version NotarAI shipped in a release (0.3 existed only before the first one). */
export const SCHEMA_VERSIONS = ['0.4', '0.5', '0.6', '0.7', '0.8'] as const;
/** The versions NotarAI's newest CLI validates, all against its bundled 0.8 schema. */
export const CURRENT_SCHEMA_VERSIONS = ['0.5', '0.6', '0.7', '0.8'] as const;
/** Versions NotarAI no longer validates: accepted with a warning, checked against their own schema. */
export const DEPRECATED_SCHEMA_VERSIONS = ['0.4'] as const;

/** Top-level keys per schema version, for messages about a key used in the wrong version. */
export const TOP_LEVEL_KEYS_SINCE: Readonly<Record<string, string>> = {
  output: '0.6',
  content: '0.6',
  states: '0.6',
  design: '0.6',
  audience: '0.6',
  variants: '0.6',
  pipeline: '0.6',
  feedback: '0.6',
  compliance: '0.7',
  variants_resolved: '0.7',
};
/** Top-level keys a later version removed. */
export const TOP_LEVEL_KEYS_UNTIL: Readonly<Record<string, string>> = { sync_policy: '0.4' };

const text = z.string();
const textList = z.array(z.string());
const textMap = z.record(z.string(), z.string());

/** JSON Schema's `format: date` (RFC 3339 full-date), as NotarAI's validator checks it. */
const isoDate = z.string().refine(isFullDate, {
  error: (issue) =>
    `must be a date written YYYY-MM-DD (format 'date'), got ${JSON.stringify(issue.input)}`,
});

function isFullDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

const versionEnum = <const T extends readonly [string, ...string[]]>(versions: T) =>
  z.enum(versions, {
    error: (issue) =>
      typeof issue.input === 'number'
        ? `schema_version must be a quoted string ('${String(issue.input)}'), not a number`
        : `schema_version must be one of ${SCHEMA_VERSIONS.map((v) => `'${v}'`).join(', ')}`,
  });

const specRef = z.strictObject({ $ref: text });
const dependencyRef = z.strictObject({ $ref: text, relationship: text });

/** Rules every version shares: `behaviors` is required unless the tier is a light one. */
function requireBehaviors(lightTiers: readonly string[], always: boolean) {
  return (spec: { tier?: string | undefined; behaviors?: unknown }, ctx: z.RefinementCtx) => {
    const light = spec.tier !== undefined && lightTiers.includes(spec.tier);
    if (spec.behaviors !== undefined || (light && !always)) return;
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: always
        ? "missing required key 'behaviors' (the 0.4 schema requires it for every tier)"
        : `behaviors is required unless tier is 'registered' or 'derived' (tier is ${
            spec.tier === undefined ? 'not set, so full' : `'${spec.tier}'`
          })`,
    });
  };
}

// ---- schema 0.8 (NotarAI 0.7.0's bundled schema; validates '0.5' to '0.8') --------------------

const artifactRef = z.strictObject({
  path: text,
  role: text.optional(),
  source: text.optional(),
  tier: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4)]).optional(),
});

const behavior = z.strictObject({
  name: text,
  given: text,
  then: text,
  interaction: z
    .strictObject({
      trigger: z
        .enum([
          'user_action',
          'timer',
          'system_event',
          'data_change',
          'schedule',
          'external_signal',
          'threshold',
          'manual',
          'lifecycle',
        ])
        .optional(),
      sequence: textList.optional(),
    })
    .optional(),
  tested_by: z.array(z.strictObject({ path: text, assertion: text.optional() })).optional(),
  state_transition: z.strictObject({ from: text, to: text }).optional(),
});

const decision = z.strictObject({
  date: isoDate,
  choice: text,
  rationale: text.optional(),
  origin: text.optional(),
  status: z.enum(['proposed', 'accepted', 'rejected']).optional(),
  related_files: textList.optional(),
});

const coverage = z.strictObject({
  policy: z.enum(['warn', 'strict', 'off']).optional(),
  message: text.optional(),
});

const duration = z.strictObject({ value: z.number(), unit: text });
const satisfiedBy = z.strictObject({
  invariants: textList.optional(),
  constraints: textList.optional(),
});

const contentSection = z.strictObject({
  id: text,
  type: text.optional(),
  intent: text.optional(),
  content_ref: text.optional(),
  artifacts: z.record(z.string(), textList).optional(),
  connections: z
    .array(z.strictObject({ to: text, label: text.optional(), condition: text.optional() }))
    .optional(),
  duration: duration.optional(),
  depends_on: z.array(z.strictObject({ id: text, relationship: text.optional() })).optional(),
  priority: z.number().int().optional(),
  evidence: z
    .array(
      z.strictObject({
        type: z.enum(['data', 'citation', 'reference']),
        source: text.optional(),
        ref: text.optional(),
        claim: text,
        relationship: text.optional(),
      }),
    )
    .optional(),
});

const pipelineStep = z.strictObject({
  name: text,
  tool: text.optional(),
  input: text.optional(),
  output: text.optional(),
  command: text.optional(),
  condition: text.optional(),
  on_failure: z.enum(['skip', 'abort', 'retry']).optional(),
  depends_on: textList.optional(),
  env: textMap.optional(),
});

export const Spec08Schema = z
  .strictObject({
    schema_version: versionEnum(CURRENT_SCHEMA_VERSIONS),
    domain: z
      .enum([
        'software',
        'presentation',
        'report',
        'course',
        'marketing',
        'legal',
        'education',
        'infrastructure',
        'research',
      ])
      .optional(),
    tier: z.enum(['full', 'registered', 'derived']).optional(),
    intent: text,
    behaviors: z.array(behavior).min(1, 'behaviors needs at least one item').optional(),
    constraints: textList.optional(),
    invariants: textList.optional(),
    decisions: z.array(decision).optional(),
    open_questions: textList.optional(),
    artifacts: z.record(z.string(), z.array(artifactRef)),
    subsystems: z.array(specRef).optional(),
    applies: z.array(specRef).optional(),
    dependencies: z.array(dependencyRef).optional(),
    exclude: textList.optional(),
    coverage: coverage.optional(),
    notes: text.optional(),
    output: z
      .strictObject({
        type: z
          .enum([
            'app',
            'presentation',
            'interactive-doc',
            'game',
            'dashboard',
            'report',
            'library',
            'service',
            'document',
            'course',
            'api',
            'infrastructure',
            'dataset',
            'design-system',
            'campaign',
            'template',
          ])
          .optional(),
        format: text.optional(),
        runtime: z.enum(['browser', 'native', 'static-file', 'embedded', 'server']).optional(),
        entry_point: text.optional(),
      })
      .optional(),
    content: z
      .strictObject({
        structure: z.enum(['ordered', 'hierarchical', 'graph', 'free-form']).optional(),
        sections: z.array(contentSection).optional(),
      })
      .optional(),
    states: z
      .strictObject({
        initial: text,
        definitions: z.array(
          z.strictObject({
            id: text,
            transitions: z
              .array(
                z.strictObject({
                  to: text,
                  on: text,
                  guard: text.optional(),
                  action: text.optional(),
                }),
              )
              .optional(),
          }),
        ),
      })
      .optional(),
    design: z
      .strictObject({
        style_guide: z.array(specRef).optional(),
        theme: z
          .strictObject({
            palette: textList.optional(),
            typography: textMap.optional(),
            modes: z
              .record(z.string(), z.strictObject({ palette: textList.optional() }))
              .optional(),
          })
          .optional(),
        layout: z
          .strictObject({
            type: z
              .enum([
                'slide-deck',
                'scrolling',
                'spatial',
                'grid',
                'free-form',
                'paginated',
                'canvas',
                'timeline',
                'tabbed',
              ])
              .optional(),
            dimensions: text.optional(),
          })
          .optional(),
        assets: z.array(artifactRef).optional(),
        print: z
          .strictObject({
            margins: textMap.optional(),
            headers: z.boolean().optional(),
            footers: z.boolean().optional(),
            page_numbers: z.boolean().optional(),
            bleed: text.optional(),
          })
          .optional(),
        responsive: z
          .strictObject({
            breakpoints: z
              .array(
                z.strictObject({
                  name: text,
                  min_width: z.number().int().optional(),
                  max_width: z.number().int().optional(),
                  layout_override: text.optional(),
                }),
              )
              .optional(),
          })
          .optional(),
      })
      .optional(),
    audience: z
      .strictObject({
        role: text.optional(),
        assumed_knowledge: text.optional(),
        tone: text.optional(),
        locale: text.optional(),
        accessibility: textList.optional(),
      })
      .optional(),
    variants: z
      .array(
        z.strictObject({
          id: text,
          description: text.optional(),
          overrides: z.record(z.string(), z.unknown()).optional(),
        }),
      )
      .optional(),
    variants_resolved: z.boolean().optional(),
    pipeline: z
      .strictObject({
        steps: z.array(pipelineStep).optional(),
        preview: z.strictObject({ command: text.optional(), url: text.optional() }).optional(),
        env: textMap.optional(),
      })
      .optional(),
    feedback: z
      .strictObject({
        metrics: z
          .array(
            z.strictObject({ name: text, source: text.optional(), threshold: text.optional() }),
          )
          .optional(),
        reconciliation_trigger: text.optional(),
        triggers: z
          .array(
            z.strictObject({
              condition: z.strictObject({
                metric: text,
                operator: z.enum(['below_threshold', 'above_threshold', 'changed', 'stale']),
                duration: duration.optional(),
              }),
              action: z.enum(['reconcile', 'warn', 'notify']).optional(),
              priority: z.enum(['low', 'medium', 'high']).optional(),
            }),
          )
          .optional(),
      })
      .optional(),
    compliance: z
      .strictObject({
        frameworks: z
          .array(
            z.strictObject({
              name: text,
              level: text.optional(),
              controls: z
                .array(z.strictObject({ id: text, satisfied_by: satisfiedBy.optional() }))
                .optional(),
              satisfied_by: satisfiedBy.optional(),
            }),
          )
          .optional(),
        audit_trail: z.boolean().optional(),
      })
      .optional(),
  })
  .superRefine(requireBehaviors(['registered', 'derived'], false));

// ---- schema 0.4 (NotarAI v0.1.x) ---------------------------------------------------------------

export const Spec04Schema = z
  .strictObject({
    schema_version: versionEnum(DEPRECATED_SCHEMA_VERSIONS),
    domain: z.enum(['software', 'presentation', 'report', 'course', 'marketing']).optional(),
    tier: z.enum(['full', 'registered']).optional(),
    intent: text,
    // The 0.4 schema lists behaviors under `required` at the top and only repeats the other keys
    // in its `then` for tier 'registered', which cannot relax a requirement: always required.
    behaviors: z
      .array(z.strictObject({ name: text, given: text, then: text }))
      .min(1, 'behaviors needs at least one item')
      .optional(),
    constraints: textList.optional(),
    invariants: textList.optional(),
    decisions: z
      .array(z.strictObject({ date: isoDate, choice: text, rationale: text.optional() }))
      .optional(),
    open_questions: textList.optional(),
    artifacts: z.record(
      z.string(),
      z.array(z.strictObject({ path: text, role: text.optional(), source: text.optional() })),
    ),
    subsystems: z.array(specRef).optional(),
    applies: z.array(specRef).optional(),
    dependencies: z.array(dependencyRef).optional(),
    exclude: textList.optional(),
    coverage: coverage.optional(),
    notes: text.optional(),
    sync_policy: z
      .strictObject({
        on_code_change: z
          .enum(['propose_spec_update', 'auto_update_spec', 'notify_only'])
          .optional(),
        on_doc_change: z.enum(['propose_spec_update', 'notify_only']).optional(),
        on_spec_change: z
          .enum(['update_code_and_docs', 'update_docs_only', 'notify_only'])
          .optional(),
      })
      .optional(),
  })
  .superRefine(requireBehaviors(['registered'], true));

export type Spec = z.infer<typeof Spec08Schema> | z.infer<typeof Spec04Schema>;

/** The schema a parsed spec is checked against: its own version's when deprecated, else 0.8's. */
export function schemaFor(
  value: Record<string, unknown>,
): typeof Spec08Schema | typeof Spec04Schema {
  return (DEPRECATED_SCHEMA_VERSIONS as readonly unknown[]).includes(value['schema_version'])
    ? Spec04Schema
    : Spec08Schema;
}
