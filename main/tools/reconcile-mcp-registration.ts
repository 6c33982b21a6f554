// Registers the reconciliation prompts, the spec resources (listed live from .notarai/) and
// resources/subscribe on one McpServer, so clients may ask for the `resources/updated`
// notifications the watcher sends. It imports the MCP SDK, so it is loaded only when servers are
// about to be built (ReconcileService.loadServerExtension); the texts and names it registers are
// in reconcile-mcp.ts. It imports nothing of the engine (no git, yaml or native modules).
import { ResourceTemplate } from '@modelcontextprotocol/server';
import type { McpServer } from '@modelcontextprotocol/server';
import path from 'node:path';
import { z } from 'zod';
import { shortArgument } from '../platform/confined-fs.ts';
import {
  discoverSpecPaths,
  isSpecPath,
  NOTARAI_DIR,
  readSpecText,
} from '../reconcile/specs/spec-paths.ts';
import {
  BOOTSTRAP_PROMPT,
  reconcilePrompt,
  SPEC_URI_TEMPLATE,
  specResourceUri,
} from './reconcile-mcp.ts';

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
      if (!isSpecPath(specPath)) {
        throw new Error(`not a spec under ${NOTARAI_DIR}/: ${shortArgument(specPath)}`);
      }
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
