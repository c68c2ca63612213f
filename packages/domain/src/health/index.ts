export * from './thresholds';
export * from './round';
export * from './recon';
export * from './findings';
export * from './rules-drives';
export * from './rules-node';
export * from './time-to-full';
export * from './evaluate';
