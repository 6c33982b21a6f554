// The service loads the engine lazily (reconcile-service.ts, "Eager vs lazy"): creating it and
// handing out its tools loads nothing; the first tool call or start() does, once. Here the engine's
// modules fail to load, as a missing native module would make them: tool calls get that as an
// error, start() rejects with it, and nothing crashes.
import { afterEach, expect, it, vi } from 'vitest';
import type { ToolContext } from './tool-definition.ts';
import { createReconcileService } from './reconcile-service.ts';

const runtime = vi.hoisted(() => ({ loads: 0 }));
vi.mock('./reconcile-runtime.ts', () => {
  runtime.loads++;
  throw new Error('cannot find better_sqlite3.node');
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('loads the engine only when needed, and reports a failure to load as a tool error', async () => {
  const warnings: string[] = [];
  const service = createReconcileService({
    root: '/nonexistent',
    onState: () => undefined,
    onWarning: (warning) => warnings.push(warning),
  });
  cleanups.push(() => service.close());
  const { tools } = await service.loadServerParts();
  expect(tools.map((tool) => tool.name)).toEqual([
    'list_affected_specs',
    'get_spec_diff',
    'get_changed_artifacts',
    'mark_reconciled',
    'clear_cache',
    'snapshot_state',
    'check_specs',
    'get_drift_score',
    'export_context',
    'list_decisions',
    'propose_decision',
  ]);
  expect(service.instructions).toContain('list_affected_specs');
  expect(runtime.loads).toBe(0);

  const ctx: ToolContext = { root: '/nonexistent', signal: new AbortController().signal };
  const [listAffected, , , , clearCache] = tools;
  await expect(listAffected?.handler({ base_branch: 'main' }, ctx)).rejects.toThrow(
    /^reconciliation engine failed to load: /,
  );
  await expect(clearCache?.handler({}, ctx)).rejects.toThrow(
    'reconciliation engine failed to load',
  );
  const notify = { resourceUpdated: vi.fn(), resourcesChanged: vi.fn(), toolsChanged: vi.fn() };
  await expect(service.start({ notify })).rejects.toThrow('reconciliation engine failed to load');
  // One shared load, whoever asked first.
  expect(runtime.loads).toBe(1);
  expect(warnings).toEqual([]);
});
