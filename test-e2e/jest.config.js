module.exports = {
  ...require('../jest.preset.js'),
  // The processes the tests start run dist/: built once per run (support/build-dist.js).
  globalSetup: '<rootDir>/support/build-dist.js',
  displayName: 'e2e',
  testMatch: ['<rootDir>/**/*.test.ts'],
  // The Swift interop suite needs Debian's Swift packages and runs apart: `pnpm test:interop`;
  // the fault tests restart their own Postgres and Redis and run apart too: `pnpm test:faults`;
  // the console's browser tests need Debian's chromium: `pnpm test:browser`.
  testPathIgnorePatterns: ['/node_modules/', '/interop/', '/faults/', '/browser/'],
};
