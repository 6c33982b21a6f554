// Chooses the renderer's one HostApi: the Electron preload's bridge (`window.groveHost`) when
// present, otherwise the HTTP client of `grove serve` for the page the host served.
import type { HostApi, NativeApi } from '../../../shared/host-api.ts';
import type { ConnectionSource } from './connection.ts';
import { createHttpHostApiFromLocation } from './http-host-api.ts';

declare global {
  interface Window {
    /** Exposed by the Electron preload (contextBridge); absent in a plain browser. */
    groveHost?: HostApi;
    /** Native helpers of the Electron preload (the system folder picker); absent in a browser. */
    groveNative?: NativeApi;
  }
}

export type HostTransport =
  | { kind: 'electron'; api: HostApi }
  | { kind: 'http'; api: HostApi; connection: ConnectionSource }
  | { kind: 'unavailable'; message: string };

export function pickHostApi(win: Window = window): HostTransport {
  if (win.groveHost) return { kind: 'electron', api: win.groveHost };
  const http = createHttpHostApiFromLocation(win.location);
  if (http) return { kind: 'http', api: http, connection: http };
  return {
    kind: 'unavailable',
    message:
      'This page needs its access token. Open the full address printed by grove serve, ' +
      'including its ?token=… part.',
  };
}
