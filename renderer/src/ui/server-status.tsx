// How one server's status reads: a coloured dot and a sentence ("Running on port 4123").
import type { ServerStatus } from '../../../shared/model.ts';

export function statusLabel(status: ServerStatus): string {
  switch (status.state) {
    case 'stopped':
      return 'Stopped';
    case 'starting':
      return 'Starting…';
    case 'running':
      return `Running on port ${status.port}`;
    case 'error':
      return `Error: ${status.message}`;
  }
}

export function StatusDot({ status }: { status: ServerStatus }) {
  return <span className={`status-dot status-dot--${status.state}`} aria-hidden="true" />;
}

export function ServerStatusText({ status }: { status: ServerStatus }) {
  return (
    <p className={`server-status server-status--${status.state}`} aria-live="polite">
      {statusLabel(status)}
    </p>
  );
}
