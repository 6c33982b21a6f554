// One worktree: its header (branch, path, status) and its tabs — Server, Clients, Activity,
// Reconciliation, Coverage, Tools, Chat, Connect. The tab list is one table (TABS); a badge beside a label
// counts clients, calls, specs to reconcile or check errors, and says which in its tooltip and its
// accessible name (errors in red). Tabs follow the WAI-ARIA pattern (arrow keys, Home, End).
import { useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { useRememberedState } from '../common/use-remembered-state.ts';
import type { ActivityEntry, WorktreeState } from '../../../shared/model.ts';
import { ChatTab } from '../chat/chat-tab.tsx';
import { CoverageTab } from '../coverage/coverage-tab.tsx';
import { useHostState, useHostStore } from '../common/store-context.tsx';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import { ReconcileTab } from '../reconcile/reconcile-tab.tsx';
import type { CommandError, ServerCommand } from '../store/host-store.ts';
import { ActivityTab } from './activity-tab.tsx';
import { ClientsTab } from './clients-tab.tsx';
import { ConnectTab } from './connect-tab.tsx';
import { clientCalls, listedClients } from '../../../shared/clients.ts';
import { ServerTab } from './server-tab.tsx';
import { StatusDot, UNKNOWN_STATUS } from './server-status.tsx';
import { ToolsTab } from './tools-tab.tsx';
import { useConnectionInfo } from './use-connection-info.ts';
import { count, plural } from '../common/format.ts';

export interface WorktreeViewProps {
  worktree: WorktreeState;
  activity: readonly ActivityEntry[];
  pending: ServerCommand | undefined;
  commandError: CommandError | undefined;
  /** False while the link to the host is down: commands would act on stale state. */
  live: boolean;
}

// Lower case in the DOM (shown as small capitals), so they never read as the status sentence.
const PILL_LABELS = {
  stopped: 'stopped',
  starting: 'starting',
  running: 'running',
  error: 'error',
} as const;

type TabId =
  'server' | 'clients' | 'activity' | 'reconciliation' | 'coverage' | 'tools' | 'chat' | 'connect';

interface TabContext extends WorktreeViewProps {
  connection: ReturnType<typeof useConnectionInfo>;
  /** Selects a spec and shows it in the Reconciliation tab (the Coverage tab's links). */
  openSpec(path: string): void;
  /** The spec just opened from another tab: the Reconciliation tab brings its detail into view. */
  revealSpec: string | null;
  /** The worktree's reconciliation state and check, once computed. */
  reconcile: ReconcileState | undefined;
}

interface TabDefinition {
  id: TabId;
  label: string;
  /** A small count beside the label (clients, calls), or null. */
  badge?: (context: TabContext) => number | null;
  /** What the badge counts, in words: "3 calls". */
  badgeWords?: (count: number) => string;
  /** An error count (red), not a plain tally. */
  badgeIsError?: boolean;
  render: (context: TabContext) => ReactNode;
}

const TABS: TabDefinition[] = [
  { id: 'server', label: 'Server', render: (c) => <ServerTab {...c} /> },
  {
    id: 'clients',
    label: 'Clients',
    // The rows the Clients table lists (the window is not one of them).
    badge: (c) => listedClients(c.worktree.clients).length || null,
    badgeWords: (n) => plural(n, 'client'),
    render: (c) => <ClientsTab worktree={c.worktree} activity={c.activity} />,
  },
  {
    id: 'activity',
    label: 'Activity',
    // Clients' calls only: the window's own (tool console, specs opened) are never counted.
    badge: (c) =>
      clientCalls(c.activity).length + clientCalls(c.worktree.runningCalls).length || null,
    badgeWords: (n) => `${plural(n, 'call')} from clients`,
    render: (c) => (
      <ActivityTab
        worktreeId={c.worktree.id}
        activity={c.activity}
        running={c.worktree.runningCalls}
      />
    ),
  },
  {
    id: 'reconciliation',
    label: 'Reconciliation',
    badge: (c) => c.worktree.reconcileTotals?.specsNeedingReconciliation || null,
    badgeWords: (n) => `${plural(n, 'spec')} to reconcile`,
    render: (c) => <ReconcileTab worktree={c.worktree} live={c.live} revealSpec={c.revealSpec} />,
  },
  {
    id: 'coverage',
    label: 'Coverage',
    // The check's errors (orphaned globs, cycles, missing tests...): what fails `grove check`.
    badge: (c) => c.reconcile?.check?.errors || null,
    badgeWords: (n) => `${plural(n, 'check error')}`,
    badgeIsError: true,
    render: (c) => <CoverageTab worktree={c.worktree} live={c.live} onOpenSpec={c.openSpec} />,
  },
  { id: 'tools', label: 'Tools', render: (c) => <ToolsTab worktree={c.worktree} live={c.live} /> },
  { id: 'chat', label: 'Chat', render: (c) => <ChatTab worktree={c.worktree} live={c.live} /> },
  {
    id: 'connect',
    label: 'Connect',
    render: (c) => <ConnectTab worktree={c.worktree} connection={c.connection} live={c.live} />,
  },
];

const isTabId = (value: string): value is TabId => TABS.some((t) => t.id === value);

export function WorktreeView(props: WorktreeViewProps) {
  const { worktree } = props;
  const headingId = useId();
  const baseId = useId();
  // The user's place: the same tab when switching worktree, and after a reload.
  const [tab, setTab] = useRememberedState<TabId>('tab', 'server', isTabId);
  const [revealSpec, setRevealSpec] = useState<string | null>(null);
  const tabRefs = useRef(new Map<TabId, HTMLButtonElement>());
  const connection = useConnectionInfo(worktree.id, worktree.port);
  const store = useHostStore();
  const reconcile = useHostState().snapshot?.reconcile[worktree.id];
  const openSpec = (path: string): void => {
    store.selectSpec(worktree.id, path);
    setRevealSpec(path);
    setTab('reconciliation');
  };
  // The link that opened a spec is gone with its tab: focus moves to the tab that shows the spec.
  useEffect(() => {
    if (revealSpec !== null) tabRefs.current.get('reconciliation')?.focus();
  }, [revealSpec]);
  const context: TabContext = { ...props, connection, openSpec, revealSpec, reconcile };
  const current = TABS.find((t) => t.id === tab) ?? TABS[0]!;

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>): void => {
    const at = TABS.findIndex((t) => t.id === tab);
    let next: number;
    if (event.key === 'ArrowRight') next = (at + 1) % TABS.length;
    else if (event.key === 'ArrowLeft') next = (at - 1 + TABS.length) % TABS.length;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = TABS.length - 1;
    else return;
    event.preventDefault();
    const id = TABS[next]!.id;
    setTab(id);
    setRevealSpec(null);
    tabRefs.current.get(id)?.focus();
  };

  return (
    <section
      className="worktree-view"
      aria-labelledby={headingId}
      aria-busy={props.pending ? true : undefined}
    >
      <header className="worktree-view__header">
        <div className="worktree-view__title">
          <StatusDot status={worktree.status} known={props.live} />
          <h2 id={headingId} className={worktree.branch === null ? 'detached' : undefined}>
            {worktree.branch ?? 'detached'}
          </h2>
          {worktree.isMain && <span className="tag">main worktree</span>}
          {props.live ? (
            <span className={`pill pill--${worktree.status.state}`}>
              {PILL_LABELS[worktree.status.state]}
            </span>
          ) : (
            <span className="pill pill--unknown" title={UNKNOWN_STATUS}>
              state unknown
            </span>
          )}
        </div>
        <p className="worktree-view__path" title={worktree.path}>
          {worktree.path}
        </p>
      </header>
      <div className="tabs" role="tablist" aria-label="Worktree views" onKeyDown={onKeyDown}>
        {TABS.map((t) => {
          const badge = t.badge?.(context) ?? null;
          return (
            <button
              key={t.id}
              ref={(element) => {
                if (element) tabRefs.current.set(t.id, element);
                else tabRefs.current.delete(t.id);
              }}
              type="button"
              role="tab"
              id={`${baseId}-tab-${t.id}`}
              aria-selected={t.id === tab}
              aria-controls={`${baseId}-panel-${t.id}`}
              tabIndex={t.id === tab ? 0 : -1}
              className="tab"
              onClick={() => {
                setTab(t.id);
                setRevealSpec(null);
              }}
            >
              {t.label}
              {badge !== null && (
                <span
                  className={t.badgeIsError ? 'tab__badge tab__badge--error' : 'tab__badge'}
                  title={t.badgeWords?.(badge)}
                >
                  <span aria-hidden="true">{count(badge)}</span>
                  <span className="visually-hidden">({t.badgeWords?.(badge) ?? badge})</span>
                </span>
              )}
            </button>
          );
        })}
      </div>
      <div
        className="tab-panel"
        role="tabpanel"
        id={`${baseId}-panel-${current.id}`}
        aria-labelledby={`${baseId}-tab-${current.id}`}
        tabIndex={0}
      >
        {current.render(context)}
      </div>
    </section>
  );
}
