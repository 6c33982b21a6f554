// Test support: how long work held the event loop, and another process holding a SQLite lock —
// the two things the "never stall" tests and bench:attacks measure.
import { spawn } from 'node:child_process';

/**
 * Runs `work` (started from a timer, so that even its synchronous first part is measured) while a
 * 10 ms interval ticks; the largest gap between ticks is how long the event loop was held.
 */
export async function worstLoopStall<T>(
  work: () => Promise<T>,
): Promise<{ stallMs: number; result: PromiseSettledResult<T> }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    await new Promise((resolve) => setTimeout(resolve, 30));
    const [result] = await Promise.allSettled([work()]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    return { stallMs, result: result as PromiseSettledResult<T> };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Another process (as NotarAI's CLI or a backup tool would) takes an exclusive lock on a SQLite
 * database for `holdMs`. Resolves once the lock is held, with a promise of that process's exit.
 */
export async function lockSqliteFromAnotherProcess(
  dbPath: string,
  holdMs: number,
): Promise<{ exited: Promise<void> }> {
  const script =
    "const Database = require('better-sqlite3');" +
    'const db = new Database(process.argv[1]);' +
    "db.exec('BEGIN EXCLUSIVE');" +
    "process.stdout.write('locked\\n');" +
    `setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${holdMs});`;
  const child = spawn(process.execPath, ['-e', script, dbPath], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`locking process exited early (${code})`)));
  });
  return { exited };
}
