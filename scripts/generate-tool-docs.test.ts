// docs/tools.md must be what the generator makes from the registry and a running server today.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { TOOL_USAGE, TOOLS_DOC_PATH, renderServerDocs, serverTools } from './generate-tool-docs.ts';

describe('docs/tools.md', () => {
  it('is up to date with the tool registry and the server (npm run docs:tools)', async () => {
    const committed = await readFile(TOOLS_DOC_PATH, 'utf8');
    expect(committed).toBe(await renderServerDocs());
  });

  it('documents every tool with its fields, every prompt and every resource', async () => {
    const rendered = await renderServerDocs();
    const tools = serverTools();
    expect(tools).toHaveLength(21);
    for (const tool of tools) {
      expect(rendered).toContain(`### ${tool.name}\n`);
      for (const field of Object.keys(tool.inputSchema.shape)) {
        expect(rendered).toContain(`| \`${field}\` |`);
      }
    }
    expect(rendered).toContain('| `files[].matches[].line` | integer | yes |');
    for (const prompt of ['reconcile', 'bootstrap_specs']) {
      expect(rendered).toContain(`### ${prompt}\n`);
    }
    expect(rendered).toContain('URI template `grove://spec/');
    expect(rendered).toContain(
      '`mark_reconciled`, `clear_cache`, `snapshot_state`, `propose_decision` write',
    );
    // The opt-in tools are documented although a worktree does not list them until turned on.
    for (const name of ['list_just_tasks', 'run_just_task']) {
      expect(rendered).toContain(`- [\`${name}\`](#${name}) — `);
      expect(rendered).toMatch(
        new RegExp(`### ${name}\\n\\n.*\\n\\n\\*\\*Opt-in, off by default\\*\\*`),
      );
    }
  });

  it('gives every tool an example call its own input schema accepts', () => {
    for (const tool of serverTools()) {
      const usage = TOOL_USAGE[tool.name];
      expect(usage, tool.name).toBeDefined();
      expect(tool.inputSchema.safeParse(usage!.example).success, tool.name).toBe(true);
    }
    expect(Object.keys(TOOL_USAGE).sort()).toEqual(
      serverTools()
        .map((tool) => tool.name)
        .sort(),
    );
  });
});
