import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'data/**', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Plain ES modules run by node (scripts/, this file, vite.config.mjs): node's globals, and no
  // TypeScript-only rules beyond what typescript-eslint's recommended set checks in JS too.
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read the environment in config.ts only.' },
      ],
      // Prettier wraps code at 120 columns; this catches the comments it leaves alone. A string
      // literal is never split, so a line holding one may run longer.
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
    },
  },
  {
    files: ['**/config.ts', '**/test/**', 'test-e2e/**', 'bench/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  // Layering: routes -> services -> repositories, never back. The layers below the routes know
  // nothing of HTTP, so they can be called from the CLI, bootstrap and tests alike.
  {
    files: [
      'services/management-api/src/services/**',
      'services/management-api/src/repositories/**',
      'services/management-api/src/resources/**',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'express', message: 'Only routes/ and http/ speak HTTP.' }],
          patterns: [
            {
              group: ['**/http/*', '**/routes/*'],
              message:
                'Services, repositories and resources must not depend on HTTP code: routes call services, not the reverse.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['services/management-api/src/repositories/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'express', message: 'Only routes/ and http/ speak HTTP.' }],
          patterns: [
            {
              group: ['**/http/*', '**/routes/*', '**/services/*'],
              message: 'Repositories hold SQL only: services call them, not the reverse.',
            },
          ],
        },
      ],
    },
  },
  // The other direction: the HTTP layer and the host commands reach the database only through
  // services, which check permissions, own transactions and audit records. Types a route needs
  // are exported by the services too.
  {
    files: [
      'services/management-api/src/routes/**',
      'services/management-api/src/http/**',
      'services/management-api/src/app.ts',
      'services/management-api/src/bootstrap.ts',
      'services/management-api/src/migrate.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/repositories/*', '**/repositories'],
              message:
                'Call a service (src/services/), not a repository: permission checks, transactions and audit records live there.',
            },
          ],
        },
      ],
    },
  },
  {
    files: [
      'services/auth-gateway/src/flows/**',
      'services/auth-gateway/src/credentials/**',
      'services/auth-gateway/src/tokens/**',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/routes/*'], message: 'Routes call flows, credentials and tokens, not the reverse.' },
          ],
        },
      ],
    },
  },
);
