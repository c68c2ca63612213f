const path = require('node:path');

/**
 * Shared jest settings: TypeScript through ts-jest as plain transpilation (isolatedModules in the
 * tsconfig); `tsc` type-checks the whole repo once in `pnpm typecheck`.
 */
module.exports = {
  testEnvironment: 'node',
  // `@cairn/*` imports resolve to the packages' src/ (their `cairn-source` export), never to a
  // dist/ that `pnpm build` may have left behind, stale or absent.
  testEnvironmentOptions: { customExportConditions: ['cairn-source', 'node', 'node-addons'] },
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.base.json'), diagnostics: false }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
