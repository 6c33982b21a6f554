// Helpers for the fault, load and reconnect specs and the server benchmark: which process listens on
// a loopback port (read from /proc, Linux only), its resident memory, and SDK clients that call
// read_file in bounded loops and count what failed.
import { readdir, readFile, readlink } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import { connectClient, type Leg } from '../../main/testing/mcp-clients.ts';

export type { Leg };
export const LEGS: readonly Leg[] = ['sse', 'legacy-http', 'modern-http'];

/** Inodes of the TCP sockets listening on 127.0.0.1:port (from /proc/net/tcp). */
async function listeningInodes(port: number): Promise<Set<string>> {
  const text = await readFile('/proc/net/tcp', 'utf8');
  const wanted = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // fields: sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode ...
    const [, local, , state, , , , , , inode] = fields;
    if (local?.endsWith(wanted) && state === '0A' && inode && inode !== '0') inodes.add(inode);
  }
  return inodes;
}

/**
 * The pid of the process holding the listening socket on 127.0.0.1:port, or undefined. Matches the
 * socket's inode against every readable /proc/<pid>/fd link, so it needs no help from the host.
 */
export async function pidListeningOn(port: number): Promise<number | undefined> {
  const inodes = await listeningInodes(port);
  if (inodes.size === 0) return undefined;
  const targets = new Set([...inodes].map((inode) => `socket:[${inode}]`));
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = await readdir(`/proc/${entry}/fd`);
    } catch {
      continue; // not ours, or gone
    }
    for (const fd of fds) {
      const link = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
      if (targets.has(link)) return Number(entry);
    }
  }
  return undefined;
}

/** VmRSS of a process in bytes (undefined once it is gone). */
export async function rssBytes(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const match = status?.match(/^VmRSS:\s+(\d+)\s+kB/m);
  return match ? Number(match[1]) * 1024 : undefined;
}

/** The parent pid of a process (undefined once it is gone). */
export async function parentPid(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  // After the last ')' (the command name may contain anything): state ppid ...
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[1]);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export const MB = 1024 * 1024;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One read_file call; throws unless it returned the file's content without isError. */
export async function readFileOnce(
  client: Client,
  file: string,
  expected: string,
  timeoutMs = 10_000,
): Promise<void> {
  const result = await client.callTool(
    { name: 'read_file', arguments: { path: file } },
    { timeout: timeoutMs },
  );
  if (result.isError) throw new Error(`read_file returned isError: ${JSON.stringify(result)}`);
  const content = (result.structuredContent as { content?: unknown } | undefined)?.content;
  if (content !== expected) throw new Error(`read_file returned ${JSON.stringify(content)}`);
}

export interface Failure {
  at: number;
  message: string;
}

/** Per-client tallies of a hammering loop. */
export interface Tally {
  ok: number;
  failures: Failure[];
  /** Time of each successful call's completion (only kept when asked). */
  okTimes: number[];
}

export interface HammerOptions {
  port: number;
  token: string;
  leg: Leg;
  file: string;
  expected: string;
  /** Stops once this is true (checked before each call). */
  stop: () => boolean;
  /** Hard bound on calls. */
  maxCalls: number;
  /** Reconnect after a failure (for a server that is expected to die) instead of giving up. */
  reconnect?: boolean;
  keepOkTimes?: boolean;
  /** Pause after each successful call (default 0: back to back). */
  thinkMs?: number;
}

/**
 * One client calling read_file in a bounded loop. Without `reconnect`, the first failure of the
 * connection ends the loop (every later call would fail the same way). Never throws.
 */
export async function hammer(options: HammerOptions): Promise<Tally> {
  const tally: Tally = { ok: 0, failures: [], okTimes: [] };
  let client: Client | undefined;
  let calls = 0;
  const fail = (error: unknown): void => {
    tally.failures.push({
      at: Date.now(),
      message: error instanceof Error ? error.message : String(error),
    });
  };
  while (!options.stop() && calls < options.maxCalls) {
    calls++;
    try {
      client ??= (await connectClient(options.port, options.leg, options.token)).client;
      await readFileOnce(client, options.file, options.expected);
      tally.ok++;
      if (options.keepOkTimes) tally.okTimes.push(Date.now());
      if (options.thinkMs) await sleep(options.thinkMs);
    } catch (error) {
      fail(error);
      await client?.close().catch(() => undefined);
      client = undefined;
      if (!options.reconnect) break;
      await sleep(50);
    }
  }
  await client?.close().catch(() => undefined);
  return tally;
}
