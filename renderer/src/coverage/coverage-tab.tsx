// The Coverage tab: NotarAI 0.7's check of the worktree, live. At the top the check's verdict
// (passed / failing, errors, warnings), how many files the specs govern and the overall drift
// score; then the worktree's folders as a tree, each with a bar and its numbers (governed of files,
// percent); then every finding by type (uncovered files, orphaned globs, overlaps, cycles, lint,
// ...), each linking to its spec and line: the link shows the spec's lines there, and opens the spec
// in the Reconciliation tab. Everything comes from the mirrored store (the `check` and `drift` of
// reconcile-state events), so it moves as files and specs change; only the spec lines are a call.
import { useId, useState } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import type { CheckFinding, LiveCheck } from '../../../shared/notarai-check.ts';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import { DriftWord } from '../common/drift-word.tsx';
import { count, plural } from '../common/format.ts';
import { useHostState } from '../common/store-context.tsx';
import {
  changedCountNote,
  coveragePercent,
  coverageWords,
  folderTree,
  groupFindings,
  initiallyExpanded,
  specLocation,
  visibleFolders,
  type FindingGroup,
  type FolderNode,
} from './coverage-format.ts';
import { SpecExcerpt } from './spec-excerpt.tsx';

/** Findings listed per group before "Show all". */
const GROUP_PREVIEW = 50;

export interface CoverageTabProps {
  worktree: WorktreeState;
  live: boolean;
  /** Opens a spec in the Reconciliation tab (selects it and switches tabs). */
  onOpenSpec(path: string): void;
}

export function CoverageTab({ worktree, onOpenSpec }: CoverageTabProps) {
  const { snapshot } = useHostState();
  const state = snapshot?.reconcile[worktree.id];

  if (!state) {
    return (
      <div className="empty" role="status">
        <span className="spinner" aria-hidden="true" />
        <p className="empty__title">Checking the specs…</p>
        <p className="empty__detail">
          Grove runs NotarAI's check on this worktree: which files the specs govern, and what needs
          attention.
        </p>
      </div>
    );
  }
  const check = state.check;
  if (!check) {
    const failure = state.warnings.find((warning) => warning.startsWith('check failed'));
    return (
      <div className={failure ? 'empty empty--error' : 'empty'} role="status">
        <p className="empty__title">
          {failure ? 'The check could not run' : 'No check for this worktree yet'}
        </p>
        <p className="empty__detail">
          {failure ?? 'The worktree server computes it with the reconciliation state.'}
        </p>
      </div>
    );
  }
  const listed = new Set(state.specs.map((spec) => spec.path));
  const openable = (path: string | null): (() => void) | undefined =>
    path !== null && listed.has(path) ? () => onOpenSpec(path) : undefined;

  return (
    <div className="coverage stack">
      <CheckSummary check={check} state={state} />
      <Notes
        check={check}
        noSpecs={state.specs.length === 0 && state.specErrors.length === 0}
        hasSnapshot={state.snapshot !== null}
      />
      <FolderTable key={worktree.id} check={check} />
      <Findings worktreeId={worktree.id} check={check} openable={openable} />
    </div>
  );
}

function CheckSummary({ check, state }: { check: LiveCheck; state: ReconcileState }) {
  const { files, governed } = check.coverage;
  const drift = state.drift;
  return (
    <dl className="coverage-summary" aria-label="Check summary">
      <div
        className={
          check.passed
            ? 'coverage-summary__item'
            : 'coverage-summary__item coverage-summary__item--failing'
        }
      >
        <dt>Check</dt>
        <dd>{check.passed ? 'passed' : 'failing'}</dd>
      </div>
      <div className="coverage-summary__item">
        <dt>Errors</dt>
        <dd>{count(check.errors)}</dd>
      </div>
      <div className="coverage-summary__item">
        <dt>Warnings</dt>
        <dd>{count(check.warnings)}</dd>
      </div>
      <div className="coverage-summary__item coverage-summary__item--wide">
        <dt>Governed files</dt>
        <dd title={coverageWords(governed, files)}>
          {count(governed)} / {count(files)}{' '}
          <span className="coverage-summary__percent">{coveragePercent(governed, files)}%</span>
        </dd>
      </div>
      <div className="coverage-summary__item">
        <dt>Drift</dt>
        <dd>{drift ? <DriftWord score={drift.score} status={drift.status} /> : '—'}</dd>
      </div>
    </dl>
  );
}

function Notes({
  check,
  noSpecs,
  hasSnapshot,
}: {
  check: LiveCheck;
  noSpecs: boolean;
  hasSnapshot: boolean;
}) {
  const total = check.errors + check.warnings;
  const notes: string[] = [];
  const counts = changedCountNote(check, hasSnapshot);
  if (counts) notes.push(counts);
  if (noSpecs) {
    notes.push(
      'No specs in this worktree: no file is governed until NotarAI specs are added as .notarai/*.spec.yaml files.',
    );
  }
  if (total > check.findings.length) {
    notes.push(
      `Showing the first ${count(check.findings.length)} of ${count(total)} findings; grove check lists them all.`,
    );
  }
  if (check.coverage.truncated) {
    notes.push(
      `Showing the first ${count(check.coverage.folders.length)} folders (the shallowest); the totals count every file.`,
    );
  }
  const uncovered = check.coverage.files - check.coverage.governed;
  const gapsListed = check.findings.some((finding) => finding.type === 'coverage_gap');
  if (uncovered > 0 && !gapsListed && total <= check.findings.length) {
    notes.push(
      `${plural(uncovered, 'file')} no spec governs ${uncovered === 1 ? 'is' : 'are'} not listed: .notarai/check.yaml's warn_on leaves coverage gaps out.`,
    );
  }
  return (
    <>
      {notes.map((note) => (
        <p key={note} className="notice" role="note">
          {note}
        </p>
      ))}
    </>
  );
}

function FolderTable({ check }: { check: LiveCheck }) {
  const headingId = useId();
  const root = folderTree(check.coverage.folders);
  // Which folders are open; the first tree decides the default, the user's clicks after that.
  const [expanded, setExpanded] = useState<ReadonlySet<string> | null>(null);
  if (!root) {
    return (
      <section className="coverage-section" aria-labelledby={headingId}>
        <h3 id={headingId}>Coverage by folder</h3>
        <p className="empty-inline">No project files yet (outside .notarai/ and .git/).</p>
      </section>
    );
  }
  const open = expanded ?? initiallyExpanded(root);
  const toggle = (path: string): void => {
    const next = new Set(open);
    if (next.has(path)) next.delete(path);
    else next.add(path);
    setExpanded(next);
  };
  return (
    <section className="coverage-section" aria-labelledby={headingId}>
      <h3 id={headingId}>Coverage by folder</h3>
      <div className="table-wrap">
        <table className="table coverage-tree" aria-labelledby={headingId}>
          <thead>
            <tr>
              <th scope="col">Folder</th>
              <th scope="col" className="coverage-tree__bar-head">
                <span className="visually-hidden">Share governed, as a bar</span>
              </th>
              <th scope="col" className="num">
                Governed
              </th>
              <th scope="col" className="num">
                %
              </th>
            </tr>
          </thead>
          <tbody>
            {visibleFolders(root, open).map((node) => (
              <FolderRow
                key={node.path}
                node={node}
                expanded={open.has(node.path)}
                onToggle={() => toggle(node.path)}
              />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function FolderRow({
  node,
  expanded,
  onToggle,
}: {
  node: FolderNode;
  expanded: boolean;
  onToggle(): void;
}) {
  const percent = coveragePercent(node.governed, node.files);
  const label = node.path === '' ? 'All files' : `${node.name}/`;
  const complete = node.governed === node.files;
  return (
    <tr className="coverage-tree__row" data-folder={node.path}>
      <th scope="row" title={node.path === '' ? 'The whole worktree' : node.path}>
        <div className="coverage-tree__name" style={{ paddingLeft: `${node.depth * 14}px` }}>
          {node.children.length > 0 ? (
            <button
              type="button"
              className="coverage-tree__toggle"
              aria-expanded={expanded}
              onClick={onToggle}
            >
              <span className="coverage-tree__arrow" aria-hidden="true">
                {expanded ? '▾' : '▸'}
              </span>
              <code className="coverage-tree__label">{label}</code>
            </button>
          ) : (
            <>
              <span className="coverage-tree__arrow" aria-hidden="true" />
              <code className="coverage-tree__label">{label}</code>
            </>
          )}
        </div>
      </th>
      <td className="coverage-tree__bar-cell">
        <div className="coverage-bar" aria-hidden="true">
          <div
            className={
              complete ? 'coverage-bar__fill coverage-bar__fill--full' : 'coverage-bar__fill'
            }
            style={{ width: `${(node.files === 0 ? 1 : node.governed / node.files) * 100}%` }}
          />
        </div>
      </td>
      <td className="num" title={coverageWords(node.governed, node.files)}>
        {count(node.governed)} / {count(node.files)}
      </td>
      <td className={complete ? 'num' : 'num coverage-tree__percent--gap'}>{percent}%</td>
    </tr>
  );
}

function Findings({
  worktreeId,
  check,
  openable,
}: {
  worktreeId: string;
  check: LiveCheck;
  openable(path: string | null): (() => void) | undefined;
}) {
  const groups = groupFindings(check.findings);
  if (groups.length === 0) {
    return (
      <p className="coverage-clear" role="status">
        No findings: every file is governed and the specs pass every rule.
      </p>
    );
  }
  return (
    <>
      {groups.map((group) => (
        <FindingSection
          key={group.type}
          worktreeId={worktreeId}
          group={group}
          openable={openable}
        />
      ))}
    </>
  );
}

function FindingSection({
  worktreeId,
  group,
  openable,
}: {
  worktreeId: string;
  group: FindingGroup;
  openable(path: string | null): (() => void) | undefined;
}) {
  const headingId = useId();
  const [showAll, setShowAll] = useState(false);
  const shown = showAll ? group.findings : group.findings.slice(0, GROUP_PREVIEW);
  const counts = [
    group.errors > 0 ? plural(group.errors, 'error') : null,
    group.warnings > 0 ? plural(group.warnings, 'warning') : null,
  ]
    .filter(Boolean)
    .join(', ');
  return (
    <section
      className={`coverage-section coverage-findings coverage-findings--${group.type}`}
      aria-labelledby={headingId}
    >
      <h3 id={headingId}>
        {group.title} <span className="coverage-findings__count">({counts})</span>
      </h3>
      <ul className="coverage-findings__list">
        {findingKeys(shown).map(([key, finding]) => (
          <FindingItem
            key={key}
            worktreeId={worktreeId}
            finding={finding}
            onOpenSpec={openable(finding.spec_path)}
          />
        ))}
      </ul>
      {group.findings.length > shown.length && (
        <button type="button" className="button button--small" onClick={() => setShowAll(true)}>
          Show all {count(group.findings.length)}
        </button>
      )}
    </section>
  );
}

/**
 * A key per finding from what it says, not where it sits, so an open excerpt stays with its
 * finding when a new state adds findings before it (identical findings get a count).
 */
function findingKeys(findings: readonly CheckFinding[]): [string, CheckFinding][] {
  const seen = new Map<string, number>();
  return findings.map((finding) => {
    const base = [
      finding.spec_path,
      finding.file_path,
      finding.glob_pattern,
      finding.line,
      finding.message,
    ].join('\n');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return [count === 0 ? base : `${base}\n${count}`, finding];
  });
}

function FindingItem({
  worktreeId,
  finding,
  onOpenSpec,
}: {
  worktreeId: string;
  finding: CheckFinding;
  onOpenSpec: (() => void) | undefined;
}) {
  const excerptId = useId();
  const [open, setOpen] = useState(false);
  const location = specLocation(finding);
  // An uncovered file is its path: the message would only repeat it.
  if (finding.type === 'coverage_gap' && finding.file_path !== null) {
    return (
      <li className="coverage-finding coverage-finding--file">
        <code>{finding.file_path}</code>
      </li>
    );
  }
  return (
    <li className="coverage-finding">
      <div className="coverage-finding__row">
        <span className={`severity severity--${finding.severity}`}>{finding.severity}</span>
        <span className="coverage-finding__message">{finding.message}</span>
        {location !== null && (
          <button
            type="button"
            className="link-button coverage-finding__link"
            aria-expanded={open}
            aria-controls={open ? excerptId : undefined}
            onClick={() => setOpen(!open)}
          >
            {location}
          </button>
        )}
      </div>
      {open && finding.spec_path !== null && (
        <SpecExcerpt
          id={excerptId}
          worktreeId={worktreeId}
          specPath={finding.spec_path}
          line={finding.line}
          onOpenSpec={onOpenSpec}
        />
      )}
    </li>
  );
}
