import { describe, expect, it } from 'vitest';
import { forkLauncher } from './worktree-launcher.ts';

describe('forkLauncher', () => {
  it('survives messages sent to a worktree process that was just killed (no EPIPE crash)', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        const child = forkLauncher.launch();
        const exited = new Promise<void>((resolve) => child.onExit(() => resolve()));
        let gone = false;
        void exited.then(() => (gone = true));
        child.kill();
        // The host keeps talking to a worktree until it sees the exit (a stop, a token change):
        // every one of those writes may hit the closed pipe.
        for (let i = 0; i < 2_000 && !gone; i++) {
          child.send({ type: 'set-token', token: 'x', requireToken: true });
          await new Promise((resolve) => setImmediate(resolve));
        }
        await exited;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
