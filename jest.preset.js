/**
 * Shared jest settings: TypeScript through swc as plain transpilation (isolatedModules in the
 * tsconfig makes every file transpilable on its own); `tsc` type-checks the whole repo once in
 * `pnpm typecheck`. swc rather than ts-jest: a clean clone has no transform cache, and TypeScript's
 * own transpiler took about half of the first run of a file that loads the management API.
 */
module.exports = {
  testEnvironment: 'node',
  // `@cairn/*` imports resolve to the packages' src/ (their `cairn-source` export), never to a
  // dist/ that `pnpm build` may have left behind, stale or absent.
  testEnvironmentOptions: { customExportConditions: ['cairn-source', 'node', 'node-addons'] },
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      // tsconfig.base.json's target and module. A namespace import (`import * as`) is a copy of the
      // module in swc's CommonJS, so a spy on the module sees only calls through named imports.
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
