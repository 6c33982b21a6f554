// The window's decision commands through the whole stack: a real host, the real worktree process
// (its protocol: decision-request / decision-answer) and real files in a real git repository. The
// proposals are listed; a preview writes nothing and shows the spec's change; an accept and a
// reject from the window write exactly what `grove decisions accept|reject` writes (the CLI run on
// a copy of the same files); the reconciliation state's decisions counts follow live; a proposal
// or spec changed since it was shown is refused untouched; a stopped server is a clear refusal;
// and no MCP tool accepts or rejects.
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AcceptPreview, ListDecisionsResult } from '../../shared/decisions.ts';
import type { WorktreeState } from '../../shared/model.ts';
import { createLogger } from '../platform/log.ts';
import { UserError } from '../platform/errors.ts';
import { runDecisionsCommand } from '../notarai-cli/decisions-command.ts';
import { connectClient } from '../testing/mcp-clients.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { runHostCommand } from './host-commands.ts';
import { Host } from './host.ts';
import { API_SPEC, APP_SPEC, decisionLog } from '../testing/decision-fixtures.ts';

const LOG = decisionLog(
  '{"spec_path":".notarai/app.spec.yaml","date":"2026-04-16","choice":"Keep sessions in SQLite","rationale":"Sessions survived the crash test","origin":"reconciliation","status":"proposed"}',
);

const FILES = {
  '.notarai/api.spec.yaml': API_SPEC,
  '.notarai/app.spec.yaml': APP_SPEC,
  '.notarai/decision-log.json': LOG,
  'src/api/http.ts': 'export const retries = 3;\n',
  'src/app.ts': 'export const app = 1;\n',
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function served() {
  const repo = await makeTempRepo(FILES);
  cleanups.push(repo.cleanup);
  const host = await Host.open({
    dataDir: await makeTempDir(),
    firstPort: randomFirstPort(),
    worktreePollMs: 0,
    log: createLogger([]),
  });
  cleanups.push(() => host.close());
  await host.addRepo(repo.root);
  await host.startAll();
  const worktree: WorktreeState = host.snapshot().repos[0]!.worktrees[0]!;
  const command = <T>(name: string, input: Record<string, unknown> = {}) =>
    runHostCommand(host, name, { worktreeId: worktree.id, ...input }) as Promise<T>;
  const read = (file: string) => readFile(path.join(repo.root, file), 'utf8');
  const summary = () => host.snapshot().reconcile[worktree.id]?.decisions;
  return { repo, host, worktree, command, read, summary };
}

/** A copy of the files the CLI runs on, and what it leaves in the spec and the log. */
async function cliRun(root: string, args: string[]) {
  const copy = await makeTempDir();
  cleanups.push(() => import('node:fs/promises').then((fs) => fs.rm(copy, { recursive: true })));
  await cp(path.join(root, '.notarai'), path.join(copy, '.notarai'), { recursive: true });
  const out = { stdout: () => undefined, stderr: () => undefined, colours: false };
  const code = await runDecisionsCommand([...args, '--worktree', copy], out);
  expect(code).toBe(0);
  return (file: string) => readFile(path.join(copy, file), 'utf8');
}

describe('decisions from the window, through the worktree process', () => {
  it('lists, previews, accepts and rejects as `grove decisions` writes, with live counts', async () => {
    const { repo, command, read, summary } = await served();
    await waitFor(() => summary()?.proposed === 3, 'the state counting 3 proposals');
    expect(summary()).toMatchObject({
      total: 4,
      proposed: 3,
      bySpec: [
        { specPath: '.notarai/api.spec.yaml', proposed: 1 },
        { specPath: '.notarai/app.spec.yaml', proposed: 2 },
      ],
      problem: null,
    });
    const before = summary()!.revision;

    const listed = await command<ListDecisionsResult>('listDecisions');
    expect(listed.decisions.map((d) => [d.index, d.spec_path, d.status, d.choice])).toEqual([
      [0, '.notarai/api.spec.yaml', 'proposed', 'Retry idempotent requests'],
      [1, '.notarai/app.spec.yaml', 'proposed', 'Drop the legacy endpoint'],
      [2, '.notarai/api.spec.yaml', 'rejected', 'Switch to XML'],
      [3, '.notarai/app.spec.yaml', 'proposed', 'Keep sessions in SQLite'],
    ]);
    expect(listed.decisions[0]!.related_files).toEqual(['src/api/http.ts']);

    // The preview shows the spec's change and writes nothing.
    const proposal = listed.decisions[0]!;
    const preview = await command<AcceptPreview>('previewAcceptDecision', {
      specPath: proposal.spec_path,
      index: 0,
    });
    expect(await read('.notarai/api.spec.yaml')).toBe(API_SPEC);
    expect(await read('.notarai/decision-log.json')).toBe(LOG);
    expect(preview.remaining).toBe(3);
    expect(preview.specDiff).toContain('--- a/.notarai/api.spec.yaml');
    expect(preview.specDiff).toContain("+  - date: '2026-04-13'");
    expect(preview.specDiff).toContain("+    choice: 'Retry idempotent requests'");
    expect(preview.specDiff).not.toMatch(/^-(?!-- a\/)/m); // nothing removed: one entry added

    // Accept from the window = `grove decisions accept` on a copy of the same files.
    const cli = await cliRun(repo.root, ['accept', '.notarai/api.spec.yaml', '0']);
    const accepted = await command<{ decision: { status: string }; written: string[] }>(
      'acceptDecision',
      {
        specPath: proposal.spec_path,
        index: 0,
        expected: { decision: proposal, specSha256: preview.specSha256 },
      },
    );
    expect(accepted.decision.status).toBe('accepted');
    expect(accepted.written).toEqual(['.notarai/api.spec.yaml', '.notarai/decision-log.json']);
    expect(await read('.notarai/api.spec.yaml')).toBe(await cli('.notarai/api.spec.yaml'));
    expect(await read('.notarai/decision-log.json')).toBe(await cli('.notarai/decision-log.json'));
    // The preview showed exactly what was written.
    const diffAdded = preview.specDiff
      .split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
      .map((line) => line.slice(1));
    expect(await read('.notarai/api.spec.yaml')).toContain(diffAdded.join('\n'));

    // The counts follow without asking (the watcher's recomputation).
    await waitFor(() => summary()?.proposed === 2, 'the state counting 2 proposals');
    expect(summary()!.revision).not.toBe(before);
    expect(summary()!.bySpec).toEqual([{ specPath: '.notarai/app.spec.yaml', proposed: 2 }]);

    // Reject with a reason from the window = `grove decisions reject --reason` on a copy.
    const now = await command<ListDecisionsResult>('listDecisions');
    const drop = now.decisions.find((d) => d.choice === 'Drop the legacy endpoint')!;
    expect(drop.index).toBe(0); // the accept removed entry 0: the indexes shifted
    const cliReject = await cliRun(repo.root, [
      'reject',
      '.notarai/app.spec.yaml',
      '0',
      '--reason',
      'Still called by the mobile app',
    ]);
    const rejected = await command<{ decision: { status: string; reject_reason: string } }>(
      'rejectDecision',
      {
        specPath: drop.spec_path,
        index: drop.index,
        reason: 'Still called by the mobile app',
        expected: { decision: drop },
      },
    );
    expect(rejected.decision).toMatchObject({
      status: 'rejected',
      reject_reason: 'Still called by the mobile app',
    });
    expect(await read('.notarai/decision-log.json')).toBe(
      await cliReject('.notarai/decision-log.json'),
    );
    expect(await read('.notarai/app.spec.yaml')).toBe(APP_SPEC);
    await waitFor(() => summary()?.proposed === 1, 'the state counting 1 proposal');
  });

  it('refuses, untouched, a proposal or a spec changed since it was shown', async () => {
    const { repo, command, read } = await served();
    const listed = await command<ListDecisionsResult>('listDecisions');
    const [first, second] = listed.decisions;
    const preview = await command<AcceptPreview>('previewAcceptDecision', {
      specPath: first!.spec_path,
      index: 0,
    });

    // The spec edited after the preview: the accept is refused, nothing written.
    const edited = API_SPEC.replace("intent: 'The HTTP API'", "intent: 'The public HTTP API'");
    await writeFile(path.join(repo.root, '.notarai/api.spec.yaml'), edited);
    const stale = command('acceptDecision', {
      specPath: first!.spec_path,
      index: 0,
      expected: { decision: first, specSha256: preview.specSha256 },
    });
    await expect(stale).rejects.toThrow(/\.notarai\/api\.spec\.yaml changed since it was shown/);
    await expect(stale).rejects.toMatchObject({ code: 'busy' });
    expect(await read('.notarai/api.spec.yaml')).toBe(edited);
    expect(await read('.notarai/decision-log.json')).toBe(LOG);

    // The log changed (an agent's proposal edited): the proposal shown at index 1 is refused.
    const changedLog = LOG.replace('Nobody calls it', 'Nobody has called it since March');
    await writeFile(path.join(repo.root, '.notarai/decision-log.json'), changedLog);
    await expect(
      command('rejectDecision', {
        specPath: second!.spec_path,
        index: 1,
        reason: 'no',
        expected: { decision: second },
      }),
    ).rejects.toThrow(/proposal 1 changed since it was shown; nothing was written/);
    expect(await read('.notarai/decision-log.json')).toBe(changedLog);

    // NotarAI's own refusals come through with their words: another spec's proposal.
    await expect(
      command('previewAcceptDecision', { specPath: '.notarai/app.spec.yaml', index: 0 }),
    ).rejects.toThrow(
      "proposal at index 0 belongs to '.notarai/api.spec.yaml', not '.notarai/app.spec.yaml'",
    );
    // ... and a proposal already rejected, as `grove decisions reject` says.
    const settled = listed.decisions[2]!;
    await expect(
      command('rejectDecision', {
        specPath: settled.spec_path,
        index: 2,
        expected: { decision: settled },
      }),
    ).rejects.toThrow("Cannot reject: decision is already 'rejected'");
    expect(await read('.notarai/decision-log.json')).toBe(changedLog);
    // Bad input never reaches the process.
    await expect(
      command('acceptDecision', { specPath: '.notarai/app.spec.yaml', index: -1 }),
    ).rejects.toThrow(/invalid input for acceptDecision/);
  });

  it('says so when the server is stopped, and no MCP tool accepts or rejects', async () => {
    const { host, worktree, command } = await served();
    const { token } = host.getConnectionInfo(worktree.id);
    const { client } = await connectClient(worktree.port, 'modern-http', token);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    await client.close();
    expect(names).toEqual(expect.arrayContaining(['list_decisions', 'propose_decision']));
    expect(names.filter((name) => /accept|reject/.test(name))).toEqual([]);

    await host.stopServer(worktree.id);
    const refused = command('listDecisions');
    await expect(refused).rejects.toBeInstanceOf(UserError);
    await expect(refused).rejects.toMatchObject({ code: 'unavailable' });
    await expect(refused).rejects.toThrow(/not running/);
  });
});
