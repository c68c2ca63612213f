/** One jest run over every package; each project keeps its own transform settings. */
module.exports = {
  projects: [
    '<rootDir>/packages/domain',
    '<rootDir>/packages/config',
    '<rootDir>/services/management-api',
    '<rootDir>/services/auth-gateway',
  ],
};
