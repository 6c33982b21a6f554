// Answers too big to send (issue 33): one changed 18 MB text file made get_spec_diff and
// export_context answer HTTP 200 with no body (the response passed the 32 MiB of unread output a
// response may hold and was cut), and SDK clients waited out their own 60 s. Now such an answer is
// an error naming its size, the cap and how to ask for less, on every leg, and asking for less
// (exclude_patterns) is answered.
import type { CallToolResult } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { connectClient, startTestListener } from '../testing/mcp-clients.ts';
import type { Leg } from '../testing/mcp-clients.ts';
import { git, makeTempRepo, SRC_SPEC, writeFiles } from '../testing/temp-repo.ts';
import { createReconcileService } from '../tools/reconcile-service.ts';
import { MAX_ANSWER_BYTES } from './tool-results.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

/** 18 MB of text lines, every one changed from the committed version. */
function bigText(): string {
  const line = `${'the quick brown fox jumps over the lazy dog '.repeat(2)}\n`;
  return line.repeat(Math.ceil((18 * 1024 * 1024) / line.length));
}

async function serveBigChange() {
  const repo = await makeTempRepo({
    '.notarai/app.spec.yaml': SRC_SPEC,
    'src/big.txt': 'small\n',
    'src/a.ts': 'a\n',
  });
  cleanups.push(() => repo.cleanup());
  await git(repo.root, 'checkout', '-q', '-b', 'feature');
  await writeFiles(repo.root, { 'src/big.txt': bigText(), 'src/a.ts': 'changed\n' });
  const service = createReconcileService({ root: repo.root, onState: () => undefined });
  cleanups.push(() => service.close());
  const server = await startTestListener({
    root: repo.root,
    instructions: service.instructions,
    loadServerParts: () => service.loadServerParts(),
  });
  cleanups.push(() => server.close());
  return server;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

describe.each<Leg>(['legacy-http', 'modern-http', 'sse'])('an answer too big over %s', (leg) => {
  it('is an error naming its size and how to ask for less, never an empty answer', async () => {
    const server = await serveBigChange();
    const { client } = await connectClient(server.port, leg);
    cleanups.push(() => client.close());
    const spec = { spec_path: '.notarai/app.spec.yaml', base_branch: 'main' };

    const diff = (await client.callTool({
      name: 'get_spec_diff',
      arguments: spec,
    })) as CallToolResult;
    expect(diff.isError).toBe(true);
    expect(text(diff)).toMatch(
      /^the answer of get_spec_diff is \d+\.\d MiB \(\d+ bytes\), over the 8\.0 MiB an answer may hold/,
    );
    expect(text(diff)).toContain('exclude_patterns');
    expect(Number(/\((\d+) bytes\)/.exec(text(diff))![1])).toBeGreaterThan(MAX_ANSWER_BYTES);

    const exported = (await client.callTool({
      name: 'export_context',
      arguments: { base_branch: 'main' },
    })) as CallToolResult;
    expect(exported.isError).toBe(true);
    expect(text(exported)).toMatch(/^the answer of export_context is .* spec_path/);

    // What the error says to do is answered, with the big file still listed.
    const narrowed = (await client.callTool({
      name: 'get_spec_diff',
      arguments: { ...spec, exclude_patterns: ['big.txt'] },
    })) as CallToolResult;
    expect(narrowed.isError).toBeFalsy();
    const result = narrowed.structuredContent as { files: string[]; diff: string };
    expect(result.files).toContain('src/big.txt');
    expect(result.diff).toContain('+changed');
    expect(result.diff).not.toContain('quick brown fox');
  }, 120_000);
});
