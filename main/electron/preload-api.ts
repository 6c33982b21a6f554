// The preload's HostApi: one named method per command (built from the shared command table, each
// bound to its own IPC channel — no generic invoke is exposed), and `onEvent`, which starts every
// subscriber with a full snapshot as the contract says. Testable with fake ipcRenderer/contextBridge.
import type { ContextBridge, IpcRenderer } from 'electron';
import {
  commandMethods,
  HostEventSchema,
  type HostApi,
  type HostEvent,
  type NativeApi,
} from '../../shared/host-api.ts';
import { commandChannel, EVENT_CHANNEL, PICK_FOLDER_CHANNEL } from './ipc-channels.ts';
import type { IpcResult } from './ipc-host.ts';

/** The name under which the renderer finds the HostApi: `window.groveHost`. */
export const HOST_API_GLOBAL = 'groveHost';
/** Native-only helpers: `window.groveNative`. */
export const NATIVE_GLOBAL = 'groveNative';

type Renderer = Pick<IpcRenderer, 'invoke' | 'on' | 'removeListener'>;

export function createPreloadHostApi(ipcRenderer: Renderer): HostApi {
  const methods = commandMethods(async (name, input) => {
    const result = (await ipcRenderer.invoke(commandChannel(name), input)) as IpcResult;
    if (!result.ok) throw new Error(result.error);
    return result.value;
  });
  return {
    ...methods,
    onEvent(listener: (event: HostEvent) => void): () => void {
      // Events that arrive before the first snapshot are held back, then delivered after it.
      let ready = false;
      let closed = false;
      const early: HostEvent[] = [];
      const onMessage = (_event: unknown, raw: unknown): void => {
        const parsed = HostEventSchema.safeParse(raw);
        if (!parsed.success || closed) return;
        if (ready) listener(parsed.data);
        else early.push(parsed.data);
      };
      ipcRenderer.on(EVENT_CHANNEL, onMessage);
      void methods.getSnapshot({}).then((snapshot) => {
        if (closed) return;
        listener({ type: 'snapshot', snapshot });
        ready = true;
        for (const event of early.splice(0)) if (event.type !== 'snapshot') listener(event);
      });
      return () => {
        closed = true;
        ipcRenderer.removeListener(EVENT_CHANNEL, onMessage);
      };
    },
  };
}

export function exposeHostApi(
  contextBridge: Pick<ContextBridge, 'exposeInMainWorld'>,
  ipcRenderer: Renderer,
): void {
  contextBridge.exposeInMainWorld(HOST_API_GLOBAL, createPreloadHostApi(ipcRenderer));
  const native: NativeApi = {
    pickRepositoryFolder: () => ipcRenderer.invoke(PICK_FOLDER_CHANNEL) as Promise<string | null>,
  };
  contextBridge.exposeInMainWorld(NATIVE_GLOBAL, native);
}
