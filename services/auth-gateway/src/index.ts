export { createApp, AUTH_ROOT } from './app';
export { createDeps, createLogger, createRedis, closeRedis, REDACT_PATHS, type Deps } from './deps';
export { readConfig, configSpec, type GatewayConfig } from './config';
export { startAuthGateway, type RunningGateway } from './server';
