// Node built-ins for the code a worktree process runs, through `require` rather than ESM imports,
// and some only on first use (docs/performance.md, idle memory):
// - Node's ESM facade of a built-in reads every one of its exports, which runs their lazy getters:
//   `node:http`'s load undici (Node's fetch, ~13 MB), `node:util`'s worker_threads and parseArgs.
//   Required, a built-in loads only itself.
// - node:crypto (OpenSSL's bindings and WebCrypto) and node:worker_threads cost ~1 MB each that a
//   worktree process no client has called never needs: their users ask for them when they run.
import type * as NodeCrypto from 'node:crypto';
import { createRequire } from 'node:module';
import type * as WorkerThreads from 'node:worker_threads';

/** `require` for built-ins: `requireBuiltin<typeof NodeHttp>('node:http')`. */
export const requireBuiltin = createRequire(import.meta.url) as <T>(id: `node:${string}`) => T;

let crypto: typeof NodeCrypto | undefined;
/** node:crypto, loaded by the first call (the token check, the names of temporary files). */
export function nodeCrypto(): typeof NodeCrypto {
  return (crypto ??= requireBuiltin<typeof NodeCrypto>('node:crypto'));
}

/** The SHA-256 of a text (UTF-8), as lowercase hex. */
export function sha256Hex(text: string): string {
  return nodeCrypto().createHash('sha256').update(text).digest('hex');
}

let workerThreads: typeof WorkerThreads | undefined;
/** node:worker_threads, loaded by the first call (the worker pool's first worker). */
export function nodeWorkerThreads(): typeof WorkerThreads {
  return (workerThreads ??= requireBuiltin<typeof WorkerThreads>('node:worker_threads'));
}
