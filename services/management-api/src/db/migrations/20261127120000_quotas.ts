import type { Knex } from 'knex';

/**
 * Account quotas, which Swift's `account_quotas` middleware enforces and Cairn applies (expand
 * only: every column is new and nullable or defaulted, so the previous release keeps working).
 *
 * - `storage_users`: the desired quotas. NULL is no quota; the per-policy ones are JSON objects
 *   from the policy's name to a decimal string (a bigint, as the API shows it).
 * - `clusters`: default quotas given to users created without their own.
 * - `quota_applications`: the reconciler's record per user. `wanted_version` is bumped in the
 *   transaction that changes a user's quotas, `applied_version` is the last one Swift accepted;
 *   a user is pending while they differ. A user with no row never had a quota (nothing to apply).
 * - `cluster_swift_info`: what the reconciler last read from the cluster's Swift `/info`, so the
 *   API can refuse a quota that Swift cannot enforce.
 *
 * Every change of `wanted_version` is announced on `cairn_quota_changes` (payload: the cluster
 * id), which wakes the replica that holds the reconciler lock.
 */
export async function up(knex: Knex): Promise<void> {
  // NOT VALID: the new columns are NULL in every existing row, so nothing needs scanning under the lock.
  await knex.raw(`ALTER TABLE storage_users
    ADD COLUMN quota_bytes bigint, ADD COLUMN quota_count bigint, ADD COLUMN quota_bytes_policy jsonb, ADD COLUMN quota_count_policy jsonb,
    ADD CONSTRAINT storage_users_quota_bytes_check CHECK (quota_bytes >= 0) NOT VALID,
    ADD CONSTRAINT storage_users_quota_count_check CHECK (quota_count >= 0) NOT VALID`);
  // Lists filtered or ordered by a quota (the usual question: who has one, who has the largest).
  await knex.raw(
    'CREATE INDEX storage_users_quota_bytes_idx ON storage_users (quota_bytes, id) WHERE quota_bytes IS NOT NULL',
  );
  await knex.raw(
    'CREATE INDEX storage_users_quota_count_idx ON storage_users (quota_count, id) WHERE quota_count IS NOT NULL',
  );
  await knex.raw(`ALTER TABLE clusters
    ADD COLUMN default_quota_bytes bigint, ADD COLUMN default_quota_count bigint,
    ADD COLUMN default_quota_bytes_policy jsonb, ADD COLUMN default_quota_count_policy jsonb,
    ADD CONSTRAINT clusters_default_quota_bytes_check CHECK (default_quota_bytes >= 0) NOT VALID,
    ADD CONSTRAINT clusters_default_quota_count_check CHECK (default_quota_count >= 0) NOT VALID`);

  await knex.raw(`CREATE TABLE quota_applications (
    user_id bigint PRIMARY KEY REFERENCES storage_users(id) ON DELETE CASCADE,
    cluster_id integer NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
    wanted_version bigint NOT NULL DEFAULT 1,
    applied_version bigint NOT NULL DEFAULT 0,
    applied_at timestamptz(3),
    error text,
    attempts integer NOT NULL DEFAULT 0,
    retry_at timestamptz(3)
  )`);
  // The reconciler's two reads: what is pending (small), and every applied user for the drift check.
  await knex.raw(
    'CREATE INDEX quota_applications_pending_idx ON quota_applications (cluster_id, user_id) WHERE wanted_version > applied_version',
  );
  await knex.raw('CREATE INDEX quota_applications_cluster_idx ON quota_applications (cluster_id, user_id)');

  await knex.raw(`CREATE TABLE cluster_swift_info (
    cluster_id integer PRIMARY KEY REFERENCES clusters(id) ON DELETE CASCADE,
    swift_version text,
    account_quotas boolean NOT NULL,
    policies jsonb NOT NULL DEFAULT '[]',
    read_at timestamptz(3) NOT NULL
  )`);

  await knex.raw(`
    CREATE FUNCTION cairn_announce_quota_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('cairn_quota_changes', NEW.cluster_id::text);
      RETURN NULL;
    END $$`);
  // Row-level, on the version only: the reconciler's own writes (applied_version, errors) stay quiet.
  // Postgres folds identical notices of one transaction into one.
  await knex.raw(`CREATE TRIGGER quota_applications_announced AFTER INSERT OR UPDATE OF wanted_version ON quota_applications
    FOR EACH ROW EXECUTE FUNCTION cairn_announce_quota_changes()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE quota_applications');
  await knex.raw('DROP FUNCTION cairn_announce_quota_changes()');
  await knex.raw('DROP TABLE cluster_swift_info');
  await knex.raw(`ALTER TABLE clusters DROP COLUMN default_quota_bytes, DROP COLUMN default_quota_count,
    DROP COLUMN default_quota_bytes_policy, DROP COLUMN default_quota_count_policy`);
  await knex.raw(`ALTER TABLE storage_users DROP COLUMN quota_bytes, DROP COLUMN quota_count,
    DROP COLUMN quota_bytes_policy, DROP COLUMN quota_count_policy`);
}
