/**
 * Interop tests against real third-party software (a single-node OpenStack Swift on loopback, see
 * interop/swift-cluster.ts). Not part of `pnpm test`: Swift must be installed first
 * (interop/install-swift.sh) and a run takes a few minutes.
 *
 *   node --experimental-vm-modules node_modules/jest/bin/jest.js -c test-e2e/jest.interop.config.js
 */
module.exports = {
  ...require('../jest.preset.js'),
  // The processes the tests start run dist/: built once per run (support/build-dist.js).
  globalSetup: '<rootDir>/support/build-dist.js',
  displayName: 'interop',
  rootDir: __dirname,
  testMatch: ['<rootDir>/interop/**/*.test.ts'],
  // Top level of the config (a project-level testTimeout would be ignored in multi-project runs).
  testTimeout: 300000,
  // Swift clusters are heavy on 2 cores: one test file at a time.
  maxWorkers: 1,
};
