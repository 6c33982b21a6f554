// The window's review of a proposal on a big spec (~1 MB, 12,000 behaviors): the preview and the
// accept add the decision and validate the result on a worker thread (decisions-spec-edit.ts,
// job kind `decision-spec-edit`), so the worktree process keeps answering its health checks and
// its clients meanwhile; the preview shows exactly the lines the accept writes, and the spec
// written validates with the decision in it. A small spec is edited on the main thread, with
// the same result as the big one's worker.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { worstLoopStall } from '../../testing/event-loop.ts';
import { makeTempRepo, writeFiles, type TempRepo } from '../../testing/temp-repo.ts';
import { acceptShownDecision, previewAcceptDecision } from './decision-review.ts';
import { editAndValidateSpec } from './decisions-spec-edit.ts';
import { listDecisions } from './decisions.ts';
import { MAIN_THREAD_SPEC_BYTES, type ValidSpec } from '../specs/spec-loader.ts';
import { parseSpecText } from '../specs/spec-validate.ts';

const HEAD = `schema_version: '0.8'
intent: 'The HTTP API'
decisions:
  - date: '2026-01-10'
    choice: 'Use JSON'
    rationale: 'Everyone reads it'
artifacts:
  code:
    - path: 'src/api/**'
behaviors:
`;

const LOG = JSON.stringify({
  proposals: [
    {
      spec_path: '.notarai/api.spec.yaml',
      date: '2026-04-13',
      choice: 'Retry idempotent requests',
      rationale: 'The client now retries.\nSee src/api/http.ts.',
      origin: 'reconciliation',
      status: 'proposed',
    },
  ],
});

const repos: TempRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
});

describe('a decision accepted into a big spec', () => {
  it('is worked out off the event loop, previewed exactly, and written valid', async () => {
    const behaviors = Array.from(
      { length: 12_000 },
      (_, i) =>
        `  - name: behavior-${i}\n    given: the state number ${i}\n    then: outcome ${i}\n`,
    ).join('');
    const big = `${HEAD}${behaviors}`;
    expect(big.length).toBeGreaterThan(MAIN_THREAD_SPEC_BYTES);
    const repo = await makeTempRepo();
    repos.push(repo);
    await writeFiles(repo.root, {
      '.notarai/api.spec.yaml': big,
      '.notarai/decision-log.json': LOG,
    });

    const { stallMs, result } = await worstLoopStall(() =>
      previewAcceptDecision(repo.root, '.notarai/api.spec.yaml', 0),
    );
    if (result.status === 'rejected') throw result.reason;
    const preview = result.value;
    expect(preview.specDiff.split('\n').slice(0, 3)).toEqual([
      '--- a/.notarai/api.spec.yaml',
      '+++ b/.notarai/api.spec.yaml',
      '@@ -4,6 +4,11 @@',
    ]);
    expect(stallMs).toBeLessThan(400);

    const [decision] = (await listDecisions(repo.root)).decisions;
    await acceptShownDecision(repo.root, '.notarai/api.spec.yaml', 0, {
      decision: decision!,
      specSha256: preview.specSha256,
    });
    const written = await readFile(path.join(repo.root, '.notarai/api.spec.yaml'), 'utf8');
    const added = preview.specDiff
      .split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
      .map((line) => line.slice(1));
    expect(written).toContain(`    rationale: 'Everyone reads it'\n${added.join('\n')}\n`);
    const parsed = parseSpecText('.notarai/api.spec.yaml', written);
    expect(parsed.ok).toBe(true);
    expect((parsed as ValidSpec).spec.decisions).toEqual([
      { date: '2026-01-10', choice: 'Use JSON', rationale: 'Everyone reads it' },
      {
        date: '2026-04-13',
        choice: 'Retry idempotent requests',
        rationale: 'The client now retries.\nSee src/api/http.ts.\n',
      },
    ]);
    // The main thread's edit of the same text gives the same bytes as the worker's.
    const entry = {
      date: '2026-04-13',
      choice: 'Retry idempotent requests',
      rationale: decision!.rationale,
    };
    expect(editAndValidateSpec('.notarai/api.spec.yaml', big, entry)).toEqual({
      ok: true,
      text: written,
    });
  });
});
