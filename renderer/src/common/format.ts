// Small formatting helpers for the views: numbers, times, durations, sizes, client labels. Every
// count the window shows goes through count() (or plural(), which uses it): 20,000, never 20000.
import type { ClientState } from '../../../shared/clients.ts';
import type { ClientInfo } from '../../../shared/model.ts';

// The window's words are English: its numbers are grouped the English way, whatever the locale.
const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** A whole number with thousands separators: 20,000. */
export function count(value: number): string {
  return COUNT.format(value);
}

export function timeOfDay(at: number): string {
  return new Date(at).toLocaleTimeString(undefined, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", or a date. */
export function relativeTime(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return new Date(at).toLocaleDateString();
}

export function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(1)} KB`;
  return `${(count / 1024 / 1024).toFixed(1)} MB`;
}

const TRANSPORT_LABELS: Record<ClientInfo['transport'], string> = {
  'streamable-http': 'Streamable HTTP',
  sse: 'SSE',
  stdio: 'stdio, through grove bridge',
};

/** How a client reaches the server, in words. */
export function transportLabel(transport: ClientInfo['transport']): string {
  return TRANSPORT_LABELS[transport];
}

const STATE_LABELS: Record<ClientState, string> = {
  connected: 'Connected',
  active: 'Active',
  idle: 'Idle',
  closed: 'Closed',
};

export function clientStateLabel(state: ClientState): string {
  return STATE_LABELS[state];
}

/** What the client's protocol version means for the user (a tooltip, not a column). */
export function eraDescription(era: ClientInfo['era']): string {
  return era === 'legacy'
    ? 'Stays connected between requests (MCP up to 2025-11-25).'
    : 'Connects anew for every request (MCP 2026-07-28).';
}

const formatCount = count;

/** "1 file", "20,000 files". */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}
