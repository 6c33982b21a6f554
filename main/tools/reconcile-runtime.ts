// The heavy half of the reconciliation service: the engine (git queries, better-sqlite3, BLAKE3, the
// `yaml` parser, the glob matcher, the file worker pool) and the watcher (@parcel/watcher). Only ever
// loaded with a dynamic import() by reconcile-service.ts, after the worktree process listens or
// on the first tool call that needs it; nothing on the way to `listening` may import it statically.
export { ReconcileEngine } from '../reconcile/reconcile-engine.ts';
export { ReconcileWatcher } from '../reconcile/reconcile-watcher.ts';
