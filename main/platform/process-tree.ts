// Finding the processes a run started, wherever they went (Linux). A program Grove runs for a
// client (a just recipe, `docker compose ps`) gets a marker in its environment, `GROVE_TASK_RUN=<id>`,
// unique to the run; every process it starts inherits it, whether it stays in the run's process
// group or leaves it (`setsid`, a double fork, `nohup`). When the run ends, the processes whose
// environment holds its marker (/proc/<pid>/environ, the environment each process was started
// with) are ended with the group. What escapes: a process started with the marker removed or
// changed (`env -i`, `env -u GROVE_TASK_RUN`, sudo's reset) that also left the group, one running
// as another user (its environ is not readable), and anything started through a daemon (docker,
// systemd-run). Elsewhere than Linux, only the process group is ended.
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** The variable that marks a run's processes. */
export const RUN_MARKER_VARIABLE = 'GROVE_TASK_RUN';

/**
 * This process's part of every marker it hands out: its pid, its start time and a random part, so
 * no other process shares it (uniqueness is all a marker needs: a recipe that forged another
 * run's marker could end those processes itself anyway). Not node:crypto, which a worktree
 * process no client has called does not load (docs/performance.md, idle memory).
 */
const PROCESS_MARKER = [process.pid, Date.now(), Math.floor(Math.random() * 2 ** 32)]
  .map((part) => part.toString(36))
  .join('.');
let runSequence = 0;

/** A fresh marker for one run. */
export function newRunMarker(): string {
  return `${PROCESS_MARKER}-${++runSequence}`;
}

/** True for the markers of every run this process started. */
export function isThisProcessMarker(marker: string): boolean {
  return marker.startsWith(`${PROCESS_MARKER}-`);
}

/** Whether process trees can be searched here (Linux with /proc). */
export const CAN_FIND_MARKED = process.platform === 'linux';

const NEEDLE = Buffer.from(`${RUN_MARKER_VARIABLE}=`);

/** The marker in one process's environment block, if any. */
function markerIn(environ: Buffer): string | undefined {
  let at = environ.indexOf(NEEDLE);
  while (at !== -1) {
    if (at === 0 || environ[at - 1] === 0) {
      const start = at + NEEDLE.length;
      const end = environ.indexOf(0, start);
      return environ.toString('utf8', start, end === -1 ? environ.length : end);
    }
    at = environ.indexOf(NEEDLE, at + 1);
  }
  return undefined;
}

/** How many /proc/<pid>/environ files are read at once. */
const READ_CONCURRENCY = 8;

/**
 * The processes (other than this one) whose environment holds a marker `matches` accepts. Reads
 * every process's /proc/<pid>/environ the user may read: ~1-2 ms per 100 processes.
 */
export async function findMarkedProcesses(matches: (marker: string) => boolean): Promise<number[]> {
  if (!CAN_FIND_MARKED) return [];
  const pids = (await readdir('/proc').catch(() => [] as string[]))
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => pid !== process.pid);
  const found: number[] = [];
  for (let index = 0; index < pids.length; index += READ_CONCURRENCY) {
    await Promise.all(
      pids.slice(index, index + READ_CONCURRENCY).map(async (pid) => {
        const environ = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
        const marker = environ === undefined ? undefined : markerIn(environ);
        if (marker !== undefined && matches(marker)) found.push(pid);
      }),
    );
  }
  return found;
}

/** findMarkedProcesses, synchronously: for the last moments of this process ('exit'). */
export function findMarkedProcessesSync(matches: (marker: string) => boolean): number[] {
  if (!CAN_FIND_MARKED) return [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${name}/environ`);
    } catch {
      continue;
    }
    const marker = markerIn(environ);
    if (marker !== undefined && matches(marker)) found.push(Number(name));
  }
  return found;
}

/** Sends `signal` to each process, ignoring those already gone. */
export function signalProcesses(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}
