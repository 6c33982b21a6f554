// The reconciliation tools, prompts, spec resources and change notifications served over every
// MCP leg by the real listener, against a real repository (the worktree process wires the same
// parts through reconcile-service.ts).
import type { CallToolResult } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { connectClient, startTestListener, waitUntil } from '../testing/mcp-clients.ts';
import type { Leg } from '../testing/mcp-clients.ts';
import { stableStringify } from '../mcp/stable-json.ts';
import { git, makeTempRepo, SRC_SPEC, writeFiles } from '../testing/temp-repo.ts';
import { createReconcileService } from './reconcile-service.ts';
import { specResourceUri } from './reconcile-mcp.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

async function serve() {
  const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SRC_SPEC, 'src/a.ts': 'a\n' });
  cleanups.push(() => repo.cleanup());
  await git(repo.root, 'checkout', '-q', '-b', 'feature');
  await writeFiles(repo.root, { 'src/a.ts': 'changed\n' });
  const states: unknown[] = [];
  const service = createReconcileService({
    root: repo.root,
    onState: (state) => states.push(state),
  });
  cleanups.push(() => service.close());
  const server = await startTestListener({
    root: repo.root,
    instructions: service.instructions,
    loadServerParts: () => service.loadServerParts(),
  });
  cleanups.push(() => server.close());
  return { repo, service, server, states };
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

describe.each<Leg>(['legacy-http', 'modern-http', 'sse'])('reconciliation over %s', (leg) => {
  it('serves the eleven tools with schemas, annotations and sorted JSON results', async () => {
    const { server } = await serve();
    const { client } = await connectClient(server.port, leg);
    cleanups.push(() => client.close());

    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()]).toEqual([
      'list_affected_specs',
      'get_spec_diff',
      'get_changed_artifacts',
      'mark_reconciled',
      'clear_cache',
      'snapshot_state',
      'check_specs',
      'get_drift_score',
      'export_context',
      'list_decisions',
      'propose_decision',
    ]);
    for (const tool of tools) {
      expect(tool.outputSchema).toBeDefined();
      expect(tool.annotations?.openWorldHint).toBe(false);
    }
    expect(byName.get('get_spec_diff')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('mark_reconciled')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
    });
    expect(byName.get('clear_cache')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
    expect(byName.get('snapshot_state')?.annotations).toMatchObject({ readOnlyHint: false });
    expect(byName.get('get_spec_diff')?.inputSchema.required).toEqual(['spec_path', 'base_branch']);

    const diff = (await client.callTool({
      name: 'get_spec_diff',
      arguments: { spec_path: '.notarai/app.spec.yaml', base_branch: 'main' },
    })) as CallToolResult;
    expect(diff.isError).toBeFalsy();
    expect(diff.structuredContent).toMatchObject({ files: ['src/a.ts'], system_spec: null });
    expect(text(diff)).toBe(stableStringify(diff.structuredContent));
    expect(Object.keys(JSON.parse(text(diff)) as object)).toEqual(
      Object.keys(JSON.parse(text(diff)) as object).sort(),
    );

    const bad = (await client.callTool({
      name: 'list_affected_specs',
      arguments: { base_branch: '--upload-pack=x' },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('must not start with "-"');

    const missing = (await client.callTool({
      name: 'get_spec_diff',
      arguments: { spec_path: 'x' },
    })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('base_branch');
    expect(server.errors).toEqual([]);
  });

  it('serves the prompts, the instructions and every spec as a resource', async () => {
    const { server } = await serve();
    const { client } = await connectClient(server.port, leg);
    cleanups.push(() => client.close());
    if (leg !== 'modern-http') expect(client.getInstructions()).toContain('list_affected_specs');

    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(['reconcile', 'bootstrap_specs']);
    expect(prompts[0]?.arguments).toEqual([
      expect.objectContaining({ name: 'base_branch', required: false }),
    ]);
    const prompt = await client.getPrompt({
      name: 'reconcile',
      arguments: { base_branch: 'develop' },
    });
    const message = prompt.messages[0]?.content;
    expect(message?.type === 'text' ? message.text : '').toContain('"develop"');
    const fallback = await client.getPrompt({ name: 'reconcile', arguments: {} });
    const fallbackText = fallback.messages[0]?.content;
    expect(fallbackText?.type === 'text' ? fallbackText.text : '').toContain('"main"');

    const { resources } = await client.listResources();
    expect(resources).toEqual([
      expect.objectContaining({
        uri: specResourceUri('.notarai/app.spec.yaml'),
        name: '.notarai/app.spec.yaml',
        mimeType: 'application/yaml',
      }),
    ]);
    const read = await client.readResource({ uri: specResourceUri('.notarai/app.spec.yaml') });
    expect(read.contents[0]).toMatchObject({ text: SRC_SPEC });
  });
});

describe('change notifications', () => {
  it.each<Leg>(['legacy-http', 'sse'])(
    'a spec edited on disk reaches %s sessions as resources/updated',
    async (leg) => {
      const { server, service, repo, states } = await serve();
      const { client } = await connectClient(server.port, leg);
      cleanups.push(() => client.close());
      const updated: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (note) => {
        updated.push((note.params as { uri: string }).uri);
      });
      await client.subscribeResource({ uri: specResourceUri('.notarai/app.spec.yaml') });
      await service.start(server.listener);
      expect(states).toHaveLength(1);
      await writeFiles(repo.root, {
        '.notarai/app.spec.yaml': SRC_SPEC.replace('The app.', 'The app, v2.'),
      });
      await waitUntil(() => updated.length > 0, 10_000, 'resources/updated');
      expect(updated[0]).toBe(specResourceUri('.notarai/app.spec.yaml'));
      await waitUntil(() => states.length > 1, 10_000, 'a new reconcile state');
    },
  );

  it('modern clients listening get resources/updated too', async () => {
    const { server } = await serve();
    const { client } = await connectClient(server.port, 'modern-http');
    cleanups.push(() => client.close());
    const updated: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (note) => {
      updated.push((note.params as { uri: string }).uri);
    });
    const uri = specResourceUri('.notarai/app.spec.yaml');
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    cleanups.push(() => subscription.close());
    server.listener.notify.resourceUpdated(uri);
    await waitUntil(() => updated.length > 0, 10_000, 'resources/updated (modern)');
    expect(updated).toEqual([uri]);
  });
});

describe('NotarAI 0.7 check, score and export-context as tools', () => {
  it('check_specs, get_drift_score and export_context answer through a real client', async () => {
    const { server, service } = await serve();
    const { client } = await connectClient(server.port, 'modern-http');
    cleanups.push(() => client.close());
    const { tools } = await client.listTools();
    for (const name of ['check_specs', 'get_drift_score', 'export_context']) {
      const tool = tools.find((candidate) => candidate.name === name);
      expect(tool?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(tool?.title).toBeTruthy();
      expect(tool?.outputSchema).toBeDefined();
    }

    await writeFiles((await service.engine()).root, { 'loose.txt': 'ungoverned\n' });
    const check = (await client.callTool({
      name: 'check_specs',
      arguments: {},
    })) as CallToolResult;
    expect(check.isError).toBeFalsy();
    expect(check.structuredContent).toMatchObject({
      passed: true,
      exit_code: 0,
      summary: { errors: 0, warnings: 3 },
      findings: [
        { type: 'coverage_gap', file_path: 'README.md' },
        {
          type: 'coverage_gap',
          file_path: 'loose.txt',
          tier: 'housekeeping',
          severity: 'warning',
          spec_path: null,
          glob_pattern: null,
          line: null,
        },
        { type: 'test_coverage_missing', spec_path: '.notarai/app.spec.yaml', line: 7 },
      ],
    });
    expect(text(check)).toBe(stableStringify(check.structuredContent));
    const strict = (await client.callTool({
      name: 'check_specs',
      arguments: { strict: true },
    })) as CallToolResult;
    expect(strict.structuredContent).toMatchObject({ passed: false, summary: { errors: 3 } });

    const score = (await client.callTool({
      name: 'get_drift_score',
      arguments: { spec_path: '.notarai/app.spec.yaml' },
    })) as CallToolResult;
    expect(score.structuredContent).toMatchObject({
      specs: [{ spec_path: '.notarai/app.spec.yaml', status: expect.any(String) }],
      days_since_reconciliation: 30,
    });

    const exported = (await client.callTool({
      name: 'export_context',
      arguments: { base_branch: 'main', format: 'markdown' },
    })) as CallToolResult;
    expect(exported.structuredContent).toMatchObject({
      contexts: [{ spec_path: '.notarai/app.spec.yaml', changed_files: ['src/a.ts'] }],
    });
    expect((exported.structuredContent as { markdown: string }).markdown).toMatch(
      /^# Reconciliation: app\.spec\n/,
    );
    const bad = (await client.callTool({
      name: 'export_context',
      arguments: { base_branch: 'nope' },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/does not resolve/);
  });
});
