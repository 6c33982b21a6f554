// The IPC layer with fake ipcMain / ipcRenderer / contextBridge objects (no Electron needed): every
// HostApi command is registered exactly once, payloads are validated with the shared schemas,
// foreign senders are refused, and the preload exposes named methods only.
import type { IpcMainInvokeEvent } from 'electron';
import { afterEach, describe, expect, it } from 'vitest';
import { hostCommands, type HostEvent } from '../../shared/host-api.ts';
import { Host } from '../host/host.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { commandChannel, EVENT_CHANNEL, PICK_FOLDER_CHANNEL } from './ipc-channels.ts';
import { isOurPage, registerHostIpc, type IpcResult } from './ipc-host.ts';
import {
  createPreloadHostApi,
  exposeHostApi,
  HOST_API_GLOBAL,
  NATIVE_GLOBAL,
} from './preload-api.ts';

type Handler = (event: IpcMainInvokeEvent, input?: unknown) => Promise<IpcResult>;

function fakeIpcMain() {
  const handlers = new Map<string, Handler>();
  const registrations: string[] = [];
  return {
    handlers,
    registrations,
    handle(channel: string, handler: Handler) {
      if (handlers.has(channel)) throw new Error(`second handler for ${channel}`);
      registrations.push(channel);
      handlers.set(channel, handler);
    },
    removeHandler(channel: string) {
      handlers.delete(channel);
    },
  };
}

const trusted = { senderFrame: { url: 'file:///app/index.html' } } as unknown as IpcMainInvokeEvent;
const foreign = { senderFrame: { url: 'https://evil.example/' } } as unknown as IpcMainInvokeEvent;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const host = await Host.open({ dataDir: await makeTempDir(), worktreePollMs: 0 });
  cleanups.push(() => host.close());
  const ipcMain = fakeIpcMain();
  const unregister = registerHostIpc({
    ipcMain: ipcMain as never,
    host,
    isTrustedSender: (event) => isOurPage(event.senderFrame?.url ?? '', 'file:///app/index.html'),
  });
  return { host, ipcMain, unregister };
}

describe('registerHostIpc', () => {
  it('registers every HostApi command exactly once, and removes them all', async () => {
    const { ipcMain, unregister } = await setup();
    const expected = Object.keys(hostCommands).map((name) => commandChannel(name as never));
    expect([...ipcMain.registrations].sort()).toEqual([...expected].sort());
    expect(new Set(ipcMain.registrations).size).toBe(ipcMain.registrations.length);
    unregister();
    expect(ipcMain.handlers.size).toBe(0);
  });

  it('answers a trusted sender and refuses a foreign one without running the command', async () => {
    const { ipcMain } = await setup();
    const getSnapshot = ipcMain.handlers.get(commandChannel('getSnapshot'))!;
    expect(await getSnapshot(trusted, {})).toEqual({
      ok: true,
      value: { repos: [], activity: {}, reconcile: {} },
    });
    expect(await getSnapshot(foreign, {})).toEqual({
      ok: false,
      error: 'refused getSnapshot: the sender is not the Grove window',
    });
  });

  it('refuses invalid payloads with the reason', async () => {
    const { ipcMain } = await setup();
    const stop = ipcMain.handlers.get(commandChannel('stopServer'))!;
    const missing = await stop(trusted, {});
    expect(missing.ok).toBe(false);
    expect(!missing.ok && missing.error).toMatch(/^invalid input for stopServer: /);
    const wrongType = await ipcMain.handlers.get(commandChannel('setWorktreePort'))!(trusted, {
      worktreeId: '1',
      port: 'eighty',
    });
    expect(!wrongType.ok && wrongType.error).toMatch(/^invalid input for setWorktreePort: /);
    const unknown = await stop(trusted, { worktreeId: '999' });
    expect(unknown).toEqual({ ok: false, error: 'unknown worktree id: 999' });
  });

  it('runs a real command end to end: adding a repository', async () => {
    const { ipcMain, host } = await setup();
    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    const result = await ipcMain.handlers.get(commandChannel('addRepo'))!(trusted, {
      path: repo.root,
    });
    expect(result).toMatchObject({ ok: true, value: { path: repo.root, name: 'repo' } });
    expect(host.snapshot().repos).toHaveLength(1);
  });
});

describe('isOurPage', () => {
  it('accepts only the app page itself', () => {
    const page = 'file:///opt/Grove/resources/app.asar/out/renderer/index.html';
    expect(isOurPage(page, page)).toBe(true);
    expect(isOurPage(`${page}?x=1`, page)).toBe(true);
    expect(isOurPage('file:///tmp/evil.html', page)).toBe(false);
    expect(isOurPage('http://127.0.0.1:5173/', page)).toBe(false);
    expect(isOurPage('not a url', page)).toBe(false);
  });
});

describe('the preload HostApi', () => {
  function fakeIpcRenderer(answers: (channel: string, input: unknown) => IpcResult) {
    const listeners = new Set<(event: unknown, payload: unknown) => void>();
    const invoked: string[] = [];
    return {
      invoked,
      emit: (payload: unknown) => listeners.forEach((listener) => listener({}, payload)),
      invoke: async (channel: string, input: unknown) => {
        invoked.push(channel);
        return answers(channel, input);
      },
      on: (channel: string, listener: (event: unknown, payload: unknown) => void) => {
        expect(channel).toBe(EVENT_CHANNEL);
        listeners.add(listener);
      },
      removeListener: (_channel: string, listener: (event: unknown, payload: unknown) => void) => {
        listeners.delete(listener);
      },
      listenerCount: () => listeners.size,
    };
  }

  it('has one named method per command, each on its own channel, and turns refusals into errors', async () => {
    const ipc = fakeIpcRenderer((channel) =>
      channel === commandChannel('stopServer')
        ? { ok: false, error: 'unknown worktree id: 7' }
        : { ok: true, value: { ok: true } },
    );
    const api = createPreloadHostApi(ipc as never);
    expect(Object.keys(api).sort()).toEqual([...Object.keys(hostCommands), 'onEvent'].sort());
    await expect(api.startServer({ worktreeId: '1' })).resolves.toEqual({ ok: true });
    await expect(api.stopServer({ worktreeId: '7' })).rejects.toThrow('unknown worktree id: 7');
    expect(ipc.invoked).toEqual([commandChannel('startServer'), commandChannel('stopServer')]);
  });

  it('starts every subscriber with a snapshot, then forwards valid events only', async () => {
    const snapshot = { repos: [], activity: {}, reconcile: {} };
    const ipc = fakeIpcRenderer(() => ({ ok: true, value: snapshot }));
    const api = createPreloadHostApi(ipc as never);
    const received: HostEvent[] = [];
    const unsubscribe = api.onEvent((event) => received.push(event));
    const early: HostEvent = { type: 'activity', worktreeId: '1', entries: [] };
    ipc.emit(early); // arrives before the snapshot answer: held back
    await new Promise((resolve) => setTimeout(resolve, 0));
    ipc.emit({ type: 'no-such-event' });
    ipc.emit(early);
    expect(received).toEqual([{ type: 'snapshot', snapshot }, early, early]);
    unsubscribe();
    expect(ipc.listenerCount()).toBe(0);
  });

  it('exposes exactly window.groveHost and window.groveNative', async () => {
    const exposed: Record<string, unknown> = {};
    const ipc = fakeIpcRenderer(() => ({ ok: true, value: '/picked/repo' }));
    exposeHostApi(
      { exposeInMainWorld: (key: string, value: unknown) => (exposed[key] = value) },
      ipc as never,
    );
    expect(Object.keys(exposed).sort()).toEqual([HOST_API_GLOBAL, NATIVE_GLOBAL].sort());
    const native = exposed[NATIVE_GLOBAL] as { pickRepositoryFolder(): Promise<unknown> };
    expect(Object.keys(native)).toEqual(['pickRepositoryFolder']);
    await native.pickRepositoryFolder();
    expect(ipc.invoked).toEqual([PICK_FOLDER_CHANNEL]);
  });
});
