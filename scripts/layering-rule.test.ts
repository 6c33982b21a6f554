// Proves the layering rule in eslint.config.js bites: fixtures that import `electron` outside
// main/electron/, Node built-ins in renderer/ or shared/, or main/ from renderer/ fail lint, and the
// allowed imports pass.
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
