// Proves the layering rules in eslint.config.js bite: fixtures that import `electron` outside
// main/electron/, Node built-ins in renderer/ or shared/, main/ from renderer/, or a folder above
// or beside their own layer (eslint-rules/layers.js) fail lint, and the allowed imports pass.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function restrictedImportErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

async function layerErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'grove/layers')
    .map((message) => message.message);
}

const importOf = (specifier: string) => `import { x } from '${specifier}';\nvoid x;\n`;

describe('layering rule', () => {
  it.each([
    ['main/host/bad-fixture.ts', "import { app } from 'electron';\nvoid app;\n"],
    ['main/mcp/bad-fixture.ts', "import { ipcMain } from 'electron/main';\nvoid ipcMain;\n"],
    [
      'renderer/src/bad-fixture.ts',
      "import { readFile } from 'node:fs/promises';\nvoid readFile;\n",
    ],
    ['shared/bad-fixture.ts', "import path from 'node:path';\nvoid path;\n"],
    ['shared/bad-electron-fixture.ts', "import { app } from 'electron';\nvoid app;\n"],
    [
      'renderer/src/bad-main-fixture.ts',
      "import { Host } from '../../main/host/host.ts';\nvoid Host;\n",
    ],
  ])('refuses %s', async (filePath, code) => {
    expect(await restrictedImportErrors(filePath, code)).toHaveLength(1);
  });

  it.each([
    ['main/electron/ok-fixture.ts', "import { app } from 'electron';\nvoid app;\n"],
    ['main/host/ok-fixture.ts', "import path from 'node:path';\nvoid path;\n"],
    [
      'renderer/src/ok-fixture.ts',
      "import { hostCommands } from '../../shared/host-api.ts';\nvoid hostCommands;\n",
    ],
  ])('allows %s', async (filePath, code) => {
    expect(await restrictedImportErrors(filePath, code)).toEqual([]);
  });
});

describe('layers: imports run one way', () => {
  it.each([
    // the worktree stack, upward
    ['main/reconcile/bad-fixture.ts', '../tools/tool-definition.ts', 'main/tools/'],
    ['main/tools/bad-fixture.ts', '../mcp/mcp-listener.ts', 'main/mcp/'],
    ['main/platform/bad-fixture.ts', '../reconcile/reconcile-engine.ts', 'main/reconcile/'],
    // across stacks: the worktree process never loads host code, nor the host worktree code
    ['main/worktree/bad-fixture.ts', '../host/host.ts', 'main/host/'],
    ['main/tools/bad-fixture.ts', '../chat/chat-service.ts', 'main/chat/'],
    ['main/host/bad-fixture.ts', '../worktree/worktree-process.ts', 'main/worktree/'],
    ['main/chat/bad-fixture.ts', '../host/host.ts', 'main/host/'],
    // shared imports nothing of ours; production code imports no test support
    ['shared/bad-fixture.ts', '../main/platform/errors.ts', 'main/platform/'],
    ['main/mcp/bad-fixture.ts', '../testing/mcp-clients.ts', 'test support'],
    // the renderer's folders: shared pieces below the views, views beside each other, the shell on top
    ['renderer/src/reconcile/bad-fixture.ts', '../ui/worktree-view.tsx', 'renderer/src/ui/'],
    [
      'renderer/src/chat/bad-fixture.ts',
      '../reconcile/reconcile-tab.tsx',
      'renderer/src/reconcile/',
    ],
    ['renderer/src/common/bad-fixture.ts', '../chat/chat-tab.tsx', 'renderer/src/chat/'],
    ['renderer/src/store/bad-fixture.ts', '../common/format.ts', 'renderer/src/common/'],
    ['renderer/src/ui/bad-fixture.ts', '../main.tsx', 'renderer/'],
    // main/reconcile/'s own layers: specs/ -> floor/ -> notarai05/, notarai07/ -> the engine
    ['main/reconcile/specs/bad-fixture.ts', '../floor/live-index.ts', 'main/reconcile/floor/'],
    ['main/reconcile/floor/bad-fixture.ts', '../notarai07/notarai-check.ts', 'notarai07/'],
    ['main/reconcile/floor/bad-fixture.ts', '../reconcile-engine.ts', 'main/reconcile/'],
    ['main/reconcile/notarai05/bad-fixture.ts', '../notarai07/notarai-inputs.ts', 'notarai07/'],
    ['main/reconcile/notarai07/bad-fixture.ts', '../notarai05/spec-diff.ts', 'notarai05/'],
    ['main/reconcile/notarai07/bad-fixture.ts', '../reconcile-state.ts', 'main/reconcile/'],
  ])('refuses %s importing %s', async (filePath, specifier, named) => {
    const errors = await layerErrors(filePath, importOf(specifier));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(named);
  });

  it('refuses a dynamic import() against the direction too', async () => {
    const code = "void import('../host/host.ts');\n";
    expect(await layerErrors('main/reconcile/bad-fixture.ts', code)).toHaveLength(1);
  });

  it.each([
    ['main/tools/ok-fixture.ts', '../reconcile/reconcile-engine.ts'],
    ['main/worktree/ok-fixture.ts', '../reconcile/reconcile-engine.ts'],
    ['main/mcp/ok-fixture.ts', '../platform/errors.ts'],
    ['main/host/ok-fixture.ts', '../chat/chat-service.ts'],
    ['main/headless/ok-fixture.ts', '../host/host.ts'],
    ['main/host/ok-fixture.ts', '../../shared/worktree-protocol.ts'],
    ['main/mcp/ok-fixture.test.ts', '../testing/mcp-clients.ts'],
    ['main/platform/git/ok-fixture.ts', '../confined-fs.ts'],
    ['renderer/src/reconcile/ok-fixture.ts', '../common/format.ts'],
    ['renderer/src/chat/ok-fixture.ts', '../store/host-store.ts'],
    ['renderer/src/ui/ok-fixture.ts', '../reconcile/reconcile-tab.tsx'],
    ['renderer/src/ok-fixture.ts', './ui/app.tsx'],
    ['main/reconcile/floor/ok-fixture.ts', '../specs/spec-loader.ts'],
    ['main/reconcile/notarai07/ok-fixture.ts', '../floor/classify.ts'],
    ['main/reconcile/ok-fixture.ts', './notarai05/spec-diff.ts'],
    ['main/tools/ok-fixture.ts', '../reconcile/notarai07/notarai-check.ts'],
    ['main/notarai-cli/ok-fixture.ts', '../reconcile/floor/hash-cache.ts'],
  ])('allows %s importing %s', async (filePath, specifier) => {
    expect(await layerErrors(filePath, importOf(specifier))).toEqual([]);
  });
});
