module.exports = { ...require('../../jest.preset.js'), displayName: 'swift-cluster' };
