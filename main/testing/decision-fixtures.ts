// A repository's NotarAI decisions as the decision tests share them (CLI, host, window): two specs
// (one with a `decisions:` section, comments and layout to keep; one without) and a decision log
// with proposals on both, one of them rejected. Each test names its own last proposal.

export const API_SPEC = `# The HTTP API: owned by the platform team.
schema_version: '0.8'
intent: 'The HTTP API'
behaviors:
  - name: retries
    given: a failed request
    then: it is retried

decisions:
  # The first one, kept for history.
  - date: '2026-01-10'
    choice: 'Use JSON'
    rationale: 'Everyone reads it'

artifacts:
  code:
    - path: 'src/api/**' # every API file
`;

export const APP_SPEC = `schema_version: '0.8'
intent: 'The app'
tier: registered
constraints:
  - 'No globals'
# What the app spec governs.
artifacts:
  code:
    - path: 'src/*.ts'
`;

/** The log: three proposals every test shares, then `last` (one JSON object, NotarAI's keys). */
export function decisionLog(last: string): string {
  return `{"proposals":[
 {"spec_path":".notarai/api.spec.yaml","date":"2026-04-13","choice":"Retry idempotent requests","rationale":"The client now retries.\\nSee src/api/http.ts for the policy.","origin":"reconciliation","status":"proposed","related_files":["src/api/http.ts"]},
 {"spec_path":".notarai/app.spec.yaml","date":"2026-04-14","choice":"Drop the legacy endpoint","rationale":"Nobody calls it","origin":"reconciliation","status":"proposed","related_files":[]},
 {"spec_path":".notarai/api.spec.yaml","date":"2026-04-15","choice":"Switch to XML","rationale":"Older clients","origin":"human","status":"rejected","reject_reason":"No"},
 ${last}
]}
`;
}
