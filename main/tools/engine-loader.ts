// How a reconciliation tool reaches its worktree's engine: loaded lazily (reconcile-service.ts), so
// the tool modules name the engine's type only and never load it.
import type { ReconcileEngine } from '../reconcile/reconcile-engine.ts';

/** Resolves to the worktree's engine, loading it on first use. */
export type EngineLoader = () => Promise<ReconcileEngine>;
