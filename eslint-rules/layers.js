// Grove's layers, and the ESLint rule that keeps imports running one way between them
// (docs/architecture.md, "Layers"). Each folder lists the folders its production code may import;
// anything else — an import up the stack, or across into the other stack — fails `npm run lint`.
//
//   shared/                                   contracts and schemas; imports nothing of ours
//   main/platform/                            confined fs, git, worker pool, log, errors, paths
//   main/reconcile/  → main/tools/  → main/mcp/  → main/worktree/     the worktree process
//     main/reconcile/ inside, bottom up: specs/ → floor/ → notarai05/, notarai07/ (side by side,
//     neither imports the other) → the engine, the watcher and the window's state at its top
//   main/chat/  → main/host/  → main/electron/, main/headless/        the host
//   main/notarai-cli/  (grove check|score|export-context: the engine without a host; headless runs it)
//   main/bridge/  (grove bridge: finds the host, or serves the worktree stack itself over stdio;
//                  may import both stacks; the two shells that run it import it)
//   renderer/                                 the window; reaches the host only through shared/,
//     renderer/src/host-api/ → store/ → common/ → chat/, reconcile/, coverage/ → ui/ → main.tsx
//     (tools/: pure helpers of the tool console; common/: what several views share)
//
// Tests may import anything (they are never bundled); production code never imports test support
// (main/testing/). Package imports are not this rule's business (see no-restricted-imports).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const WORKTREE_STACK = ['main/reconcile', 'main/tools', 'main/mcp', 'main/worktree'];
const HOST_STACK = ['main/chat', 'main/host'];

// The renderer's folders, bottom up: each may import shared/ and the folders before it in this
// list except its siblings (chat/, reconcile/ and coverage/ are views side by side: none imports
// another). A new view (a tab of its own) gets a folder beside them and a line here.
const R = 'renderer/src';
const RENDERER_BASE = [`${R}/host-api`, `${R}/store`, `${R}/tools`, `${R}/common`];
const RENDERER_VIEWS = [`${R}/chat`, `${R}/reconcile`, `${R}/coverage`];
const RENDERER_LAYERS = {
  [`${R}/host-api`]: ['shared'],
  [`${R}/store`]: ['shared', `${R}/host-api`],
  [`${R}/tools`]: ['shared'],
  [`${R}/common`]: ['shared', `${R}/host-api`, `${R}/store`],
  ...Object.fromEntries(RENDERER_VIEWS.map((view) => [view, ['shared', ...RENDERER_BASE]])),
  [`${R}/ui`]: ['shared', ...RENDERER_BASE, ...RENDERER_VIEWS],
  // renderer/src/main.tsx and anything else directly under renderer/: the entry, on top
  renderer: ['shared', ...RENDERER_BASE, ...RENDERER_VIEWS, `${R}/ui`],
};

// main/reconcile/'s own layers, bottom up: NotarAI's spec format, the floor every operation
// stands on (git, the cache, the live index, the one classification), then NotarAI 0.5's and
// 0.7's operations side by side; the folder itself holds the engine and the watcher on top.
const RC = 'main/reconcile';
const RECONCILE_BASE = [`${RC}/specs`, `${RC}/floor`];
const RECONCILE_OPERATIONS = [`${RC}/notarai05`, `${RC}/notarai07`];
const RECONCILE_ALL = [RC, ...RECONCILE_BASE, ...RECONCILE_OPERATIONS];
const RECONCILE_LAYERS = {
  [`${RC}/specs`]: ['shared', 'main/platform'],
  [`${RC}/floor`]: ['shared', 'main/platform', `${RC}/specs`],
  ...Object.fromEntries(
    RECONCILE_OPERATIONS.map((folder) => [folder, ['shared', 'main/platform', ...RECONCILE_BASE]]),
  ),
  [RC]: ['shared', 'main/platform', ...RECONCILE_BASE, ...RECONCILE_OPERATIONS],
};
/** A list of folders with main/reconcile/ standing for all of its layers. */
const expand = (folders) => folders.flatMap((folder) => (folder === RC ? RECONCILE_ALL : [folder]));

/** Folder → the folders its production code may import (its own folder always may). */
export const LAYERS = {
  shared: [],
  'main/platform': ['shared'],
  ...Object.fromEntries(
    WORKTREE_STACK.map((folder, index) => [
      folder,
      expand(['shared', 'main/platform', ...WORKTREE_STACK.slice(0, index)]),
    ]),
  ),
  ...RECONCILE_LAYERS,
  ...Object.fromEntries(
    HOST_STACK.map((folder, index) => [
      folder,
      ['shared', 'main/platform', ...HOST_STACK.slice(0, index)],
    ]),
  ),
  'main/bridge': expand(['shared', 'main/platform', ...WORKTREE_STACK, ...HOST_STACK]),
  'main/electron': ['shared', 'main/platform', ...HOST_STACK, 'main/bridge'],
  // grove check / score / export-context: the engine as NotarAI's CLI, no host.
  'main/notarai-cli': expand(['shared', 'main/platform', 'main/reconcile', 'main/tools']),
  'main/headless': ['shared', 'main/platform', ...HOST_STACK, 'main/bridge', 'main/notarai-cli'],
  ...RENDERER_LAYERS,
};

/** Folders outside the layers that may import anything: test support, scripts, e2e tests. */
const UNLAYERED = ['main/testing', 'scripts', 'e2e'];

function folderOf(relativePath) {
  const posix = relativePath.split(path.sep).join('/');
  return [...Object.keys(LAYERS), ...UNLAYERED]
    .filter((folder) => posix === folder || posix.startsWith(`${folder}/`))
    .sort((a, b) => b.length - a.length)[0];
}

const isTestFile = (file) => /\.(test|spec)\.tsx?$/.test(file);

/** @type {import('eslint').Rule.RuleModule} */
const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports run one way between Grove layers (docs/architecture.md).' },
    schema: [],
  },
  create(context) {
    const file = path.relative(ROOT, context.filename);
    const from = folderOf(file);
    if (!from || UNLAYERED.includes(from) || isTestFile(file)) return {};
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.relative(ROOT, path.resolve(path.dirname(context.filename), source));
      const to = folderOf(target);
      if (!to || to === from) return;
      if (to === 'main/testing') {
        context.report({ node, message: `${from}/ may not import test support (${target}).` });
      } else if (!LAYERS[from].includes(to)) {
        const allowed = LAYERS[from].length ? LAYERS[from].join(', ') : 'nothing of ours';
        context.report({
          node,
          message: `${from}/ may not import ${to}/ (${target}): imports run one way between layers; ${from}/ may import ${allowed} (docs/architecture.md, "Layers").`,
        });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};

export default { rules: { layers: layersRule } };
