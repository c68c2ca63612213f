import type { Knex } from 'knex';

/**
 * Retention of the audit trail (repositories/audit-retention.ts) deletes the oldest entries of
 * each kind in batches. Operators' and host commands' entries are found through
 * audit_log_occurred_at_idx; the storage users' OS-EC2 entries, which can be many more and are
 * kept for less time, get an index of their own, so that pruning them never walks the operators'
 * entries. Its predicate must stay the one the repository queries with (STORAGE_USER_ACTOR_PREFIX).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "CREATE INDEX audit_log_storage_user_idx ON audit_log (occurred_at) WHERE operator_id IS NULL AND operator_name LIKE 'storage user %'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX audit_log_storage_user_idx');
}
