// The MCP SDK's Node adapter (@modelcontextprotocol/node), loaded on the first Streamable HTTP
// request rather than when a worktree process starts: the module reads `globalThis.Headers` as it
// loads, and that global's first read loads undici — about 13 MB of RSS in every worktree process,
// even one no client ever calls (docs/performance.md, idle memory).
import type * as NodeAdapterModule from '@modelcontextprotocol/node';

type NodeAdapter = typeof NodeAdapterModule;

let adapter: Promise<NodeAdapter> | undefined;

/** The adapter module, imported once per process. */
export function loadNodeAdapter(): Promise<NodeAdapter> {
  return (adapter ??= import('@modelcontextprotocol/node'));
}
