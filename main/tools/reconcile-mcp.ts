// What the reconciliation engine adds to every MCP server besides its six tools, as plain text and
// names: the server `instructions` (the workflow), the texts of the prompts `reconcile` and
// `bootstrap_specs`, and the URIs of the spec resources (`grove://spec/<path>`). Registering them
// on a server is reconcile-mcp-registration.ts, which loads the MCP SDK: it is loaded with the
// listener's MCP routes on the first MCP request, while this module is needed from the start.

/** URI of a spec resource. */
export function specResourceUri(specPath: string): string {
  return `grove://spec/${specPath.split('/').map(encodeURIComponent).join('/')}`;
}

/** The URI template of the spec resources (specResourceUri fills it). */
export const SPEC_URI_TEMPLATE = 'grove://spec/{+path}';

export const RECONCILE_INSTRUCTIONS = `This server serves one git worktree. Besides read-only file tools it offers NotarAI-compatible spec reconciliation: specs are .notarai/**/*.spec.yaml files that state a part of the system's intent (behaviors, constraints, invariants) and, under "artifacts", the files they govern (globs; see each spec).

To check whether the code still matches its specs ("reconcile"):
1. list_affected_specs(base_branch) - the files changed vs the base branch and the specs they touch. Use the repository's main branch unless told otherwise.
2. For each affected spec: get_spec_diff(spec_path, base_branch) - the governed files that changed since they were last reconciled, their diff vs the base, and any changed spec files in full. Files listed in "spec_invalidated" did not change but their spec did: review them again.
3. Read what the diff does not show (changed docs, context) with the file tools.
4. Judge drift: does each change still satisfy the spec's behaviors, constraints and invariants? An invariant broken even indirectly is the most serious finding.
5. Report, per spec: in sync, or each drift with the file, what the spec says and what the code does, and whether the code or the spec should change.
6. Only after reporting: mark_reconciled(files) with the files you actually reviewed (spec files included), then snapshot_state().

The prompts "reconcile" and "bootstrap_specs" walk through this, and through drafting specs for a repository that has none. Specs are also readable as resources (grove://spec/<path>).`;

/** The text of the `reconcile` prompt for one base branch. */
export function reconcilePrompt(base: string): string {
  return `Reconcile this worktree's specs against ${JSON.stringify(base)}.

1. Call list_affected_specs with base_branch ${JSON.stringify(base)}. If spec_errors is not empty, report those specs as broken (file, line, message) first.
2. For each affected spec, call get_spec_diff with its spec_path and the same base_branch. Read spec_changes (changed specs, in full) and system_spec for context. Files in spec_invalidated need review again because their spec changed.
3. Use read_file for anything the diff does not show well (binary_changes are listed without a diff; read the related docs).
4. For every behavior, constraint and invariant of the spec, decide whether the changes keep it true. Note drift precisely: file, what the spec says, what the code now does.
5. Report the result per spec: "in sync", or the list of drifts with a recommendation (fix the code, or update the spec and say how).
6. When the report is done, call mark_reconciled with the files you reviewed (including the spec files), then snapshot_state. Do not mark files you did not read.`;
}

/** The text of the `bootstrap_specs` prompt. */
export const BOOTSTRAP_PROMPT = `Draft NotarAI specs for this repository, which has none yet (or too few).

1. Explore with list_directory and read_file: the README, the build files, the main source folders, the docs and the tests. Find the parts a newcomer would name (subsystems) and what each is for.
2. Write .notarai/system.spec.yaml for the whole system: schema_version '0.8' (quoted), intent (what the system is for, in plain words), artifacts (category -> list of {path: glob}), subsystems (a list of {$ref: ./<name>.spec.yaml}), and behaviors (a list of {name, given, then}).
3. Write one .notarai/<name>.spec.yaml per subsystem with intent, artifacts (globs relative to the repository root: "*" stays in one folder, "**" spans folders, e.g. src/auth/**), behaviors, constraints and invariants you can justify from the code. Use tier: registered (behaviors optional) for parts you only want to track.
4. Keep every statement checkable against the code; put doubts in open_questions instead of guessing.
5. Show the drafts to the user before writing them. After they are written, call list_affected_specs: its spec_errors must be empty (it names file, line and problem otherwise).`;
