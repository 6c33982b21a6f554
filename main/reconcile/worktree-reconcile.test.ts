// The worktree process with its reconciliation service, as the host sees it: forked for real, it
// answers `start` with `listening`, then pushes `reconcile-state` messages (valid against the
// shared schema), and recomputes against another base on `set-reconcile-base`.
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { connectClient, waitUntil } from '../testing/mcp-clients.ts';
import { git, makeTempRepo, writeFiles } from '../testing/temp-repo.ts';
import { WorktreeToHostSchema } from '../../shared/worktree-to-host.ts';
import type { WorktreeToHost } from '../../shared/worktree-protocol.ts';

const ENTRY = fileURLToPath(new URL('../worktree/worktree-process.ts', import.meta.url));
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('pushes reconcile-state after start and when the base changes', async () => {
  const repo = await makeTempRepo({
    '.notarai/app.spec.yaml':
      "schema_version: '0.8'\nintent: App.\ntier: registered\nartifacts:\n  code:\n    - path: src/**\n",
    'src/a.ts': 'a\n',
  });
  cleanups.push(() => repo.cleanup());
  await git(repo.root, 'branch', 'old-base');
  await writeFiles(repo.root, { 'src/a.ts': 'a2\n' });
  await git(repo.root, 'commit', '-q', '-am', 'change on main');

  const child: ChildProcess = fork(ENTRY, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  cleanups.push(() => {
    child.kill();
  });
  const messages: WorktreeToHost[] = [];
  child.on('message', (raw) => messages.push(WorktreeToHostSchema.parse(raw)));
  child.send({
    type: 'start',
    root: repo.root,
    port: 0,
    token: 'x'.repeat(32),
    requireToken: true,
  });

  const states = () =>
    messages.flatMap((message) => (message.type === 'reconcile-state' ? [message.state] : []));
  await waitUntil(() => states().length > 0, 20_000, 'first reconcile-state');
  expect(messages[0]?.type).toBe('listening');
  const first = states()[0];
  expect(first).toMatchObject({
    base: 'main',
    baseError: null,
    totals: { specs: 1, affectedSpecs: 0 },
  });

  child.send({ type: 'set-reconcile-base', base: 'old-base' });
  await waitUntil(
    () => states().some((state) => state.base === 'old-base'),
    20_000,
    'state vs old-base',
  );
  const moved = states().find((state) => state.base === 'old-base');
  expect(moved?.specs[0]).toMatchObject({ affected: true, affectedPaths: ['src/a.ts'] });
  child.send({ type: 'shutdown' });
});

it('get_project_context carries the spec summary from the live reconciliation state', async () => {
  const repo = await makeTempRepo({
    '.notarai/app.spec.yaml':
      "schema_version: '0.8'\nintent: App.\ntier: registered\nartifacts:\n  code:\n    - path: src/**\n",
    '.notarai/broken.spec.yaml': 'intent: [unclosed\n',
    'src/a.ts': 'a\n',
  });
  cleanups.push(() => repo.cleanup());
  const child: ChildProcess = fork(ENTRY, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  cleanups.push(() => {
    child.kill();
  });
  const messages: WorktreeToHost[] = [];
  child.on('message', (raw) => messages.push(WorktreeToHostSchema.parse(raw)));
  const token = 'x'.repeat(32);
  child.send({ type: 'start', root: repo.root, port: 0, token, requireToken: true });
  await waitUntil(() => messages[0]?.type === 'listening', 20_000, 'listening');
  const listening = messages[0] as Extract<WorktreeToHost, { type: 'listening' }>;
  const { client } = await connectClient(listening.port, 'modern-http', token);
  cleanups.push(() => client.close());
  const result = await client.callTool({ name: 'get_project_context', arguments: {} });
  expect(result.isError).not.toBe(true);
  expect((result.structuredContent as { specs: unknown }).specs).toEqual({
    total: 2,
    paths: ['.notarai/app.spec.yaml', '.notarai/broken.spec.yaml'],
    system_spec: null,
    invalid: [{ path: '.notarai/broken.spec.yaml', message: expect.any(String) }],
    drifted: { specs: 1, files: 1 }, // src/a.ts was never marked reconciled
  });
});
