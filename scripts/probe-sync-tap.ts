// Probe: what the sync's tap (main/reconcile/floor/sync-tap.ts) costs on a tree: directories watched,
// the walk's wall and CPU time, and the RSS and heap it adds. Prints one JSON line.
// Usage: node --expose-gc scripts/probe-sync-tap.ts DIR [IGNORED,NAMES]   (Linux)
import path from 'node:path';
import { SyncTap } from '../main/reconcile/floor/sync-tap.ts';

const dir = path.resolve(process.argv[2] ?? '.');
const ignore = (process.argv[3] ?? '.git,node_modules')
  .split(',')
  .filter(Boolean)
  .map((name) => path.join(dir, name));
const settle = async () => {
  globalThis.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 200));
  globalThis.gc?.();
};
await settle();
const before = process.memoryUsage();
const cpu = process.cpuUsage();
const started = performance.now();
const tap = new SyncTap({
  trees: [{ dir, ignore }],
  onPaths: () => undefined,
  isCookie: () => false,
});
tap.start();
await tap.ready;
const walkMs = performance.now() - started;
const used = process.cpuUsage(cpu);
await settle();
const after = process.memoryUsage();
const mib = (bytes: number) => Number((bytes / 2 ** 20).toFixed(1));
console.log(
  JSON.stringify({
    directories: tap.watchedCount,
    failure: tap.failure ?? null,
    walkMs: Math.round(walkMs),
    cpuMs: Math.round((used.user + used.system) / 1000),
    rssMiB: mib(after.rss - before.rss),
    heapMiB: mib(after.heapUsed - before.heapUsed),
    gcExposed: typeof globalThis.gc === 'function',
  }),
);
tap.stop();
