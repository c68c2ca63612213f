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
  // Files marked @slow first while jest has no timings (a fresh clone).
  testSequencer: '<rootDir>/../jest.sequencer.js',
  testMatch: ['<rootDir>/interop/**/*.test.ts'],
  // Top level of the config (a project-level testTimeout would be ignored in multi-project runs).
  testTimeout: 300000,
  // Two files at a time: each spends much of its time waiting (Swift's Python starting, replication
  // passes, expiry windows), which the other file's work fills. Safe because nothing is shared
  // between files: each cluster has its own temp dir, device mounts and log socket, each stack its
  // own database, and every port a test names before its server binds it comes from this jest
  // worker's own block below the kernel's ephemeral range (support/ports.ts), so neither the other
  // worker nor an outgoing connection can take it meanwhile.
  maxWorkers: 2,
};
