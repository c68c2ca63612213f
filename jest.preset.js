const path = require('node:path');

/**
 * Shared jest settings: TypeScript through ts-jest as plain transpilation (isolatedModules in the
 * tsconfig); `tsc` type-checks the whole repo once in `pnpm typecheck`.
 */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.base.json'), diagnostics: false }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
};
