/** One jest run over every package; each project keeps its own transform settings. */
module.exports = {
  // Global in multi-project runs (ignored inside a project): integration and e2e tests start real
  // databases and processes.
  testTimeout: 120000,
  // A global option: the projects' own (from jest.preset.js) apply only when a project runs alone.
  testSequencer: '<rootDir>/jest.sequencer.js',
  projects: [
    '<rootDir>/packages/domain',
    '<rootDir>/packages/contract',
    '<rootDir>/packages/config',
    '<rootDir>/packages/runtime',
    '<rootDir>/packages/cli',
    '<rootDir>/packages/swift-cluster',
    '<rootDir>/packages/rings',
    '<rootDir>/packages/console',
    '<rootDir>/services/management-api',
    '<rootDir>/services/auth-gateway',
    '<rootDir>/test-e2e',
  ],
};
