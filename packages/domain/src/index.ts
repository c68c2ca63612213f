export * from './errors';
export * from './models';
export * from './validation';
export * from './password-hash';
export * from './api-key';
export * from './escape';
export * from './device-report';
export * from './capacity';
