// The Electron launcher of worktree processes: Electron's utilityProcess (a Node child process
// managed by Chromium's process model), implementing the same WorktreeLauncher interface as the
// headless fork launcher.
import { utilityProcess } from 'electron';
import { worktreeProcessEnv, type WorktreeLauncher } from '../host/worktree-launcher.ts';

export function utilityProcessLauncher(entryPath: string): WorktreeLauncher {
  return {
    launch() {
      const child = utilityProcess.fork(entryPath, [], {
        serviceName: 'Grove worktree server',
        stdio: 'inherit',
        env: worktreeProcessEnv(),
      });
      return {
        get pid() {
          return child.pid;
        },
        send: (message) => child.postMessage(message),
        onMessage: (listener) => child.on('message', listener),
        onExit: (listener) => child.once('exit', (code) => listener(code, null)),
        kill: () => void child.kill(),
      };
    },
  };
}
