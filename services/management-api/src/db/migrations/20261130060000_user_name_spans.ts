import type { Knex } from 'knex';
import {
  assigned,
  bigRanges,
  countDeletedUsers,
  countInsertedUsers,
  deletedPerCluster,
  insertedPerCluster,
  lockCovering,
  lockRanges,
  perRange,
  uncountTruncatedUsers,
} from './20261124020000_user_name_buckets';

/**
 * Counters over spans of consecutive name ranges (storage_user_name_ranges, migration
 * 20261124020000_user_name_buckets), over all clusters, as storage_user_id_spans are over the id
 * buckets: an unrestricted deep page ordered by name sums the spans to find the one its offset
 * falls in and then only that span's ranges, and the total of a prefix sums the spans inside it
 * and the ranges of the two it cuts, instead of every range (2,450 at 10,000,000 users, growing
 * with the table; about 40 spans and 2 × 64 ranges).
 *
 * - A span is [lower_name, upper_name) (upper NULL: no end; the first starts at ''), its bounds
 *   always lower ends of ranges: a range lies in one span, and is never deleted (a cut keeps it as
 *   its first piece), so a span's bounds stay range bounds. `n` is the sum of its ranges' counts.
 * - The same statement-level triggers keep them: a statement locks its ranges, then the spans
 *   covering the same names (both in name order, ranges first: one order for every writer, so no
 *   deadlock), adds its counts to both, cuts oversized ranges (a cut keeps a range's count, so its
 *   span's), and then cuts each of its spans holding more than twice `span_ranges` ranges into
 *   spans of `span_ranges`, summing their ranges' counts. Those sums are exact: every writer that
 *   changed a range of the span holds the span's lock until it commits.
 */
const SPAN_RANGES = 64;

/** The spans covering the statement's names, locked (after the ranges) and listed in `spans`. */
const lockSpans = lockCovering('storage_user_name_spans', 'spans');

/** Adds the counts (`counted`: rows of lower_name, n) to their ranges' spans. */
const perSpan = `
          UPDATE storage_user_name_spans s SET n = s.n + c.n
            FROM (SELECT spans[width_bucket(lower_name, spans)] AS lower_name, sum(n) AS n FROM counted GROUP BY 1) c
           WHERE s.lower_name = c.lower_name`;

const declarations = `
      lo varchar COLLATE "C";
      hi varchar COLLATE "C";
      cur varchar COLLATE "C";
      nxt varchar COLLATE "C";
      held varchar[] COLLATE "C";
      spans varchar[] COLLATE "C";
      big varchar COLLATE "C";
      cut boolean := false;`;

const countInsertedUsersInSpans = `
    CREATE OR REPLACE FUNCTION cairn_name_count_inserted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE${declarations}
    BEGIN
      ${lockRanges('inserted_users')}
      ${lockSpans}
      WITH counted AS (${assigned('inserted_users', '')}),
        per_cluster AS (${insertedPerCluster}),
        per_span AS (${perSpan})
      ${perRange}
      FOR big IN ${bigRanges}
      LOOP
        PERFORM cairn_cut_name_range(big);
        cut := true;
      END LOOP;
      IF cut THEN
        FOR big IN
          SELECT s.lower_name FROM storage_user_name_spans s
           WHERE s.lower_name = ANY (spans)
             AND (SELECT count(*) FROM storage_user_name_ranges r
                   WHERE r.lower_name >= s.lower_name AND (s.upper_name IS NULL OR r.lower_name < s.upper_name))
                 > 2 * (SELECT span_ranges FROM storage_user_name_bucket_settings)
        LOOP
          PERFORM cairn_cut_name_span(big);
        END LOOP;
      END IF;
      RETURN NULL;
    END $$`;

const countDeletedUsersInSpans = `
    CREATE OR REPLACE FUNCTION cairn_name_count_deleted_users() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE${declarations}
    BEGIN
      ${lockRanges('deleted_users')}
      ${lockSpans}
      WITH counted AS (${assigned('deleted_users', '-')}),
        per_cluster AS (${deletedPerCluster}),
        per_span AS (${perSpan})
      ${perRange}
      RETURN NULL;
    END $$`;

const uncountTruncatedUsersInSpans = `
    CREATE OR REPLACE FUNCTION cairn_name_uncount_truncated_users() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM storage_user_name_buckets;
      DELETE FROM storage_user_name_ranges;
      DELETE FROM storage_user_name_spans;
      INSERT INTO storage_user_name_ranges (lower_name, upper_name, n) VALUES ('', NULL, 0);
      INSERT INTO storage_user_name_spans (lower_name, upper_name, n) VALUES ('', NULL, 0);
      RETURN NULL;
    END $$`;

export async function up(knex: Knex): Promise<void> {
  // No write may slip in between the backfill below and the new trigger functions.
  await knex.raw('LOCK TABLE storage_users IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(
    `ALTER TABLE storage_user_name_bucket_settings
       ADD COLUMN span_ranges integer NOT NULL DEFAULT ${SPAN_RANGES} CHECK (span_ranges >= 1)`,
  );
  await knex.raw(`CREATE TABLE storage_user_name_spans (
      lower_name varchar(255) COLLATE "C" PRIMARY KEY,
      upper_name varchar(255) COLLATE "C",
      n bigint NOT NULL)`);
  // Cuts the span starting at `first_name` into spans of `span_ranges` ranges, each counting its
  // ranges. The caller holds the span's lock.
  await knex.raw(`
    CREATE FUNCTION cairn_cut_name_span(first_name varchar) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      start varchar COLLATE "C" := first_name;
      stop varchar COLLATE "C";
      size integer;
    BEGIN
      SELECT upper_name INTO stop FROM storage_user_name_spans WHERE lower_name = start;
      SELECT span_ranges INTO size FROM storage_user_name_bucket_settings;
      -- The first piece keeps the span's row (updated, not replaced), so a statement waiting for
      -- its lock gets it, and then finds the span shorter.
      WITH numbered AS (
          SELECT lower_name, n, (row_number() OVER (ORDER BY lower_name) - 1) / size AS piece
            FROM storage_user_name_ranges WHERE lower_name >= start AND (stop IS NULL OR lower_name < stop)
        ),
        pieces AS (SELECT min(lower_name) AS lower_name, sum(n) AS n FROM numbered GROUP BY piece)
      INSERT INTO storage_user_name_spans (lower_name, upper_name, n)
        SELECT lower_name, coalesce(lead(lower_name) OVER (ORDER BY lower_name), stop), n FROM pieces
      ON CONFLICT (lower_name) DO UPDATE SET upper_name = EXCLUDED.upper_name, n = EXCLUDED.n;
    END $$`);
  await knex.raw(countInsertedUsersInSpans);
  await knex.raw(countDeletedUsersInSpans);
  await knex.raw(uncountTruncatedUsersInSpans);
  // Backfill: one span over every range, then cut.
  await knex.raw(
    `INSERT INTO storage_user_name_spans (lower_name, upper_name, n) SELECT '', NULL, coalesce(sum(n), 0) FROM storage_user_name_ranges`,
  );
  await knex.raw(`SELECT cairn_cut_name_span('')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE storage_users IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(countInsertedUsers);
  await knex.raw(countDeletedUsers);
  await knex.raw(uncountTruncatedUsers);
  await knex.raw('DROP FUNCTION cairn_cut_name_span(varchar)');
  await knex.raw('DROP TABLE storage_user_name_spans');
  await knex.raw('ALTER TABLE storage_user_name_bucket_settings DROP COLUMN span_ranges');
}
