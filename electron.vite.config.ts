// The one build: Electron main (window + host + worktree process entry), the preload, and the
// React renderer. `grove serve` serves out/renderer; the headless host itself runs from the
// TypeScript sources under the pinned Node (type stripping), so it needs no bundle.
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  main: {
    build: {
      rollupOptions: {
        input: {
          'electron-main': resolve(__dirname, 'main/electron/electron-main.ts'),
          'worktree-process': resolve(__dirname, 'main/worktree/worktree-process.ts'),
          // grep's worker threads (main/tools/grep-pool.ts starts them by file name).
          'grep-worker': resolve(__dirname, 'main/tools/grep-worker.ts'),
          // The reconciliation engine's stat and hashing worker threads (main/reconcile/file-pool.ts).
          'file-worker': resolve(__dirname, 'main/reconcile/file-worker.ts'),
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
