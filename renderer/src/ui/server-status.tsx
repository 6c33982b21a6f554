// How one server's status reads: a coloured dot and a sentence ("Running on port 4123",
// "Restarting in 20 s — last error: …"). Times count down / up once a second while shown.
import type { ServerStatus } from '../../../shared/model.ts';
import { useNow } from './use-now.ts';

function seconds(ms: number): string {
  return `${Math.max(0, Math.ceil(ms / 1000))} s`;
}

export function statusLabel(status: ServerStatus, now: number = Date.now()): string {
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

export function StatusDot({ status }: { status: ServerStatus }) {
  return <span className={`status-dot status-dot--${status.state}`} aria-hidden="true" />;
}

export function ServerStatusText({ status }: { status: ServerStatus }) {
  // A one-second clock while a countdown ("Restarting in 20 s") or a busy time is shown.
  const now = useNow(1000);
  return (
    <p className={`server-status server-status--${status.state}`} aria-live="polite">
      {statusLabel(status, now)}
    </p>
  );
}
