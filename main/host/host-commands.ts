// Dispatches HostApi commands (shared/host-api.ts) to the host, validating input and output with
// the contract's schemas. Every transport (headless HTTP, Electron IPC) goes through here.
import { homedir } from 'node:os';
import path from 'node:path';
import {
  hostCommands,
  isHostCommandName,
  type HostCommandInput,
  type HostCommandName,
  type HostCommandOutput,
} from '../../shared/host-api.ts';
import { clientConfigTarget, type ClientConfigTarget } from '../../shared/client-configs.ts';
import {
  addToClaudeDesktop,
  addToProjectMcpJson,
  previewClaudeDesktop,
  previewProjectMcpJson,
} from './client-config-writer.ts';
import { UserError } from '../platform/errors.ts';
import type { Host } from './host.ts';
import { toolConsoleFor } from './tool-console.ts';

type Handlers = {
  [N in HostCommandName]: (
    host: Host,
    input: never,
  ) => Promise<HostCommandOutput<N>> | HostCommandOutput<N>;
};

type Input<N extends HostCommandName> = HostCommandInput<N>;
const ok = { ok: true as const };

const handlers: Handlers = {
  getSnapshot: (host) => host.snapshot(),
  addRepo: async (host, input: Input<'addRepo'>) => {
    // "not a git repository: ..." is a UserError: the user's to fix, not a host failure.
    const known = new Set(host.snapshot().repos.map((repo) => repo.id));
    const repo = await host.addRepo(expandHome(input.path));
    // A repo opened from the UI starts like one opened at launch: its autostart servers run
    // (in the background; their status arrives as events). Reopening a known repo starts nothing.
    if (!known.has(repo.id)) {
      for (const worktree of repo.worktrees) {
        if (worktree.settings.autostart) void host.startServer(worktree.id).catch(() => {});
      }
    }
    return repo;
  },
  removeRepo: async (host, input: Input<'removeRepo'>) => {
    await host.removeRepo(input.repoId);
    return ok;
  },
  startServer: async (host, input: Input<'startServer'>) => {
    await host.startServer(input.worktreeId);
    return ok;
  },
  stopServer: async (host, input: Input<'stopServer'>) => {
    await host.stopServer(input.worktreeId);
    return ok;
  },
  restartServer: async (host, input: Input<'restartServer'>) => {
    await host.restartServer(input.worktreeId);
    return ok;
  },
  cancelToolCall: (host, input: Input<'cancelToolCall'>) => {
    host.cancelToolCall(input.worktreeId, input.callId);
    return ok;
  },
  undoMark: (host, input: Input<'undoMark'>) => host.undoMark(input.worktreeId, input.markId),
  stopTask: (host, input: Input<'stopTask'>) => {
    host.stopTask(input.worktreeId, input.runId);
    return ok;
  },
  getConnectionInfo: (host, input: Input<'getConnectionInfo'>) =>
    host.getConnectionInfo(input.worktreeId),
  rotateToken: (host, input: Input<'rotateToken'>) => host.rotateToken(input.worktreeId),
  setWorktreeSettings: (host, { worktreeId, ...changes }: Input<'setWorktreeSettings'>) =>
    host.setWorktreeSettings(worktreeId, changes),
  setReconcileBase: (host, input: Input<'setReconcileBase'>) =>
    host.setReconcileBase(input.worktreeId, input.base),
  setWorktreePort: (host, input: Input<'setWorktreePort'>) =>
    host.setWorktreePort(input.worktreeId, input.port),
  reclaimPort: (host, input: Input<'reclaimPort'>) => host.reclaimPort(input.worktreeId),
  keepMovedPort: (host, input: Input<'keepMovedPort'>) => host.keepMovedPort(input.worktreeId),
  listTools: async (host, input: Input<'listTools'>) => ({
    tools: await toolConsoleFor(host).listTools(input.worktreeId),
  }),
  callTool: (host, input: Input<'callTool'>) =>
    toolConsoleFor(host).callTool(input.worktreeId, input.name, input.arguments),
  previewClaudeDesktop: (host, input: Input<'previewClaudeDesktop'>) =>
    previewClaudeDesktop(configTarget(host, input.worktreeId)),
  addToClaudeDesktop: (host, input: Input<'addToClaudeDesktop'>) =>
    addToClaudeDesktop(configTarget(host, input.worktreeId), undefined, input.expected),
  previewProjectMcpJson: (host, input: Input<'previewProjectMcpJson'>) =>
    previewProjectMcpJson(configTarget(host, input.worktreeId), host.dataDir),
  addToProjectMcpJson: (host, input: Input<'addToProjectMcpJson'>) =>
    addToProjectMcpJson(configTarget(host, input.worktreeId), host.dataDir, input.expected),
  // The chat panel: everything delegates to the host's ChatService (main/chat/). Its refusals
  // (no model set, server stopped...) are UserErrors like every other command's.
  getChatSettings: (host) => host.chat.getSettings(),
  setChatSettings: (host, input: Input<'setChatSettings'>) => host.chat.setSettings(input),
  listConversations: (host, input: Input<'listConversations'>) => ({
    conversations: host.chat.listConversations(input.worktreeId),
  }),
  getConversation: (host, input: Input<'getConversation'>) =>
    host.chat.getConversation(input.worktreeId, input.conversationId),
  newConversation: (host, input: Input<'newConversation'>) =>
    host.chat.newConversation(input.worktreeId, input.title),
  deleteConversation: (host, input: Input<'deleteConversation'>) =>
    host.chat.deleteConversation(input.worktreeId, input.conversationId).then(() => ok),
  sendChatMessage: (host, input: Input<'sendChatMessage'>) =>
    host.chat
      .send(input.worktreeId, input.conversationId, input.text)
      .then(({ message }) => ({ message })),
  stopChat: (host, input: Input<'stopChat'>) =>
    host.chat.stop(input.worktreeId, input.conversationId).then((stopped) => ({ stopped })),
  startReconcileChat: (host, input: Input<'startReconcileChat'>) =>
    host.chat
      .startReconcile(input.worktreeId, input.conversationId)
      .then(({ conversation, message }) => ({ conversation, message })),
  // Decision proposals: the worktree's process reads and writes them (main/worktree/
  // decision-requests.ts); its answer is checked against the command's output schema below.
  listDecisions: (host, input: Input<'listDecisions'>) =>
    host.decisionRequest(input.worktreeId, { action: 'list' }) as Promise<
      HostCommandOutput<'listDecisions'>
    >,
  previewAcceptDecision: (host, { worktreeId, ...ref }: Input<'previewAcceptDecision'>) =>
    host.decisionRequest(worktreeId, { action: 'plan-accept', ...ref }) as Promise<
      HostCommandOutput<'previewAcceptDecision'>
    >,
  acceptDecision: (host, { worktreeId, ...request }: Input<'acceptDecision'>) =>
    host.decisionRequest(worktreeId, { action: 'accept', ...request }) as Promise<
      HostCommandOutput<'acceptDecision'>
    >,
  rejectDecision: (host, { worktreeId, ...request }: Input<'rejectDecision'>) =>
    host.decisionRequest(worktreeId, { action: 'reject', ...request }) as Promise<
      HostCommandOutput<'rejectDecision'>
    >,
};

/** `~` and `~/x` (as a shell would expand them) → the user's home; any other path as it is. */
export function expandHome(input: string, home: string = homedir()): string {
  if (input === '~') return home;
  if (input.startsWith('~/') || (path.sep === '\\' && input.startsWith('~\\'))) {
    return path.join(home, input.slice(2));
  }
  return input;
}

/** What a client config needs about one worktree (throws a UserError for an unknown id). */
function configTarget(host: Host, worktreeId: string): ClientConfigTarget {
  const info = host.getConnectionInfo(worktreeId);
  for (const repo of host.snapshot().repos) {
    const worktree = repo.worktrees.find((w) => w.id === worktreeId);
    // The same target the Connect tab builds, so a written entry is the one the tab shows.
    if (worktree) return clientConfigTarget(worktree, repo, info);
  }
  throw new UserError(`unknown worktree id: ${worktreeId}`, { code: 'not-found' });
}

/** Runs one command by name; invalid names or input throw a UserError with the reason. */
export async function runHostCommand(host: Host, name: string, input: unknown): Promise<unknown> {
  if (!isHostCommandName(name))
    throw new UserError(`unknown command: ${name}`, { code: 'not-found' });
  const parsed = hostCommands[name].input.safeParse(input ?? {});
  if (!parsed.success) {
    throw new UserError(`invalid input for ${name}: ${parsed.error.issues[0]?.message}`);
  }
  const handler = handlers[name] as (host: Host, input: unknown) => unknown;
  return hostCommands[name].output.parse(await handler(host, parsed.data));
}
