// The app's build: Electron main (window + host), the preload, and the React renderer. The
// worktree process is bundled by scripts/build-worktree.ts (`npm run build` runs both).
// `grove serve` serves out/renderer; its host runs from the TypeScript sources under the pinned
// Node (type stripping) and starts the bundled worktree processes.
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  main: {
    build: {
      rollupOptions: {
        input: {
          // The worktree process and its worker threads are bundled apart, with their
          // dependencies, into out/worktree/ (scripts/build-worktree.ts).
          'electron-main': resolve(__dirname, 'main/electron/electron-main.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      // A sandboxed preload can require only `electron` (and a few built-ins), and cannot be an ES
      // module: bundle every dependency (zod) into one CommonJS file.
      externalizeDeps: false,
      rollupOptions: {
        input: { preload: resolve(__dirname, 'main/electron/preload.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, 'renderer'),
    plugins: [react()],
    build: {
      rollupOptions: { input: resolve(__dirname, 'renderer/index.html') },
    },
  },
});
