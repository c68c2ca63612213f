export { createApp, routeTableOf } from './app';
export { createDeps, createLogger, type Deps } from './deps';
export { readConfig, configSpec, s3KeyringOf, DEFAULT_AUTH_URL, type ManagementApiConfig } from './config';
export {
  adminKeyBanner,
  startManagementApi,
  UnopenableSecretsError,
  type RunningApi,
  type StartOptions,
} from './server';
export { createDatabase, migrateLatest, migrateRollbackAll, migrateRollbackLast } from './db/database';
export { bootstrap } from './bootstrap';
export {
  ensureClusters,
  ensureGatewayRole,
  parseClusterSpec,
  parseCollectorSpec,
  parseMigrateArgs,
  runMigrate,
  MIGRATE_USAGE,
} from './migrate';
export { ensureCollector, type CollectorSpec } from './services/collectors';
export { SYSTEM_ACTING, type Acting } from './services/context';
export { findByName as findClusterByName } from './services/clusters';
export {
  createOperatorWithKey,
  createWithClusterNames as createOperatorWithClusterNames,
  resolveClusterRefs,
} from './services/operators';
export { ensureHourlyPartitions, maintainUtilization, rollUpDay } from './repositories/utilization-partitions';
export { resealAll, unopenableSecrets, type ResealResult, type UnopenableSecrets } from './services/s3-credentials';
export { backupDataDir, restoreDataDir, type RestoreResult } from './db/pglite-backup';
export { DataDirInUseError } from './db/data-dir-lock';
export { GZIP_MAGIC } from './db/embedded';
export { QuotaReconciler, type QuotaReconcilerOptions } from './services/quota-reconciler';
export { appliedQuotas, pendingQuotas, recordQuotaOutcomes } from './repositories/quotas';
