// A small rule set: typescript-eslint's recommended rules, plus the few that catch real bugs in
// async code. Formatting is Prettier's job (.prettierrc.json), not a lint rule.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always'],
      // Control characters in patterns are deliberate: names and untrusted text are checked for them.
      'no-control-regex': 'off',
    },
  },
  {
    // Small modules and functions: a file or function past these is split before it grows.
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 350 }], 'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }] },
  },
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: globals.node } },
);
