// What the reconciliation engine adds to every MCP server besides its six tools: the server
// `instructions` (the workflow), the prompts `reconcile` and `bootstrap_specs`, and each spec as a
// resource (`grove://spec/<path>`, listed live from .notarai/), with resources/subscribe accepted
// so clients may ask for the `resources/updated` notifications the watcher sends. Registered before
// the engine is loaded, so it imports nothing heavy (no engine, git, yaml or native modules).
import { ResourceTemplate } from '@modelcontextprotocol/server';
import type { McpServer } from '@modelcontextprotocol/server';
import path from 'node:path';
import { z } from 'zod';
import {
  discoverSpecPaths,
  isSpecPath,
  NOTARAI_DIR,
  readSpecText,
} from '../reconcile/spec-paths.ts';

/** URI of a spec resource. */
export function specResourceUri(specPath: string): string {
  return `grove://spec/${specPath.split('/').map(encodeURIComponent).join('/')}`;
}

const SPEC_URI_TEMPLATE = 'grove://spec/{+path}';

export const RECONCILE_INSTRUCTIONS = `This server serves one git worktree. Besides read-only file tools it offers NotarAI-compatible spec reconciliation: specs are .notarai/**/*.spec.yaml files that state a part of the system's intent (behaviors, constraints, invariants) and, under "artifacts", the files they govern (globs; see each spec).

To check whether the code still matches its specs ("reconcile"):
1. list_affected_specs(base_branch) - the files changed vs the base branch and the specs they touch. Use the repository's main branch unless told otherwise.
2. For each affected spec: get_spec_diff(spec_path, base_branch) - the governed files that changed since they were last reconciled, their diff vs the base, and any changed spec files in full. Files listed in "spec_invalidated" did not change but their spec did: review them again.
3. Read what the diff does not show (changed docs, context) with the file tools.
4. Judge drift: does each change still satisfy the spec's behaviors, constraints and invariants? An invariant broken even indirectly is the most serious finding.
5. Report, per spec: in sync, or each drift with the file, what the spec says and what the code does, and whether the code or the spec should change.
6. Only after reporting: mark_reconciled(files) with the files you actually reviewed (spec files included), then snapshot_state().

The prompts "reconcile" and "bootstrap_specs" walk through this, and through drafting specs for a repository that has none. Specs are also readable as resources (grove://spec/<path>).`;

function reconcilePrompt(base: string): string {
  return `Reconcile this worktree's specs against ${JSON.stringify(base)}.

1. Call list_affected_specs with base_branch ${JSON.stringify(base)}. If spec_errors is not empty, report those specs as broken (file, line, message) first.
2. For each affected spec, call get_spec_diff with its spec_path and the same base_branch. Read spec_changes (changed specs, in full) and system_spec for context. Files in spec_invalidated need review again because their spec changed.
3. Use read_file for anything the diff does not show well (binary_changes are listed without a diff; read the related docs).
4. For every behavior, constraint and invariant of the spec, decide whether the changes keep it true. Note drift precisely: file, what the spec says, what the code now does.
5. Report the result per spec: "in sync", or the list of drifts with a recommendation (fix the code, or update the spec and say how).
6. When the report is done, call mark_reconciled with the files you reviewed (including the spec files), then snapshot_state. Do not mark files you did not read.`;
}

const BOOTSTRAP_PROMPT = `Draft NotarAI specs for this repository, which has none yet (or too few).

1. Explore with list_directory and read_file: the README, the build files, the main source folders, the docs and the tests. Find the parts a newcomer would name (subsystems) and what each is for.
2. Write .notarai/system.spec.yaml for the whole system: schema_version '0.8' (quoted), intent (what the system is for, in plain words), artifacts (category -> list of {path: glob}), subsystems (a list of {$ref: ./<name>.spec.yaml}), and behaviors (a list of {name, given, then}).
3. Write one .notarai/<name>.spec.yaml per subsystem with intent, artifacts (globs relative to the repository root: "*" stays in one folder, "**" spans folders, e.g. src/auth/**), behaviors, constraints and invariants you can justify from the code. Use tier: registered (behaviors optional) for parts you only want to track.
4. Keep every statement checkable against the code; put doubts in open_questions instead of guessing.
5. Show the drafts to the user before writing them. After they are written, call list_affected_specs: its spec_errors must be empty (it names file, line and problem otherwise).`;

export interface ReconcileMcpOptions {
  /** Real path of the worktree root. */
  root: string;
  /** The base branch the prompt proposes when the client gives none. */
  defaultBase: () => string;
}

/**
 * Built once: a server is built per modern request, and building zod schemas there was a tenth of
 * a modern call's CPU under load.
 */
const RECONCILE_PROMPT_ARGS = z.object({
  base_branch: z
    .string()
    .optional()
    .describe("Branch to compare against (default: the repository's main branch)."),
});

/** Registers prompts, spec resources and subscription handlers on one McpServer. */
export function registerReconcileMcp(server: McpServer, options: ReconcileMcpOptions): void {
  server.registerPrompt(
    'reconcile',
    {
      title: 'Reconcile specs',
      description:
        'Check every spec affected by the changes since a base branch for drift, report, then ' +
        'mark the reviewed files reconciled.',
      argsSchema: RECONCILE_PROMPT_ARGS,
    },
    async (args: { base_branch?: string | undefined }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: reconcilePrompt(args.base_branch || options.defaultBase()),
          },
        },
      ],
    }),
  );
  server.registerPrompt(
    'bootstrap_specs',
    {
      title: 'Bootstrap specs',
      description: 'Draft NotarAI specs (.notarai/*.spec.yaml) for a repository that has none.',
    },
    async () => ({
      messages: [{ role: 'user', content: { type: 'text', text: BOOTSTRAP_PROMPT } }],
    }),
  );

  server.registerResource(
    'spec',
    new ResourceTemplate(SPEC_URI_TEMPLATE, {
      list: async () => ({
        resources: (await discoverSpecPaths(options.root)).map((specPath) => ({
          uri: specResourceUri(specPath),
          name: specPath,
          title: path.posix.basename(specPath, '.spec.yaml'),
          mimeType: 'application/yaml',
        })),
      }),
    }),
    {
      title: 'NotarAI spec',
      description: `A spec file under ${NOTARAI_DIR}/ (YAML).`,
      mimeType: 'application/yaml',
    },
    async (uri: URL, variables: Record<string, string | string[]>) => {
      const raw = variables['path'];
      const specPath = decodeURIComponent(Array.isArray(raw) ? raw.join('/') : (raw ?? ''));
      if (!isSpecPath(specPath)) throw new Error(`not a spec under ${NOTARAI_DIR}/: ${specPath}`);
      // The confined layer refuses `..`, symlinks out of the worktree, .git, FIFOs, devices and
      // specs over the size cap.
      const text = await readSpecText(options.root, specPath);
      return { contents: [{ uri: uri.toString(), mimeType: 'application/yaml', text }] };
    },
  );

  // Clients subscribe to the specs they read; the watcher tells every session when a spec
  // changes, so a subscription needs no bookkeeping here.
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  server.server.setRequestHandler('resources/subscribe', async () => ({}));
  server.server.setRequestHandler('resources/unsubscribe', async () => ({}));
}
