// The Grove window: sandboxed renderer (sandbox, contextIsolation, no nodeIntegration), a strict
// Content-Security-Policy on every response, no navigation away from the app, and window.open
// denied (http(s) links open in the user's browser instead).
import { BrowserWindow, session, shell } from 'electron';
import path from 'node:path';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface MainWindowOptions {
  preloadPath: string;
  /** file:// URL of out/renderer/index.html, or the dev server URL. */
  pageUrl: string;
  iconPath?: string;
}

export function createMainWindow(options: MainWindowOptions): BrowserWindow {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: {
        ...details.responseHeaders,
        'Content-Security-Policy': [CONTENT_SECURITY_POLICY],
      },
    });
  });
  // Grove never asks for camera, notifications through the page, etc.
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) =>
    callback(false),
  );

  const window = new BrowserWindow({
    width: 1200,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    title: 'Grove',
    show: false,
    ...(options.iconPath ? { icon: options.iconPath } : {}),
    webPreferences: {
      preload: options.preloadPath,
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  window.once('ready-to-show', () => window.show());

  const isAppUrl = (url: string): boolean => {
    try {
      const target = new URL(url);
      const app = new URL(options.pageUrl);
      return target.origin === app.origin && target.pathname === app.pathname;
    } catch {
      return false;
    }
  };
  window.webContents.on('will-navigate', (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  window.webContents.on('will-redirect', (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  window.webContents.setWindowOpenHandler(({ url }) => {
    if (/^https?:\/\//.test(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  window.webContents.on('will-attach-webview', (event) => event.preventDefault());

  void window.loadURL(options.pageUrl);
  return window;
}

/** file:// URL of the built renderer next to the main bundle (out/main -> out/renderer). */
export function builtPageUrl(mainDir: string): string {
  return new URL(`file://${path.join(mainDir, '../renderer/index.html')}`).href;
}
