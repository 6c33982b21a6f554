// Test helper: the child processes of a process as Linux's /proc shows them (command name and
// state), e.g. to check that no child is left a zombie (state Z: exited but never reaped).
import { readdir, readFile } from 'node:fs/promises';

export interface ChildProcessInfo {
  pid: number;
  /** The command name (`comm`), e.g. `sh`; Node 24 names its main thread `MainThread`. */
  command: string;
  /** The command line (empty for a zombie). */
  args: string[];
  /** One letter: R running, S sleeping, Z zombie... (proc(5)). */
  state: string;
}

/** Parses one /proc/<pid>/stat line; the command name may itself hold spaces and parentheses. */
function parseStat(stat: string): { command: string; state: string; parent: number } {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const [state = '?', parent = '0'] = stat.slice(close + 2).split(' ');
  return { command: stat.slice(open + 1, close), state, parent: Number(parent) };
}

/** Every process whose parent is `pid` (Linux only: reads /proc). */
export async function childProcesses(pid: number): Promise<ChildProcessInfo[]> {
  const children: ChildProcessInfo[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    // A process may end between the listing and the read.
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) continue;
    const { command, state, parent } = parseStat(stat);
    if (parent !== pid) continue;
    const args = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    children.push({ pid: Number(name), command, state, args: args.split('\0').filter(Boolean) });
  }
  return children;
}

/** The zombie children of `pid`, as `<command> (pid N)` for a readable assertion. */
export async function zombieChildren(pid: number): Promise<string[]> {
  return (await childProcesses(pid))
    .filter((child) => child.state === 'Z')
    .map((child) => `${child.command} (pid ${child.pid})`);
}
