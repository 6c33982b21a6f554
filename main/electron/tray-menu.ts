// The tray icon: lists every worktree with its server status, Start all / Stop all, Open Grove and
// Quit; rebuilt on every host event so it is always current.
import { Menu, Tray, nativeImage, type MenuItemConstructorOptions } from 'electron';
import type { HostSnapshot, ServerStatus } from '../../shared/model.ts';
import type { Host } from '../host/host.ts';

function statusLabel(status: ServerStatus): string {
  switch (status.state) {
    case 'running':
      return `running on ${status.port}`;
    case 'error':
      return 'error';
    default:
      return status.state;
  }
}

export function trayMenuTemplate(
  snapshot: HostSnapshot,
  actions: { startAll(): void; stopAll(): void; open(): void; quit(): void },
): MenuItemConstructorOptions[] {
  const worktrees = snapshot.repos.flatMap((repo) =>
    repo.worktrees.map((worktree) => ({
      label: `${repo.name} · ${worktree.branch ?? 'detached'} — ${statusLabel(worktree.status)}`,
      enabled: false,
    })),
  );
  return [
    ...(worktrees.length > 0 ? worktrees : [{ label: 'No repositories open', enabled: false }]),
    { type: 'separator' },
    { label: 'Start all servers', click: actions.startAll },
    { label: 'Stop all servers', click: actions.stopAll },
    { type: 'separator' },
    { label: 'Open Grove', click: actions.open },
    { label: 'Quit Grove', click: actions.quit },
  ];
}

export function createTray(
  host: Host,
  iconPath: string,
  actions: { open(): void; quit(): void },
): Tray {
  const tray = new Tray(nativeImage.createFromPath(iconPath));
  tray.setToolTip('Grove');
  const everyWorktree = (): string[] =>
    host.snapshot().repos.flatMap((repo) => repo.worktrees.map((worktree) => worktree.id));
  const rebuild = (): void => {
    tray.setContextMenu(
      Menu.buildFromTemplate(
        trayMenuTemplate(host.snapshot(), {
          startAll: () =>
            everyWorktree().forEach((id) => void host.startServer(id).catch(() => {})),
          stopAll: () => everyWorktree().forEach((id) => void host.stopServer(id)),
          ...actions,
        }),
      ),
    );
  };
  // The tray lives as long as the app (and the host), so the subscription is never removed.
  host.onEvent((event) => {
    if (event.type !== 'activity') rebuild();
  });
  tray.on('click', actions.open);
  return tray;
}
