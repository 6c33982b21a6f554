// Preload script of the Grove window (sandboxed): exposes `window.groveHost` (the HostApi) and
// `window.groveNative` (folder picker), nothing else.
import { contextBridge, ipcRenderer } from 'electron';
import { exposeHostApi } from './preload-api.ts';

exposeHostApi(contextBridge, ipcRenderer);
