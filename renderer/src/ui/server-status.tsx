// How one server's status reads: a coloured dot and a sentence ("Running on port 4123",
// "Restarting in 20 s — last error: …"). Times count down / up once a second while shown. While the
// window cannot reach the host, the last status it heard may be stale: `known={false}` says the
// state is unknown instead of repeating it.
import type { ServerStatus } from '../../../shared/model.ts';
import { useNow } from '../common/use-now.ts';

function seconds(ms: number): string {
  return `${Math.max(0, Math.ceil(ms / 1000))} s`;
}

/** What a server's status reads as while the host cannot be reached. */
export const UNKNOWN_STATUS = 'State unknown: Grove cannot reach the host';

export function statusLabel(status: ServerStatus, now: number = Date.now(), known = true): string {
  if (!known) return UNKNOWN_STATUS;
  switch (status.state) {
    case 'stopped':
      return 'Stopped';
    case 'starting':
      return status.detail === undefined ? 'Starting…' : `Starting… ${status.detail}`;
    case 'running':
      return status.busySinceMs === undefined
        ? `Running on port ${status.port}`
        : `Running on port ${status.port} — busy, not answering for ${seconds(now - status.busySinceMs)}`;
    case 'error':
      return status.restartAt === undefined
        ? `Error: ${status.message}`
        : `Restarting in ${seconds(status.restartAt - now)} — last error: ${status.message}`;
  }
}

export function StatusDot({ status, known = true }: { status: ServerStatus; known?: boolean }) {
  const state = known ? status.state : 'unknown';
  return <span className={`status-dot status-dot--${state}`} aria-hidden="true" />;
}

export function ServerStatusText({
  status,
  known = true,
}: {
  status: ServerStatus;
  known?: boolean;
}) {
  // A one-second clock while a countdown ("Restarting in 20 s") or a busy time is shown.
  const now = useNow(1000);
  return (
    <p
      className={`server-status server-status--${known ? status.state : 'unknown'}`}
      aria-live="polite"
    >
      {statusLabel(status, now, known)}
    </p>
  );
}
