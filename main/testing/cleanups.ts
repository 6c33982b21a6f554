// Test support: what a test starts (a server, a host, a temp directory) is pushed as a cleanup
// and undone after each test, the last started first, whatever the test's outcome.
import { afterEach } from 'vitest';

/** Cleanups run after each test of the file, newest first; a failing one does not stop the rest. */
export function cleanupsAfterEach(): (() => unknown)[] {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await Promise.resolve()
        .then(cleanup)
        .catch(() => undefined);
    }
  });
  return cleanups;
}
