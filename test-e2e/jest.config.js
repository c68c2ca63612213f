module.exports = { ...require('../jest.preset.js'), displayName: 'e2e', testMatch: ['<rootDir>/**/*.test.ts'] };
