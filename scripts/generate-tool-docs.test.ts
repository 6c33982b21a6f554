// docs/tools.md must be what the generator makes from the registry today.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createFileTools } from '../main/tools/index.ts';
import { TOOLS_DOC_PATH, renderToolDocs } from './generate-tool-docs.ts';

describe('docs/tools.md', () => {
  it('is up to date with the tool registry (npm run docs:tools)', async () => {
    const committed = await readFile(TOOLS_DOC_PATH, 'utf8');
    expect(committed).toBe(renderToolDocs(createFileTools()));
  });

  it('documents every tool with its fields', () => {
    const rendered = renderToolDocs(createFileTools());
    for (const tool of createFileTools()) {
      expect(rendered).toContain(`## ${tool.name}\n`);
      for (const field of Object.keys(tool.inputSchema.shape)) {
        expect(rendered).toContain(`| \`${field}\` |`);
      }
    }
    expect(rendered).toContain('| `files[].matches[].line` | integer | yes |');
  });
});
