// When a Node other than the one Grove was installed for starts bin/grove.js (the system's Node 20,
// say, on which better-sqlite3 crashes with signal 11): runs the same command line again under the
// installed Node and ends as it ends — stdio inherited (the bridge's client talks to the real
// process directly), signals passed on, its exit status (or its signal) made this process's own.
// When that Node is gone, or the Node it starts is still not the recorded one, says in one line
// which Node Grove needs and how to get it. Loaded by bin/grove.js only in that case.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GROVE = fileURLToPath(new URL('./grove.js', import.meta.url));
/** Set for the run started under the installed Node (bin/grove.js reads and clears it). */
const RERUN_VARIABLE = 'GROVE_RERUN_FROM';

/** Signals passed on to the command. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];
/** Signals a terminal sends to its whole foreground process group (Ctrl+C, Ctrl+\). */
const FROM_TERMINAL = new Set(['SIGINT', 'SIGQUIT']);

/** Says what is wrong in one line and exits 1. */
function fail(message) {
  process.stderr.write(`grove: ${message}\n`);
  process.exit(1);
}

/**
 * Whether this process is in its terminal's foreground process group: then a Ctrl+C reached the
 * command too (same group), and passing it on would make it two (`grove serve` takes a second
 * Ctrl+C as "stop waiting"). Asked only when such a signal comes.
 */
function inTerminalForeground() {
  if (process.platform === 'win32') return true; // Ctrl+C reaches every process of the console
  try {
    if (process.platform === 'linux') {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const [, , pgrp, , ttyNr, tpgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ttyNr !== '0' && pgrp === tpgid;
    }
    const ps = spawnSync('ps', ['-o', 'pgid=,tpgid=', '-p', String(process.pid)], {
      encoding: 'utf8',
    });
    const [pgid, tpgid] = ps.stdout.trim().split(/\s+/);
    return pgid !== undefined && pgid === tpgid;
  } catch {
    return false;
  }
}

/**
 * Runs `grove <args>` under `runtime` (bin/grove.js's record of the installed Node) and exits as
 * it exits; never returns. `rerunFrom` is set when this process was itself started that way.
 */
export function runUnder(runtime, args, rerunFrom) {
  const wanted = `Node ${runtime.node}${runtime.modules ? ` (ABI ${runtime.modules})` : ''}`;
  const here = `Node ${process.version} (ABI ${process.versions.modules})`;
  const reinstall = `run \`npm ci\` in ${ROOT} to install it again`;
  if (rerunFrom !== undefined) {
    fail(
      `${process.execPath} is ${here}, not the ${wanted} this install of Grove recorded; ${reinstall}`,
    );
  }
  const node = typeof runtime.execPath === 'string' ? path.resolve(ROOT, runtime.execPath) : '';
  if (!node || !existsSync(node)) {
    fail(
      `Grove runs on ${wanted}, the Node its native modules were built for, not on ${here}, ` +
        `and that Node (${node}) is gone: ${reinstall}`,
    );
  }
  const child = spawn(node, [...process.execArgv, GROVE, ...args], {
    stdio: 'inherit',
    env: { ...process.env, [RERUN_VARIABLE]: process.version },
  });
  const forward = (signal) => {
    if (FROM_TERMINAL.has(signal) && inTerminalForeground()) return;
    child.kill(signal);
  };
  for (const signal of FORWARDED) process.on(signal, forward);
  child.once('error', (error) => fail(`cannot start ${wanted} at ${node}: ${error.message}`));
  child.once('exit', (code, signal) => {
    for (const name of FORWARDED) process.off(name, forward);
    if (signal === null) process.exit(code ?? 1);
    // Ends by the same signal, as a shell reports it; else 128 + its number, as a shell would.
    process.kill(process.pid, signal);
    process.exit(128 + (constants.signals[signal] ?? 0));
  });
  return new Promise(() => {}); // the child's exit ends this process
}
