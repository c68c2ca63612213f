export { createApp } from './app';
export { createDeps, createLogger, type Deps } from './deps';
export { readConfig, configSpec, type ManagementApiConfig } from './config';
export { adminKeyBanner, startManagementApi, type RunningApi } from './server';
export { createDatabase, migrateLatest, migrateRollbackAll } from './db/database';
export { bootstrap } from './bootstrap';
export { ensureClusters, ensureGatewayRole, parseClusterSpec, parseMigrateArgs, runMigrate, MIGRATE_USAGE } from './migrate';
export { createOperatorWithKey, resolveClusterRefs } from './services/operators';
export { findClusterByName, getCluster, listClusters } from './repositories/clusters';
