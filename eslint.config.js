// ESLint flat config. Besides the usual TypeScript rules it enforces Grove's layering:
//   - only main/electron/ may import `electron`;
//   - renderer/ and shared/ never import Node built-ins (`node:*`), so they run in a sandboxed
//     renderer and in a browser unchanged;
//   - renderer/ talks to the host only through shared/ (no imports from main/).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

const noElectron = {
  paths: [{ name: 'electron', message: 'Only main/electron/ may import electron.' }],
  patterns: [{ group: ['electron/*'], message: 'Only main/electron/ may import electron.' }],
};
const noNode = {
  group: ['node:*'],
  message: 'renderer/ and shared/ must not use Node built-ins; put that code in main/.',
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
