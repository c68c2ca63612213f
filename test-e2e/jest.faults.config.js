/**
 * Fault-injection tests (`pnpm test:faults`): Postgres and Redis restarts and outages, and
 * SIGKILL of the management API mid-write, under load, and TLS to Postgres and Redis with a
 * private CA. They run their own Postgres cluster
 * (port 5433, created on first use with pg_createcluster) and their own redis-server (port 6390),
 * never the shared ones; the TLS tests a TLS-only Postgres on 5434 and redis-server on 6391, with
 * a CA made by openssl at test time. Two files at a time, each worker with servers of its own
 * (the second's ports are 10 higher, its cluster `cairnfaults2`: faults/support/ports.ts). About
 * two minutes. Not part of `pnpm test`.
 *
 *   node --experimental-vm-modules node_modules/jest/bin/jest.js -c test-e2e/jest.faults.config.js
 */
module.exports = {
  ...require('../jest.preset.js'),
  // The processes the tests start run dist/: built once per run (support/build-dist.js).
  globalSetup: '<rootDir>/support/build-dist.js',
  displayName: 'faults',
  rootDir: __dirname,
  // Files marked @slow first while jest has no timings (a fresh clone).
  testSequencer: '<rootDir>/../jest.sequencer.js',
  testMatch: ['<rootDir>/faults/**/*.test.ts'],
  testTimeout: 120000,
  // Two files at a time, each jest worker with its own Postgres cluster and redis-servers
  // (faults/support/ports.ts), so one file's restarts never reach the other's.
  maxWorkers: 2,
};
