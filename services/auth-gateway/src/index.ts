export { createApp, AUTH_ROOT } from './app';
export { createDeps, createLogger, LOGGED_SECRETS, type Deps } from './deps';
export { createRedis, closeRedis, parseRedisUrl, type RedisClient, type RedisTarget } from './redis';
export { readConfig, configSpec, type GatewayConfig } from './config';
export { startAuthGateway, type RunningGateway } from './server';
export { DEFAULT_CLUSTER } from './deps';
export { clusterNames, findCluster, type ClusterInfo } from './credentials/cluster';
export { CLUSTER_POLL_MS, type ServedCluster } from './credentials/served-cluster';
export { warmUpPasswordChecks } from './credentials/verifier';
