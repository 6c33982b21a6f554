// ESLint flat config. Besides the usual TypeScript rules it enforces Grove's layering:
//   - imports run one way between folders (grove/layers, eslint-rules/layers.js holds the map);
//   - only main/electron/ may import `electron`;
//   - renderer/ and shared/ never import Node built-ins (`node:*`), so they run in a sandboxed
//     renderer and in a browser unchanged;
//   - renderer/ talks to the host only through shared/ (no imports from main/);
//   - in the worktree process (main/reconcile, main/tools, main/mcp, main/worktree) no module
//     touches a path through `node:fs`: every worktree path goes through the
//     confined file layer, main/platform/confined-fs.ts (docs/security.md). Calls on a descriptor
//     that layer opened (fstatSync, readSync, closeSync...) stay allowed.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import groveLayers from './eslint-rules/layers.js';

const noElectron = {
  paths: [{ name: 'electron', message: 'Only main/electron/ may import electron.' }],
  patterns: [{ group: ['electron/*'], message: 'Only main/electron/ may import electron.' }],
};
const noNode = {
  group: ['node:*'],
  message: 'renderer/ and shared/ must not use Node built-ins; put that code in main/.',
};

/** `node:fs` functions that take a path (they would follow symlinks, block on FIFOs...). */
const PATH_TAKING_FS = [
  'access',
  'accessSync',
  'appendFile',
  'appendFileSync',
  'chmod',
  'chmodSync',
  'chown',
  'chownSync',
  'copyFile',
  'copyFileSync',
  'cp',
  'cpSync',
  'createReadStream',
  'createWriteStream',
  'exists',
  'existsSync',
  'glob',
  'globSync',
  'lchown',
  'lchownSync',
  'link',
  'linkSync',
  'lstat',
  'lstatSync',
  'lutimes',
  'lutimesSync',
  'mkdir',
  'mkdirSync',
  'mkdtemp',
  'mkdtempSync',
  'open',
  'openSync',
  'opendir',
  'opendirSync',
  'promises',
  'readdir',
  'readdirSync',
  'readFile',
  'readFileSync',
  'readlink',
  'readlinkSync',
  'realpath',
  'realpathSync',
  'rename',
  'renameSync',
  'rm',
  'rmSync',
  'rmdir',
  'rmdirSync',
  'stat',
  'statSync',
  'statfs',
  'statfsSync',
  'symlink',
  'symlinkSync',
  'truncate',
  'truncateSync',
  'unlink',
  'unlinkSync',
  'utimes',
  'utimesSync',
  'watch',
  'watchFile',
  'writeFile',
  'writeFileSync',
  'default',
];
const confinedFs = 'Worktree paths go through main/platform/confined-fs.ts (docs/security.md).';
const worktreeFsRule = {
  paths: [
    ...noElectron.paths,
    ...['node:fs', 'fs'].map((name) => ({
      name,
      importNames: PATH_TAKING_FS,
      message: confinedFs,
    })),
    ...['node:fs/promises', 'fs/promises'].map((name) => ({
      name,
      allowTypeImports: true,
      message: confinedFs,
    })),
  ],
  patterns: noElectron.patterns,
};

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': ['error', noElectron],
    },
  },
  {
    files: ['main/**/*.{ts,tsx}', 'shared/**/*.{ts,tsx}', 'renderer/**/*.{ts,tsx}'],
    plugins: { grove: groveLayers },
    rules: { 'grove/layers': 'error' },
  },
  {
    files: [
      'main/reconcile/**/*.ts',
      'main/tools/**/*.ts',
      'main/mcp/**/*.ts',
      'main/worktree/**/*.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', worktreeFsRule] },
  },
  {
    files: ['main/electron/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['shared/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { ...noElectron, patterns: [...noElectron.patterns, noNode] },
      ],
    },
  },
  {
    files: ['renderer/**'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': [
        'error',
        {
          ...noElectron,
          patterns: [
            ...noElectron.patterns,
            noNode,
            {
              group: ['**/main/**'],
              message: 'renderer/ reaches the host only through shared/ (HostApi).',
            },
          ],
        },
      ],
    },
  },
);
