module.exports = { ...require('../../jest.preset.js'), displayName: 'management-api' };
