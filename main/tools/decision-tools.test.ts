// list_decisions and propose_decision through a real MCP client and the real listener, on a real
// repository: an agent proposes, sees what awaits a person, and can neither accept nor reject; a
// hostile log is a refusal naming it. The worktree process wires the same parts
// (reconcile-service.ts).
import type { CallToolResult } from '@modelcontextprotocol/client';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectClient, startTestListener } from '../testing/mcp-clients.ts';
import { leaksSecret, SECRET } from '../testing/hostile-repository.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { createReconcileService } from './reconcile-service.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

const SPEC = `schema_version: '0.8'
intent: The app.
tier: registered
artifacts:
  code:
    - path: src/**
`;

async function serve() {
  const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SPEC, 'src/a.ts': 'a\n' });
  cleanups.push(() => repo.cleanup());
  const service = createReconcileService({ root: repo.root, onState: () => undefined });
  cleanups.push(() => service.close());
  const server = await startTestListener({
    root: repo.root,
    instructions: service.instructions,
    loadServerParts: () => service.loadServerParts(),
  });
  cleanups.push(() => server.close());
  const { client } = await connectClient(server.port, 'modern-http');
  cleanups.push(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { root: repo.root, client, call };
}

const textOf = (result: CallToolResult) =>
  result.content[0]?.type === 'text' ? result.content[0].text : '';

describe('decision tools over MCP', () => {
  it('an agent proposes, lists what awaits a person, and has no way to accept or reject', async () => {
    const { root, client, call } = await serve();
    const { tools } = await client.listTools();
    const list = tools.find((tool) => tool.name === 'list_decisions');
    const propose = tools.find((tool) => tool.name === 'propose_decision');
    expect(list?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(propose?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: false,
    });
    expect(propose?.inputSchema.required).toEqual(['spec_path', 'choice', 'rationale']);
    expect(tools.filter((tool) => /accept|reject/.test(tool.name))).toEqual([]);

    const empty = await call('list_decisions', {});
    expect(empty.structuredContent).toEqual({
      decisions: [],
      total: 0,
      proposed: 0,
      log_path: '.notarai/decision-log.json',
    });

    const proposed = await call('propose_decision', {
      spec_path: '.notarai/app.spec.yaml',
      choice: 'Retry idempotent requests',
      rationale: 'The client retries on 503.\nSee src/a.ts.',
      related_files: ['src/a.ts'],
      date: '2026-04-13',
    });
    expect(proposed.isError).toBeFalsy();
    const decision = {
      index: 0,
      spec_path: '.notarai/app.spec.yaml',
      date: '2026-04-13',
      choice: 'Retry idempotent requests',
      rationale: 'The client retries on 503.\nSee src/a.ts.',
      origin: 'reconciliation',
      status: 'proposed',
      related_files: ['src/a.ts'],
      reject_reason: null,
    };
    expect(proposed.structuredContent).toEqual({
      decision,
      total: 1,
      log_path: '.notarai/decision-log.json',
    });
    // The log, as NotarAI's reconcile writes it (NotarAI's `decisions list` reads it).
    expect(
      JSON.parse(await readFile(path.join(root, '.notarai/decision-log.json'), 'utf8')),
    ).toEqual({
      proposals: [
        {
          spec_path: '.notarai/app.spec.yaml',
          date: '2026-04-13',
          choice: 'Retry idempotent requests',
          rationale: 'The client retries on 503.\nSee src/a.ts.',
          origin: 'reconciliation',
          status: 'proposed',
          related_files: ['src/a.ts'],
        },
      ],
    });
    // The spec is the person's to change: untouched.
    expect(await readFile(path.join(root, '.notarai/app.spec.yaml'), 'utf8')).toBe(SPEC);

    const listed = await call('list_decisions', { status: 'proposed' });
    expect(listed.structuredContent).toMatchObject({
      decisions: [decision],
      total: 1,
      proposed: 1,
    });
    expect(JSON.parse(textOf(listed))).toEqual(listed.structuredContent);
    const other = await call('list_decisions', { spec_path: '.notarai/other.spec.yaml' });
    expect(other.structuredContent).toMatchObject({ decisions: [], total: 1 });
  });

  it('refuses a bad proposal and a hostile log with a message naming the problem', async () => {
    const { root, call } = await serve();
    const bad = await call('propose_decision', {
      spec_path: '.notarai/app.spec.yaml',
      choice: 'two\nlines',
      rationale: 'r',
    });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain('choice must be one line');

    const outsideDir = await makeTempDir();
    cleanups.push(async () =>
      (await import('node:fs/promises')).rm(outsideDir, { recursive: true }),
    );
    const outside = path.join(outsideDir, 'decision-log.json');
    const secretLog = JSON.stringify({
      proposals: [
        {
          spec_path: '.notarai/app.spec.yaml',
          date: '2026-04-13',
          choice: SECRET,
          rationale: SECRET,
          origin: 'x',
          status: 'proposed',
        },
      ],
    });
    await writeFile(outside, secretLog);
    await symlink(outside, path.join(root, '.notarai/decision-log.json'));
    for (const [name, args] of [
      ['list_decisions', {}],
      ['propose_decision', { spec_path: '.notarai/app.spec.yaml', choice: 'c', rationale: 'r' }],
    ] as const) {
      const result = await call(name, args);
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toContain('.notarai/decision-log.json');
      expect(textOf(result), name).toContain('outside the worktree');
      expect(leaksSecret(result), name).toBe(false);
    }
    expect(await readFile(outside, 'utf8')).toBe(secretLog);
  });
});
