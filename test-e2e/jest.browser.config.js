/**
 * The console in a real browser: Debian's chromium (/usr/bin/chromium, `apt-get install chromium`)
 * driven by playwright-core against the management API on a real Postgres. Not part of `pnpm test`:
 *
 *   pnpm test:browser     (builds packages/console first)
 *
 * Screenshots land in test-e2e/browser/artifacts/ (gitignored).
 */
module.exports = {
  ...require('../jest.preset.js'),
  // The processes the tests start run dist/: built once per run (support/build-dist.js).
  globalSetup: '<rootDir>/support/build-dist.js',
  displayName: 'browser',
  rootDir: __dirname,
  // Files marked @slow first while jest has no timings (a fresh clone).
  testSequencer: '<rootDir>/../jest.sequencer.js',
  testMatch: ['<rootDir>/browser/**/*.test.ts'],
  testTimeout: 180000,
  maxWorkers: 1,
};
