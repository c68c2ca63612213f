import type { Knex } from 'knex';

/**
 * Counters over ranges of user names, so that `order_by=user` / `-user` deep pages and the exact
 * `total_count` of `user__startswith=<prefix>` cost a few thousand counters and at most a couple of
 * ranges' index entries instead of a walk over every skipped or matching name.
 *
 * - `username` is compared byte by byte (COLLATE "C"): then a prefix is one contiguous range of
 *   the ordering every list sorts by, and `LIKE 'prefix%'` is a range scan of the (username, id)
 *   index, which makes the older text_pattern_ops index redundant (dropped: one btree fewer per
 *   insert). Names are logins (ASCII or Latin-1), where byte order is code point order; a database
 *   created with a linguistic collation now sorts them the same way as every other.
 * - storage_user_name_ranges cuts all names into ranges [lower_name, upper_name) (upper NULL: no
 *   end; the first range starts at '', below every name), shared by all clusters, each with the
 *   number of users in it. storage_user_name_buckets holds the same count per (cluster, range), so
 *   a list of some clusters sums its own. The list planner (repositories/list-planner.ts) sums them
 *   in name order to find the range a deep page starts in, and walks the index inside it only.
 * - Ranges stay small: when a statement leaves a range with more than twice the target size
 *   (storage_user_name_bucket_settings, one row; tests lower it), the same statement cuts it into
 *   ranges of about the target size at names of its own rows, and recounts them from the rows.
 *   Emptied ranges stay (a later insert reuses them).
 * - Exact under concurrency: a statement locks the range rows its names fall in, in name order,
 *   reading each range's end only once it holds the range (see lockRanges); a range is only ever
 *   cut by the holder of its lock, so no range it counts into can change until it commits. The cut
 *   recounts rows nobody else can be adding to or removing from (they would hold the range).
 * - Names never change (the API refuses it; a guard trigger makes it a rule of the database, like
 *   the id and cluster guard), so updates need no counting. TRUNCATE resets the ranges.
 */
const TARGET_SIZE = 4096;

/**
 * Locks the rows of `table` covering the names [lo, hi], one at a time in name order, and lists
 * their lower ends in `held`. The rows tile all names as [lower_name, upper_name) and are only
 * ever cut by the holder of a row's lock, which keeps the row as the first piece. Each row's end is
 * read with its lock (SELECT … FOR UPDATE under READ COMMITTED returns the row as the transaction
 * it waited for left it), so it is final, and it is the next row's start: rows cut while this
 * statement waited are found, and every statement locks in the same order, so they wait for each
 * other but never deadlock.
 */
export const lockCovering = (table: string, held: string) => `
  ${held} := '{}';
  SELECT max(lower_name) INTO cur FROM ${table} WHERE lower_name <= lo;
  LOOP
    SELECT upper_name INTO nxt FROM ${table} WHERE lower_name = cur FOR UPDATE;
    IF nxt IS NULL OR nxt > lo THEN ${held} := ${held} || cur; END IF;
    EXIT WHEN nxt IS NULL OR nxt > hi;
    cur := nxt;
  END LOOP;`;

/** Locks the ranges the statement's names (`names`: a transition table) fall in (see lockCovering). */
export const lockRanges = (names: string) => `
  SELECT min(username), max(username) INTO lo, hi FROM ${names};
  IF lo IS NULL THEN RETURN NULL; END IF;${lockCovering('storage_user_name_ranges', 'held')}`;

/**
 * Each row's range: `held` lists the lower ends of the ranges covering the statement's names, in
 * order, and width_bucket finds a name's by binary search (no index probe per row on a bulk insert).
 */
export const assigned = (names: string, sign: string) => `
  SELECT held[width_bucket(u.username, held)] AS lower_name, u.cluster_id, ${sign}count(*) AS n FROM ${names} u GROUP BY 1, 2`;

/**
 * Pieces of the counting trigger functions, over `counted` (each range's and cluster's rows, see
 * assigned; negative for deletes) and `held`: the per-cluster counts of inserted and of deleted
 * users, the ranges' own counts, and the held ranges grown past twice the target.
 */
export const insertedPerCluster = `
          INSERT INTO storage_user_name_buckets (cluster_id, lower_name, n)
            SELECT cluster_id, lower_name, n FROM counted ORDER BY 1, 2
          ON CONFLICT (cluster_id, lower_name) DO UPDATE SET n = storage_user_name_buckets.n + EXCLUDED.n`;
export const deletedPerCluster = `
          UPDATE storage_user_name_buckets b SET n = b.n + c.n
            FROM counted c WHERE b.cluster_id = c.cluster_id AND b.lower_name = c.lower_name`;
export const perRange = `
UPDATE storage_user_name_ranges r SET n = r.n + c.n
        FROM (SELECT lower_name, sum(n) AS n FROM counted GROUP BY 1) c WHERE r.lower_name = c.lower_name;`;
export const bigRanges = `
        SELECT lower_name FROM storage_user_name_ranges
         WHERE lower_name = ANY (held) AND n > 2 * (SELECT target_size FROM storage_user_name_bucket_settings)`;

/** The counting trigger functions as this migration defines them (a later one adds to them and restores these). */
export const countInsertedUsers = `
    CREATE OR REPLACE FUNCTION cairn_name_count_inserted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      lo varchar COLLATE "C";
      hi varchar COLLATE "C";
      cur varchar COLLATE "C";
      nxt varchar COLLATE "C";
      held varchar[] COLLATE "C";
      big varchar COLLATE "C";
    BEGIN
      ${lockRanges('inserted_users')}
      WITH counted AS (${assigned('inserted_users', '')}),
        per_cluster AS (${insertedPerCluster})
      ${perRange}
      FOR big IN ${bigRanges}
      LOOP
        PERFORM cairn_cut_name_range(big);
      END LOOP;
      RETURN NULL;
    END $$`;
export const countDeletedUsers = `
    CREATE OR REPLACE FUNCTION cairn_name_count_deleted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      lo varchar COLLATE "C";
      hi varchar COLLATE "C";
      cur varchar COLLATE "C";
      nxt varchar COLLATE "C";
      held varchar[] COLLATE "C";
    BEGIN
      ${lockRanges('deleted_users')}
      WITH counted AS (${assigned('deleted_users', '-')}),
        per_cluster AS (${deletedPerCluster})
      ${perRange}
      RETURN NULL;
    END $$`;
export const uncountTruncatedUsers = `
    CREATE OR REPLACE FUNCTION cairn_name_uncount_truncated_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM storage_user_name_buckets;
      DELETE FROM storage_user_name_ranges;
      INSERT INTO storage_user_name_ranges (lower_name, upper_name, n) VALUES ('', NULL, 0);
      RETURN NULL;
    END $$`;

export async function up(knex: Knex): Promise<void> {
  // No write may slip in between the backfill below and the new triggers.
  await knex.raw('LOCK TABLE storage_users IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw('DROP INDEX storage_users_username_idx');
  await knex.raw('ALTER TABLE storage_users ALTER COLUMN username TYPE varchar(255) COLLATE "C"');

  await knex.raw(`CREATE TABLE storage_user_name_bucket_settings (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      target_size integer NOT NULL CHECK (target_size >= 1))`);
  await knex.raw('INSERT INTO storage_user_name_bucket_settings (target_size) VALUES (?)', [TARGET_SIZE]);
  await knex.raw(`CREATE TABLE storage_user_name_ranges (
      lower_name varchar(255) COLLATE "C" PRIMARY KEY,
      upper_name varchar(255) COLLATE "C",
      n bigint NOT NULL)`);
  await knex.raw(`CREATE TABLE storage_user_name_buckets (
      cluster_id integer NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
      lower_name varchar(255) COLLATE "C" NOT NULL,
      n bigint NOT NULL,
      PRIMARY KEY (cluster_id, lower_name))`);

  // Cuts the range starting at `start` into ranges of about the target size, recounted from the rows.
  // The caller holds the range's lock.
  await knex.raw(`
    CREATE FUNCTION cairn_cut_name_range(first_name varchar) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      start varchar COLLATE "C" := first_name;
      stop varchar COLLATE "C";
      total bigint;
      target integer;
      bounds varchar[] COLLATE "C";
    BEGIN
      SELECT upper_name, n INTO stop, total FROM storage_user_name_ranges WHERE lower_name = start;
      SELECT target_size INTO target FROM storage_user_name_bucket_settings;
      -- The range's own start, then every ceil(total / pieces)-th name above it, distinct.
      SELECT array_prepend(start, coalesce(array_agg(DISTINCT username ORDER BY username), '{}')) INTO bounds FROM (
          SELECT username, row_number() OVER (ORDER BY username) - 1 AS i
            FROM storage_users WHERE username >= start AND (stop IS NULL OR username < stop)
        ) AS numbered
       WHERE i > 0 AND i % ceil(total::numeric / ceil(total::numeric / target))::bigint = 0 AND username > start;
      IF cardinality(bounds) = 1 THEN RETURN; END IF;
      DELETE FROM storage_user_name_buckets WHERE lower_name = start;
      -- The first piece keeps the range's row (updated, not replaced), so a statement waiting for
      -- its lock gets it, and then finds the range shorter.
      WITH counted AS (
          SELECT bounds[width_bucket(username, bounds)] AS lower_name, cluster_id, count(*) AS n
            FROM storage_users WHERE username >= start AND (stop IS NULL OR username < stop)
           GROUP BY 1, 2
        ),
        per_cluster AS (INSERT INTO storage_user_name_buckets (cluster_id, lower_name, n) SELECT cluster_id, lower_name, n FROM counted)
      INSERT INTO storage_user_name_ranges (lower_name, upper_name, n)
        SELECT b, coalesce(lead(b) OVER (ORDER BY b), stop), coalesce((SELECT sum(n) FROM counted c WHERE c.lower_name = b), 0)
          FROM unnest(bounds) AS b
      ON CONFLICT (lower_name) DO UPDATE SET upper_name = EXCLUDED.upper_name, n = EXCLUDED.n;
    END $$`);

  await knex.raw(countInsertedUsers);
  await knex.raw(countDeletedUsers);
  await knex.raw(uncountTruncatedUsers);
  await knex.raw(`
    CREATE FUNCTION cairn_refuse_user_rename() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'storage_users.username never changes (user name counters depend on it)'
        USING ERRCODE = 'feature_not_supported';
    END $$`);
  await knex.raw(`CREATE TRIGGER storage_users_name_counted_on_insert AFTER INSERT ON storage_users
    REFERENCING NEW TABLE AS inserted_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_name_count_inserted_users()`);
  await knex.raw(`CREATE TRIGGER storage_users_name_counted_on_delete AFTER DELETE ON storage_users
    REFERENCING OLD TABLE AS deleted_users FOR EACH STATEMENT EXECUTE FUNCTION cairn_name_count_deleted_users()`);
  await knex.raw(`CREATE TRIGGER storage_users_name_uncounted_on_truncate AFTER TRUNCATE ON storage_users
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_name_uncount_truncated_users()`);
  await knex.raw(`CREATE TRIGGER storage_users_never_renamed BEFORE UPDATE OF username ON storage_users
    FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username) EXECUTE FUNCTION cairn_refuse_user_rename()`);

  // Backfill: one range holding everyone, then cut like any oversized range.
  await knex.raw(
    `INSERT INTO storage_user_name_ranges (lower_name, upper_name, n) SELECT '', NULL, count(*) FROM storage_users`,
  );
  await knex.raw(
    `INSERT INTO storage_user_name_buckets (cluster_id, lower_name, n) SELECT cluster_id, '', count(*) FROM storage_users GROUP BY 1`,
  );
  await knex.raw(
    `SELECT cairn_cut_name_range('') FROM storage_user_name_ranges, storage_user_name_bucket_settings WHERE n > 2 * target_size`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE storage_users IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw('DROP TRIGGER storage_users_never_renamed ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_name_uncounted_on_truncate ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_name_counted_on_delete ON storage_users');
  await knex.raw('DROP TRIGGER storage_users_name_counted_on_insert ON storage_users');
  await knex.raw('DROP FUNCTION cairn_refuse_user_rename()');
  await knex.raw('DROP FUNCTION cairn_name_uncount_truncated_users()');
  await knex.raw('DROP FUNCTION cairn_name_count_deleted_users()');
  await knex.raw('DROP FUNCTION cairn_name_count_inserted_users()');
  await knex.raw('DROP FUNCTION cairn_cut_name_range(varchar)');
  await knex.raw('DROP TABLE storage_user_name_buckets');
  await knex.raw('DROP TABLE storage_user_name_ranges');
  await knex.raw('DROP TABLE storage_user_name_bucket_settings');
  await knex.raw('ALTER TABLE storage_users ALTER COLUMN username TYPE varchar(255) COLLATE "default"');
  await knex.raw('CREATE INDEX storage_users_username_idx ON storage_users (username text_pattern_ops)');
}
