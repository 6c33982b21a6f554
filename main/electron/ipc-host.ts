// Registers the HostApi on Electron's ipcMain: one `handle` per command in the shared table, each
// refusing senders that are not our window and validating its payload with the shared schema
// (runHostCommand) before the host sees it. Host events are pushed to the window's webContents.
// Takes ipcMain and the window as parameters so it is testable without Electron.
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { hostCommands, type HostCommandName } from '../../shared/host-api.ts';
import { runHostCommand } from '../host/host-commands.ts';
import type { Host } from '../host/host.ts';
import { commandChannel, EVENT_CHANNEL } from './ipc-channels.ts';

export interface HostIpcOptions {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  host: Host;
  /** True for the frames allowed to call the host (our window's main frame, our own pages). */
  isTrustedSender: (event: IpcMainInvokeEvent) => boolean;
}

/** The result of one invoke: errors cross IPC as data, so the renderer gets the exact message. */
export type IpcResult = { ok: true; value: unknown } | { ok: false; error: string };

/** Registers every command; returns the function that removes them. */
export function registerHostIpc(options: HostIpcOptions): () => void {
  const names = Object.keys(hostCommands) as HostCommandName[];
  for (const name of names) {
    options.ipcMain.handle(
      commandChannel(name),
      async (event: IpcMainInvokeEvent, input: unknown): Promise<IpcResult> => {
        if (!options.isTrustedSender(event)) {
          return { ok: false, error: `refused ${name}: the sender is not the Grove window` };
        }
        try {
          return { ok: true, value: await runHostCommand(options.host, name, input) };
        } catch (error) {
          return { ok: false, error: error instanceof Error ? error.message : String(error) };
        }
      },
    );
  }
  return () => names.forEach((name) => options.ipcMain.removeHandler(commandChannel(name)));
}

/** Forwards host events to one window until it is destroyed; returns the unsubscribe function. */
export function forwardHostEvents(host: Host, contents: Pick<WebContents, 'send' | 'isDestroyed'>) {
  const unsubscribe = host.onEvent((event) => {
    if (contents.isDestroyed()) unsubscribe();
    else contents.send(EVENT_CHANNEL, event);
  });
  return unsubscribe;
}

/**
 * A sender is trusted when it is the main frame of our window and shows our own page
 * (file:// under the app, or the dev server URL).
 */
export function isOurPage(url: string, appPageUrl: string): boolean {
  try {
    const page = new URL(url);
    const ours = new URL(appPageUrl);
    return (
      page.protocol === ours.protocol && page.host === ours.host && page.pathname === ours.pathname
    );
  } catch {
    return false;
  }
}
