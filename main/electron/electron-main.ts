// Electron main process: a thin shell over the host. Takes the single-instance lock, opens the
// host (app database in userData, worktree processes through utilityProcess), registers the
// HostApi on IPC for our window only, shows the window, tray and menu, notifies when a server goes
// to `error`, and stops every server before quitting. Like `grove serve`, it holds the data
// directory's host lock (main/host/host-lock.ts): with `grove serve` running there, it says so and
// quits. Started with `bridge` as its first argument (`Grove bridge <worktree>`, what the Connect
// tab gives Claude Desktop), it is the stdio bridge instead (main/bridge/): no window, no tray, no
// single-instance lock, no host lock.
import type { BrowserWindow } from 'electron';
import { app, dialog, ipcMain, Menu, Notification } from 'electron';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultDataDirectory } from '../host/data-directory.ts';
import { sourceCheckoutLauncher } from '../host/bridge-launcher.ts';
import { Host } from '../host/host.ts';
import { acquireHostLock, HostRunningError, type HostLock } from '../host/host-lock.ts';
import { UserError } from '../platform/errors.ts';
import { runBridgeCommand } from '../bridge/bridge-command.ts';
import { forwardHostEvents, isOurPage, registerHostIpc } from './ipc-host.ts';
import { PICK_FOLDER_CHANNEL } from './ipc-channels.ts';
import { builtPageUrl, createMainWindow } from './main-window.ts';
import { SecretStore } from './secret-store.ts';
import { createTray } from './tray-menu.ts';
import { utilityProcessLauncher } from './utility-process-launcher.ts';

// The same data directory `grove serve` uses (GROVE_DATA_DIR when set): one function decides it.
// Set before the app is ready, so Electron keeps its own state there too.
app.setPath('userData', defaultDataDirectory());

const mainDir = path.dirname(fileURLToPath(import.meta.url));
const pageUrl = process.env.ELECTRON_RENDERER_URL ?? builtPageUrl(mainDir);
const iconPath = path.join(app.getAppPath(), 'assets', 'icon.png');

let host: Host | undefined;
/** The data directory's host lock (main/host/host-lock.ts), held from start to quit. */
let hostLock: HostLock | undefined;
let window: BrowserWindow | undefined;
let quitting = false;

function showWindow(): void {
  if (!host) return;
  if (window && !window.isDestroyed()) {
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
    return;
  }
  window = createMainWindow({
    preloadPath: path.join(mainDir, '../preload/preload.cjs'),
    pageUrl,
    iconPath,
  });
  const contents = window.webContents;
  const stopForwarding = forwardHostEvents(host, contents);
  window.on('closed', () => {
    stopForwarding();
    window = undefined;
  });
}

function notifyErrors(current: Host): void {
  const lastState = new Map<string, string>();
  current.onEvent((event) => {
    if (event.type !== 'worktree-changed') return;
    const { worktree } = event;
    const previous = lastState.get(worktree.id);
    lastState.set(worktree.id, worktree.status.state);
    if (worktree.status.state === 'error' && previous !== 'error' && Notification.isSupported()) {
      new Notification({
        title: `Grove: ${worktree.branch ?? 'detached'} server failed`,
        body: worktree.status.message,
      }).show();
    }
  });
}

async function start(): Promise<void> {
  const dataDir = app.getPath('userData');
  // One host per data directory: `grove serve` on the same one holds it, or a previous app is
  // still stopping (waited for). Another instance of this app never gets here (single-instance).
  try {
    hostLock = await acquireHostLock(dataDir, { shell: 'app' });
  } catch (error) {
    if (!(error instanceof HostRunningError)) {
      // A lock Grove cannot hold (host.lock read-only, owned by root, a FIFO or a directory):
      // the message names the file and the fix (host-lock.ts); never a start without a lock.
      if (!(error instanceof UserError)) throw error;
      await dialog.showMessageBox({
        type: 'error',
        title: 'Grove cannot start',
        message: 'Grove cannot lock its data directory',
        detail: error.message,
      });
      app.exit(1);
      return;
    }
    await dialog.showMessageBox({
      type: 'info',
      title: 'Grove is already running',
      message: 'Grove is already running for this data directory',
      detail: `${error.message}\n\nStop it (Ctrl+C in its terminal) and open the app again, or use the browser UI it serves.`,
    });
    app.exit(1);
    return;
  }
  host = await Host.open({
    dataDir,
    launcher: utilityProcessLauncher(path.join(mainDir, '../worktree/worktree-process.js')),
    // The bridge command the Connect tab gives stdio clients: this binary when installed; from a
    // source checkout, its pinned Node with bin/grove.js.
    groveLauncher: app.isPackaged
      ? { command: process.execPath, args: [] }
      : sourceCheckoutLauncher(path.join(app.getAppPath(), 'node_modules', '.bin', 'node')),
    // The chat's API key lives in safeStorage, never in the renderer.
    chat: { secrets: new SecretStore(dataDir) },
  });
  registerHostIpc({
    ipcMain,
    host,
    isTrustedSender: (event) =>
      window !== undefined &&
      !window.isDestroyed() &&
      event.sender === window.webContents &&
      event.senderFrame !== null &&
      event.senderFrame === window.webContents.mainFrame &&
      isOurPage(event.senderFrame.url, pageUrl),
  });
  ipcMain.handle(PICK_FOLDER_CHANNEL, async (event) => {
    if (!window || event.sender !== window.webContents) return null;
    const result = await dialog.showOpenDialog(window, {
      title: 'Add repository',
      properties: ['openDirectory'],
    });
    return result.canceled ? null : (result.filePaths[0] ?? null);
  });
  notifyErrors(host);
  Menu.setApplicationMenu(
    Menu.buildFromTemplate([
      ...(process.platform === 'darwin' ? [{ role: 'appMenu' as const }] : []),
      { role: 'fileMenu' },
      { role: 'editMenu' },
      { role: 'viewMenu' },
      { role: 'windowMenu' },
    ]),
  );
  createTray(host, iconPath, { open: showWindow, quit: () => app.quit() });
  for (const failure of await host.restoreRepos()) {
    console.warn(`grove: skipped ${failure.path}: ${failure.error}`);
  }
  void host.startAll();
  hostLock.publish({ state: 'running' });
  showWindow();
}

/** The arguments after the app: the packaged binary has no app path before them. */
const userArgs = process.argv.slice(app.isPackaged ? 1 : 2);

if (userArgs[0] === 'bridge') {
  app.dock?.hide();
  runBridgeCommand(userArgs.slice(1)).then(
    (code) => app.exit(code),
    (error: unknown) => {
      process.stderr.write(`grove: ${error instanceof Error ? error.message : String(error)}\n`);
      app.exit((error as { cause?: unknown }).cause === 'usage' ? 2 : 1);
    },
  );
} else if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', showWindow);
  app.on('activate', showWindow);
  app.on('window-all-closed', () => {
    // Servers keep running in the tray; Quit stops them.
  });
  app.on('before-quit', (event) => {
    if (quitting || !host) return;
    event.preventDefault();
    quitting = true;
    hostLock?.publish({ state: 'stopping' });
    // The lock goes only once every worktree process has exited: a new Grove may then take ports.
    void host.close().finally(() => {
      hostLock?.release();
      app.quit();
    });
  });
  app
    .whenReady()
    .then(start)
    .catch((error: unknown) => {
      dialog.showErrorBox(
        'Grove could not start',
        String(error instanceof Error ? error.message : error),
      );
      app.exit(1);
    });
}
