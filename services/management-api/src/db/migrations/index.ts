import type { Knex } from 'knex';
import * as initialSchema from './20261122000000_initial_schema';
import * as clusterUserCounts from './20261122010000_cluster_user_counts';
import * as capacityReports from './20261122020000_capacity_reports';
import * as auditLog from './20261122030000_audit_log';
import * as userIdBuckets from './20261122040000_user_id_buckets';
import * as storageUserChangeNotices from './20261122041500_storage_user_change_notices';
import * as userOrderingIndex from './20261123100000_user_ordering_index';
import * as clusterChangeNotices from './20261123200000_cluster_change_notices';
import * as userFlagOrdering from './20261123220000_user_flag_ordering';
import * as utilization from './20261123230000_utilization';
import * as s3Credentials from './20261124000000_s3_credentials';
import * as capacityHistory from './20261124010000_capacity_history';
import * as userNameBuckets from './20261124020000_user_name_buckets';
import * as utilizationHourBrin from './20261124030000_utilization_hour_brin';
import * as operatorClustersRestrict from './20261126000000_operator_clusters_restrict';
import * as auditRetention from './20261127000000_audit_retention';
import * as utilizationClusterRollups from './20261127000000_utilization_cluster_rollups';
import * as collectorRuns from './20261127010000_collector_runs';
import * as quotas from './20261127120000_quotas';
import * as passwordScheme from './20261127130000_password_scheme';
import * as consoleSessions from './20261127140000_console_sessions';
import * as changeLog from './20261127150000_change_log';
import * as applicationCredentials from './20261127160000_application_credentials';
import * as s3CredentialLifetimes from './20261127170000_s3_credential_lifetimes';
import * as applicationCredentialNotices from './20261127180000_application_credential_notices';
import * as consoleSessionStepUp from './20261128100000_console_session_step_up';
import * as utilizationStorageLatest from './20261128110000_utilization_storage_latest';
import * as tempauthUserNames from './20261128120000_tempauth_user_names';
import * as ringVersions from './20261128130000_ring_versions';
import * as clusterHealth from './20261128210000_cluster_health';
import * as storageUserSessions from './20261129000000_storage_user_sessions';
import * as ringPlans from './20261129020000_ring_plans';
import * as storageSessionGatewayTokens from './20261129040000_storage_session_gateway_tokens';
import * as utilizationRequestClasses from './20261129050000_utilization_request_classes';
import * as storageSessionApplicationCredentials from './20261130020000_storage_session_application_credentials';
import * as userIdSpans from './20261130040000_user_id_spans';
import * as userNameRangeBound from './20261130050000_user_name_range_bound';
import * as userNameSpans from './20261130060000_user_name_spans';

/**
 * Migrations are listed here rather than discovered on disk so they run the same under tsx, jest
 * and a bundled image. Add new ones at the end, named by timestamp.
 */
const migrations: Record<string, Knex.Migration> = {
  '20261122000000_initial_schema': initialSchema,
  '20261122010000_cluster_user_counts': clusterUserCounts,
  '20261122020000_capacity_reports': capacityReports,
  '20261122030000_audit_log': auditLog,
  '20261122040000_user_id_buckets': userIdBuckets,
  '20261122041500_storage_user_change_notices': storageUserChangeNotices,
  '20261123100000_user_ordering_index': userOrderingIndex,
  '20261123200000_cluster_change_notices': clusterChangeNotices,
  '20261123220000_user_flag_ordering': userFlagOrdering,
  '20261123230000_utilization': utilization,
  '20261124000000_s3_credentials': s3Credentials,
  '20261124010000_capacity_history': capacityHistory,
  '20261124020000_user_name_buckets': userNameBuckets,
  '20261124030000_utilization_hour_brin': utilizationHourBrin,
  '20261126000000_operator_clusters_restrict': operatorClustersRestrict,
  '20261127000000_audit_retention': auditRetention,
  '20261127000000_utilization_cluster_rollups': utilizationClusterRollups,
  '20261127010000_collector_runs': collectorRuns,
  '20261127120000_quotas': quotas,
  '20261127130000_password_scheme': passwordScheme,
  '20261127140000_console_sessions': consoleSessions,
  '20261127150000_change_log': changeLog,
  '20261127160000_application_credentials': applicationCredentials,
  '20261127170000_s3_credential_lifetimes': s3CredentialLifetimes,
  '20261127180000_application_credential_notices': applicationCredentialNotices,
  '20261128100000_console_session_step_up': consoleSessionStepUp,
  '20261128110000_utilization_storage_latest': utilizationStorageLatest,
  '20261128120000_tempauth_user_names': tempauthUserNames,
  '20261128130000_ring_versions': ringVersions,
  '20261128210000_cluster_health': clusterHealth,
  '20261129000000_storage_user_sessions': storageUserSessions,
  '20261129020000_ring_plans': ringPlans,
  '20261129040000_storage_session_gateway_tokens': storageSessionGatewayTokens,
  '20261129050000_utilization_request_classes': utilizationRequestClasses,
  '20261130020000_storage_session_application_credentials': storageSessionApplicationCredentials,
  '20261130040000_user_id_spans': userIdSpans,
  '20261130050000_user_name_range_bound': userNameRangeBound,
  '20261130060000_user_name_spans': userNameSpans,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const migration = migrations[name];
    if (!migration) throw new Error(`Unknown migration ${name}`);
    return migration;
  },
};
