// The IPC channel names between the Electron main process and the preload. One channel per HostApi
// command (so each can be registered, and checked, on its own), one for host events, and the few
// native-only calls (folder picker).
import type { HostCommandName } from '../../shared/host-api.ts';

export const commandChannel = (name: HostCommandName): string => `grove:command:${name}`;
export const EVENT_CHANNEL = 'grove:event';
export const PICK_FOLDER_CHANNEL = 'grove:native:pick-folder';
