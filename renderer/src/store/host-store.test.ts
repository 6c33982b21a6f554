// The mirrored store: snapshot then deltas, command bookkeeping, and a fake HostApi standing in
// for either transport.
import { describe, expect, test } from 'vitest';
import { commandMethods, type HostApi, type HostEvent } from '../../../shared/host-api.ts';
import { serverUrls, type HostSnapshot, type WorktreeState } from '../../../shared/model.ts';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import {
  HostStore,
  hostStoreReducer,
  initialHostStoreState,
  type HostStoreState,
} from './host-store.ts';

function worktree(id: string, overrides: Partial<WorktreeState> = {}): WorktreeState {
  const port = 4100 + Number(id);
  return {
    id,
    repoId: 'r1',
    path: `/code/wt-${id}`,
    branch: `branch-${id}`,
    isMain: id === '1',
    port,
    portNotice: null,
    status: { state: 'running', port },
    urls: serverUrls(port),
    settings: { autostart: true, requireToken: true },
    clients: [],
    runningCalls: [],
    reconcileBase: null,
    reconcileTotals: null,
    ...overrides,
  };
}

const snapshot: HostSnapshot = {
  repos: [
    { id: 'r1', path: '/code/wt-1', name: 'wt-1', worktrees: [worktree('1'), worktree('2')] },
  ],
  activity: {},
  reconcile: {},
};

function statuses(state: { snapshot: HostSnapshot | null }): string[] {
  return (state.snapshot?.repos ?? []).flatMap((r) => r.worktrees.map((w) => w.status.state));
}

describe('hostStoreReducer', () => {
  test('a snapshot replaces everything; a delta replaces one worktree in place', () => {
    let state = hostStoreReducer(initialHostStoreState, {
      type: 'event',
      event: { type: 'snapshot', snapshot },
    });
    state = hostStoreReducer(state, {
      type: 'event',
      event: {
        type: 'worktree-changed',
        worktree: worktree('2', { status: { state: 'stopped' } }),
      },
    });
    expect(statuses(state)).toEqual(['running', 'stopped']);
    expect(state.snapshot?.repos[0]?.worktrees[0]).toBe(snapshot.repos[0]?.worktrees[0]);
  });

  test('a delta for a new worktree of a known repo is appended; unknown repo or no snapshot: ignored', () => {
    const before = hostStoreReducer(initialHostStoreState, {
      type: 'event',
      event: { type: 'worktree-changed', worktree: worktree('3') },
    });
    expect(before).toBe(initialHostStoreState);

    let state = hostStoreReducer(initialHostStoreState, {
      type: 'event',
      event: { type: 'snapshot', snapshot },
    });
    state = hostStoreReducer(state, {
      type: 'event',
      event: { type: 'worktree-changed', worktree: worktree('3') },
    });
    expect(state.snapshot?.repos[0]?.worktrees.map((w) => w.id)).toEqual(['1', '2', '3']);
    const unchanged = hostStoreReducer(state, {
      type: 'event',
      event: { type: 'worktree-changed', worktree: worktree('4', { repoId: 'elsewhere' }) },
    });
    expect(unchanged).toBe(state);
  });

  test('a command is pending until answered; a failure is kept until the next command', () => {
    let state = hostStoreReducer(initialHostStoreState, {
      type: 'command-sent',
      worktreeId: '1',
      command: 'start',
    });
    expect(state.pending).toEqual({ '1': 'start' });
    state = hostStoreReducer(state, {
      type: 'command-done',
      worktreeId: '1',
      command: 'start',
      error: 'port in use',
    });
    expect(state.pending).toEqual({});
    expect(state.commandErrors).toEqual({ '1': { command: 'start', message: 'port in use' } });
    state = hostStoreReducer(state, { type: 'command-sent', worktreeId: '1', command: 'stop' });
    expect(state.commandErrors).toEqual({});
  });
});

describe('the selected spec of the Reconciliation tab', () => {
  function reconcileState(...paths: string[]): ReconcileState {
    return {
      base: 'main',
      baseError: null,
      computedAt: 0,
      durationMs: 0,
      systemSpec: null,
      snapshot: null,
      specs: paths.map((path) => ({
        path,
        title: path,
        intent: path,
        behaviors: [],
        constraints: [],
        invariants: [],
        subsystems: [],
        tier: 'full' as const,
        isSystemSpec: false,
        governedFiles: 1,
        changedSinceReconciled: 0,
        changedSinceReconciledPaths: [],
        specInvalidated: false,
        affected: false,
        affectedFiles: 0,
        affectedPaths: [],
        lastReconciledAt: null,
        reconciledBy: null,
      })),
      totals: {
        specs: paths.length,
        invalidSpecs: 0,
        affectedSpecs: 0,
        specsNeedingReconciliation: 0,
        governedFiles: paths.length,
        changedSinceReconciled: 0,
        changedVsBase: 0,
      },
      specErrors: [],
      warnings: [],
    };
  }

  const api = '.notarai/api.spec.yaml';
  const ui = '.notarai/ui.spec.yaml';

  function selected(): HostStoreState {
    let state = hostStoreReducer(initialHostStoreState, {
      type: 'event',
      event: {
        type: 'snapshot',
        snapshot: { ...snapshot, reconcile: { '1': reconcileState(api, ui) } },
      },
    });
    state = hostStoreReducer(state, { type: 'select-spec', worktreeId: '1', path: ui });
    return hostStoreReducer(state, { type: 'select-spec', worktreeId: '2', path: api });
  }

  test('is kept per worktree, whatever the views do, while the spec exists', () => {
    let state = selected();
    expect(state.selectedSpecs).toEqual({ '1': ui, '2': api });
    // New states that still list the spec (counts moved), a new snapshot: the selection stays.
    state = hostStoreReducer(state, {
      type: 'event',
      event: { type: 'reconcile-state', worktreeId: '1', state: reconcileState(ui, api) },
    });
    state = hostStoreReducer(state, {
      type: 'event',
      event: {
        type: 'snapshot',
        snapshot: { ...snapshot, reconcile: { '1': reconcileState(api, ui) } },
      },
    });
    expect(state.selectedSpecs).toEqual({ '1': ui, '2': api });
  });

  test('is dropped when its spec no longer exists, for that worktree only', () => {
    let state = hostStoreReducer(selected(), {
      type: 'event',
      event: { type: 'reconcile-state', worktreeId: '1', state: reconcileState(api) },
    });
    expect(state.selectedSpecs).toEqual({ '2': api });
    // A snapshot without worktree 2's spec in its state, or without the worktree at all.
    state = hostStoreReducer(selected(), {
      type: 'event',
      event: {
        type: 'snapshot',
        snapshot: {
          ...snapshot,
          reconcile: { '1': reconcileState(api, ui), '2': reconcileState(ui) },
        },
      },
    });
    expect(state.selectedSpecs).toEqual({ '1': ui });
    state = hostStoreReducer(selected(), {
      type: 'event',
      event: {
        type: 'snapshot',
        snapshot: {
          repos: [{ ...snapshot.repos[0]!, worktrees: [worktree('1')] }],
          activity: {},
          reconcile: {},
        },
      },
    });
    expect(state.selectedSpecs).toEqual({ '1': ui });
  });
});

describe('HostStore', () => {
  function fakeApi(): HostApi & { emit(event: HostEvent): void; calls: string[] } {
    const listeners = new Set<(event: HostEvent) => void>();
    const calls: string[] = [];
    return {
      calls,
      emit: (event) => listeners.forEach((listener) => listener(event)),
      ...commandMethods((name, input) => {
        const { worktreeId } = input as { worktreeId?: string };
        if (name === 'startServer') {
          calls.push(`start ${worktreeId}`);
          return Promise.reject(new Error('port in use'));
        }
        if (name === 'stopServer') {
          calls.push(`stop ${worktreeId}`);
          return Promise.resolve({ ok: true });
        }
        return Promise.reject(new Error(`unused command ${name}`));
      }),
      onEvent: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
  }

  test('mirrors events, notifies subscribers and runs commands without touching the mirror', async () => {
    const api = fakeApi();
    const store = new HostStore({ kind: 'electron', api });
    let notified = 0;
    store.subscribe(() => notified++);
    const disconnect = store.connect();
    expect(store.getState().connection.state).toBe('connecting');

    api.emit({ type: 'snapshot', snapshot });
    expect(store.getState().connection.state).toBe('open');
    expect(statuses(store.getState())).toEqual(['running', 'running']);
    expect(notified).toBeGreaterThan(0);

    const stopping = store.stopServer('2');
    expect(store.getState().pending).toEqual({ '2': 'stop' });
    await stopping;
    expect(store.getState().pending).toEqual({});
    expect(statuses(store.getState())).toEqual(['running', 'running']); // until the host says so

    await store.startServer('1');
    expect(store.getState().commandErrors['1']).toEqual({
      command: 'start',
      message: 'port in use',
    });
    expect(api.calls).toEqual(['stop 2', 'start 1']);

    disconnect();
    api.emit({ type: 'snapshot', snapshot: { repos: [], activity: {}, reconcile: {} } });
    expect(statuses(store.getState())).toEqual(['running', 'running']);
  });

  test('without a transport it reports why and does nothing', async () => {
    const store = new HostStore({ kind: 'unavailable', message: 'no token' });
    store.connect();
    expect(store.getState().connection).toEqual({ state: 'failed', message: 'no token' });
    await store.startServer('1');
    expect(store.getState().pending).toEqual({});
  });
});
