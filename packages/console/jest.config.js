module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'console',
  testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/shell/**/*.test.ts'],
};
