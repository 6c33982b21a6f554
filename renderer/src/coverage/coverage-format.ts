// What the Coverage tab shows, computed from the live check (shared/notarai-check.ts LiveCheck):
// the folders as a tree in display order (each folder after its parent, siblings by name), a
// folder's share in words and as a whole percent that never rounds a gap away, and the findings
// grouped by type in NotarAI's group order with a heading each. Pure functions: the tab renders,
// these decide.
import {
  CHECK_FINDING_TYPES,
  type CheckFinding,
  type CheckFindingType,
  type CoverageFolder,
  type LiveCheck,
} from '../../../shared/notarai-check.ts';
import { count, plural } from '../common/format.ts';

export interface FolderNode {
  /** POSIX path relative to the worktree root; '' is the root. */
  path: string;
  /** The last segment ('' for the root). */
  name: string;
  /** 0 for the root, 1 for its folders, ... */
  depth: number;
  files: number;
  governed: number;
  children: FolderNode[];
}

const compareNames = (a: FolderNode, b: FolderNode): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/**
 * The folders as a tree under the root. A folder whose parent is missing (the list was cut) hangs
 * from its nearest listed ancestor. Returns null when there are no folders (no project files).
 */
export function folderTree(folders: readonly CoverageFolder[]): FolderNode | null {
  if (folders.length === 0) return null;
  const byPath = new Map<string, FolderNode>();
  for (const folder of folders) {
    const segments = folder.path === '' ? [] : folder.path.split('/');
    byPath.set(folder.path, {
      path: folder.path,
      name: segments.at(-1) ?? '',
      depth: segments.length,
      files: folder.files,
      governed: folder.governed,
      children: [],
    });
  }
  let root = byPath.get('');
  if (!root) {
    // Never sent without the root, but a tree needs one: the sum of the top folders.
    const top = [...byPath.values()].filter((node) => !node.path.includes('/'));
    root = {
      path: '',
      name: '',
      depth: 0,
      files: top.reduce((sum, node) => sum + node.files, 0),
      governed: top.reduce((sum, node) => sum + node.governed, 0),
      children: [],
    };
  }
  for (const node of byPath.values()) {
    if (node === root) continue;
    let parentPath = node.path;
    let parent: FolderNode | undefined;
    while (!parent) {
      const slash = parentPath.lastIndexOf('/');
      parentPath = slash < 0 ? '' : parentPath.slice(0, slash);
      parent = parentPath === '' ? root : byPath.get(parentPath);
    }
    parent.children.push(node);
  }
  const sortAll = (node: FolderNode): void => {
    node.children.sort(compareNames);
    for (const child of node.children) sortAll(child);
  };
  sortAll(root);
  return root;
}

/** The rows to show, depth first: a folder's children only when it is expanded. */
export function visibleFolders(root: FolderNode, expanded: ReadonlySet<string>): FolderNode[] {
  const rows: FolderNode[] = [];
  const visit = (node: FolderNode): void => {
    rows.push(node);
    if (expanded.has(node.path)) for (const child of node.children) visit(child);
  };
  visit(root);
  return rows;
}

/** Folders expanded when the tab opens: the root, and every folder when the tree is small. */
export function initiallyExpanded(root: FolderNode, smallTree = 40): Set<string> {
  const all: string[] = [];
  const visit = (node: FolderNode): void => {
    if (node.children.length > 0) all.push(node.path);
    for (const child of node.children) visit(child);
  };
  visit(root);
  return all.length <= smallTree ? new Set(all) : new Set(['']);
}

/**
 * governed ÷ files as a whole percent: 100 only when every file is governed, 0 only when none
 * is (1 of 1,000 shows 1 %, 999 of 1,000 shows 99 %). No files: 100 (nothing is uncovered).
 */
export function coveragePercent(governed: number, files: number): number {
  if (files === 0 || governed >= files) return 100;
  if (governed <= 0) return 0;
  return Math.min(99, Math.max(1, Math.round((governed / files) * 100)));
}

/** "3 / 4 governed, 75 %" style numbers for a folder row. */
export function coverageWords(governed: number, files: number): string {
  return `${count(governed)} of ${plural(files, 'file')} governed, ${coveragePercent(governed, files)}%`;
}

const LINT_TITLES: Record<string, string> = {
  L001: 'full-tier specs without behaviors',
  L004: '$refs to specs that do not exist',
  L006: 'old decisions without a rationale',
  L007: 'open questions',
  L008: 'artifact paths that match everything (**/*)',
  L009: 'outdated schema_version',
  L010: 'duplicate behavior names',
  L011: 'cross-cutting specs listed as subsystems',
};

const GROUP_TITLES: Record<CheckFindingType, string> = {
  spec_invalid: 'Specs that do not parse',
  coverage_gap: 'Uncovered files',
  orphaned_glob: 'Orphaned globs',
  changed_since_reconciliation: 'Changed since reconciliation',
  overlapping_coverage: 'Overlapping coverage',
  circular_ref: 'Circular $refs',
  ref_outside_worktree: '$refs outside the worktree',
  behavior_incomplete: 'Incomplete behaviors',
  test_coverage_missing: 'Untested behaviors (T001)',
  test_path_missing: 'Missing test paths (T002)',
  lint_l001: `Lint L001: ${LINT_TITLES['L001']}`,
  lint_l004: `Lint L004: ${LINT_TITLES['L004']}`,
  lint_l006: `Lint L006: ${LINT_TITLES['L006']}`,
  lint_l007: `Lint L007: ${LINT_TITLES['L007']}`,
  lint_l008: `Lint L008: ${LINT_TITLES['L008']}`,
  lint_l009: `Lint L009: ${LINT_TITLES['L009']}`,
  lint_l010: `Lint L010: ${LINT_TITLES['L010']}`,
  lint_l011: `Lint L011: ${LINT_TITLES['L011']}`,
};

export interface FindingGroup {
  type: CheckFindingType;
  title: string;
  findings: CheckFinding[];
  errors: number;
  warnings: number;
}

/** The findings by type, in NotarAI's group order (each group keeps the findings' order). */
export function groupFindings(findings: readonly CheckFinding[]): FindingGroup[] {
  const byType = new Map<CheckFindingType, CheckFinding[]>();
  for (const finding of findings) {
    const list = byType.get(finding.type);
    if (list) list.push(finding);
    else byType.set(finding.type, [finding]);
  }
  return CHECK_FINDING_TYPES.flatMap((type) => {
    const list = byType.get(type);
    if (!list) return [];
    const errors = list.filter((finding) => finding.severity === 'error').length;
    return [
      {
        type,
        title: GROUP_TITLES[type],
        findings: list,
        errors,
        warnings: list.length - errors,
      },
    ];
  });
}

/** Where a finding points in its spec, as shown on its link: "path:line" or the path. */
export function specLocation(finding: Pick<CheckFinding, 'spec_path' | 'line'>): string | null {
  if (finding.spec_path === null) return null;
  return finding.line === null ? finding.spec_path : `${finding.spec_path}:${finding.line}`;
}

/** The lines of a spec to show around `line` (1-based, inclusive), `context` either side. */
export function excerptRange(
  line: number | null,
  context = 6,
): { start_line: number; end_line: number } {
  if (line === null) return { start_line: 1, end_line: 2 * context + 1 };
  return { start_line: Math.max(1, line - context), end_line: line + context };
}

/**
 * The one sentence that reconciles the window's count of files changed since reconciled (this
 * machine's marks, then the committed snapshot: the Reconciliation tab's count too) with what
 * `grove check` reports here (NotarAI's rule, the hash cache alone). Null when they agree.
 */
export function changedCountNote(
  check: Pick<LiveCheck, 'changedSinceReconciled' | 'changedByCacheAlone'>,
  hasSnapshot: boolean,
): string | null {
  const window = check.changedSinceReconciled;
  if (window === undefined || check.changedByCacheAlone === undefined) return null;
  const alone = check.changedByCacheAlone;
  if (alone === window) return null;
  const files = (value: number) => plural(value, 'file');
  const counted = hasSnapshot
    ? `${files(window)} changed since reconciled (this machine's marks, and the committed snapshot for files not marked here)`
    : `${files(window)} changed since reconciled on this machine`;
  const cli =
    alone === null
      ? '`grove check` here reports none: like NotarAI, it counts changed files only once this machine has a hash cache (.notarai/.cache/notarai.db)'
      : `\`grove check\` here reports ${count(alone)}: like NotarAI, it counts only what this machine marked (\`--with-snapshot\` gives this count)`;
  return `${counted}; ${cli}.`;
}
