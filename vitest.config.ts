// Two projects: `unit` (tests beside the code, *.test.ts: real git repos in temp dirs, real servers
// on 127.0.0.1:0, real SQLite) and `e2e` (e2e/*.spec.ts: `grove serve` driven in Debian's Chromium,
// mcp-remote as a child process). Both run under the pinned Node (node_modules/.bin/node).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./vitest.global-setup.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'main/**/*.test.ts',
            'shared/**/*.test.ts',
            'renderer/**/*.test.ts',
            'scripts/**/*.test.ts',
          ],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.spec.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
